/**
 * Settings (docs/architecture.md#settings-and-profiles): read from the environment, an optional `.env` in the working
 * directory and the settings file Navi owns (`<NAVI_DATA_DIR>/settings.json`, the LLM settings
 * the web client saves; see owned-settings.ts), in that order of precedence, validated into one
 * typed, frozen object. An invalid value stops start-up with a message that names the variable
 * and what it accepts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { placeDataFiles } from './data-location.js';
import { ownedSettingsPath, readOwnedSettings } from './owned-settings.js';
import { parsePrivatePolicy } from './private-policy.js';

const bool = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'].includes(v), {
    message: 'accepts true or false (also 1/0, yes/no, on/off)',
  })
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));

const int = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, { message: `accepts a whole number from ${min} to ${max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, { message: `must be at least ${min}` })
        .max(max, { message: `must be at most ${max}` }),
    );

const num = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+(\.\d+)?$/, { message: `accepts a number from ${min} to ${max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { message: `must be at least ${min}` })
        .max(max, { message: `must be at most ${max}` }),
    );

const httpUrl = z
  .string()
  .trim()
  .refine(
    (v) => {
      try {
        const u = new URL(v);
        return u.protocol === 'http:' || u.protocol === 'https:';
      } catch {
        return false;
      }
    },
    { message: 'accepts an http:// or https:// URL' },
  )
  .transform((v) => v.replace(/\/+$/, ''));

const text = z.string();
const nonEmpty = z.string().trim().min(1, { message: 'must not be empty' });
const list = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0),
);

/** An http(s) URL, or empty for "not set". */
const optionalHttpUrl = z
  .string()
  .trim()
  .refine((v) => v === '' || httpUrl.safeParse(v).success, {
    message: 'accepts an http:// or https:// URL, or nothing to leave it unset',
  })
  .transform((v) => v.replace(/\/+$/, ''));

const privatePolicy = z.string().transform((v, ctx) => {
  try {
    return parsePrivatePolicy(v);
  } catch (err) {
    ctx.addIssue({
      code: 'custom',
      message: `${(err as Error).message}; accepts true, false, or a comma-separated list of hosts and CIDR ranges`,
    });
    return z.NEVER;
  }
});

const SEARCH_PROVIDERS = ['searxng', 'duckduckgo', 'brave'] as const;
export type SearchProviderName = (typeof SEARCH_PROVIDERS)[number];
const providerList = list.pipe(
  z
    .array(
      z.enum(SEARCH_PROVIDERS, {
        message: `accepts a comma-separated list of ${SEARCH_PROVIDERS.join(', ')}`,
      }),
    )
    .min(1, { message: `needs at least one of ${SEARCH_PROVIDERS.join(', ')}` }),
);

const logLevel = z
  .string()
  .trim()
  .toUpperCase()
  .refine((v) => ['DEBUG', 'INFO', 'WARNING', 'WARN', 'ERROR'].includes(v), {
    message: 'accepts DEBUG, INFO, WARNING or ERROR',
  })
  .transform((v) => (v === 'WARN' ? 'WARNING' : v) as 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR');

const oneOf = <T extends string>(values: readonly [T, ...T[]]) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => (values as readonly string[]).includes(v), { message: `accepts ${values.join(', ')}` })
    .transform((v) => v as T);

/**
 * Marks a setting whose value is a credential. Its value is masked in every tool result and log
 * line, and the variable is removed from Navi's own environment once settings are read, so no
 * child process inherits it (see `src/config/secret-env.ts`).
 */
const secret = 'secret' as const;

/**
 * Every variable, its default (as the environment would spell it), its parser and, for
 * credentials, the `secret` marker.
 */
const variables = {
  NAVI_HOST: [nonEmpty, '127.0.0.1'],
  NAVI_PORT: [int(0, 65535), '8000'],
  NAVI_API_TOKEN: [text, '', secret],
  NAVI_ALLOWED_ORIGINS: [list, ''],
  DEFAULT_LLM_BACKEND: [oneOf(['ollama', 'openai', 'llamacpp'] as const), 'ollama'],
  OLLAMA_HOST: [httpUrl, 'http://localhost:11434'],
  OLLAMA_DEFAULT_MODEL: [nonEmpty, 'gemma4:e2b-it-q8_0'],
  OLLAMA_NUM_CTX: [int(512, 10_000_000), '65536'],
  OLLAMA_THINK: [bool, 'true'],
  OPENAI_BASE_URL: [httpUrl, 'https://api.openai.com/v1'],
  OPENAI_API_KEY: [text, '', secret],
  OPENAI_MODEL: [nonEmpty, 'gpt-4o-mini'],
  OPENAI_NUM_CTX: [int(512, 10_000_000), '128000'],
  // The embedded llama.cpp backend (docs/local-models.md): a GGUF path, or the name of a model
  // in the models folder (empty: the first one there); the context it may use at most (clamped
  // further to what the model and the machine allow); CPU threads (0: node-llama-cpp decides);
  // whether to use a GPU when the runtime has a build for one.
  LLAMACPP_MODEL_PATH: [text, ''],
  LLAMACPP_NUM_CTX: [int(256, 10_000_000), '16384'],
  LLAMACPP_THREADS: [int(0, 1024), '0'],
  LLAMACPP_GPU: [oneOf(['auto', 'off'] as const), 'auto'],
  // Where Navi keeps what it owns: downloaded models, the llama.cpp runtime, the settings the
  // web client saves. Empty: $XDG_DATA_HOME/navi, else ~/.local/share/navi. The two folders
  // below default to `models` and `runtime` inside it.
  NAVI_DATA_DIR: [text, ''],
  NAVI_MODELS_DIR: [text, ''],
  LLAMACPP_RUNTIME_DIR: [text, ''],
  // Share of a model's context window the tool list offered to it may take (docs/local-models.md).
  TOOL_BUDGET_RATIO: [num(0.01, 1), '0.25'],
  // Flag answers that claim an action no tool call of the turn performed.
  CLAIM_CHECK_ENABLED: [bool, 'true'],
  LLM_CONNECT_TIMEOUT_MS: [int(100, 600_000), '10000'],
  LLM_IDLE_TIMEOUT_MS: [int(100, 3_600_000), '300000'],
  // The data files (DB_PATH, SESSION_FILES_DIR and the vault's GNEXUS_* paths): left unset, the
  // `navi` command puts each in the data folder, or keeps it in the working folder of an install
  // from before the data folder (data-location.ts); these defaults are their names there.
  DB_PATH: [nonEmpty, 'navi.db'],
  // A database URL may carry a password (postgres://user:password@host/db).
  DATABASE_URL: [text, '', secret],
  LOG_LEVEL: [logLevel, 'INFO'],
  LOG_FORMAT: [oneOf(['auto', 'json', 'pretty'] as const), 'auto'],
  TOOLS_DIR: [nonEmpty, 'tools'],
  CONTEXT_PROVIDERS_DIR: [nonEmpty, 'context_providers'],
  MCP_SERVERS_DIR: [nonEmpty, 'mcp_servers.d'],
  MCP_SCAFFOLD_DIR: [nonEmpty, 'mcp-servers'],
  MANUALS_DIR: [nonEmpty, 'manuals'],
  PROFILES_DIR: [nonEmpty, 'profiles'],
  DEFAULT_PROFILE: [nonEmpty, 'secretary'],
  SESSION_FILES_DIR: [nonEmpty, 'session_files'],
  SESSION_FILES_MAX_SIZE_MB: [int(1, 100_000), '200'],
  SESSION_FILES_TTL_HOURS: [num(0.001, 100_000), '24'],
  FS_ALLOWED_PATHS: [list, '*'],
  TERMINAL_ALLOWED_COMMANDS: [list, '*'],
  SSH_HOSTS_FILE: [nonEmpty, 'ssh_hosts.json'],
  NAVI_PERSONA: [text, ''],
  NAVI_PERSONA_FILE: [text, ''],
  CONTEXT_COMPRESSION_ENABLED: [bool, 'true'],
  CONTEXT_COMPRESSION_THRESHOLD: [num(0.05, 1), '0.80'],
  CONTEXT_KEEP_RECENT: [int(1, 10_000), '10'],
  CONTEXT_SUMMARY_TEMPERATURE: [num(0, 2), '0.3'],
  TOOL_TIMEOUT_MS: [int(100, 86_400_000), '120000'],
  TOOL_MAX_OUTPUT_CHARS: [int(100, 100_000_000), '50000'],
  TOOL_CONFIRM_TIMEOUT_MS: [int(100, 86_400_000), '300000'],
  SUBAGENT_MAX_DEPTH: [int(0, 10), '1'],
  NAVI_SANDBOX: [oneOf(['auto', 'required', 'off'] as const), 'auto'],
  HTTP_ALLOW_PRIVATE: [privatePolicy, 'false'],
  // Servers shipped with Navi (navi-web…), started beside the user's MCP servers.
  MCP_SHIPPED_SERVERS: [bool, 'true'],
  SEARXNG_URL: [optionalHttpUrl, ''],
  WEB_SEARCH_PROVIDERS: [providerList, 'searxng,duckduckgo,brave'],
  DUCKDUCKGO_URL: [httpUrl, 'https://html.duckduckgo.com/html/'],
  BRAVE_SEARCH_URL: [httpUrl, 'https://api.search.brave.com/res/v1/web/search'],
  BRAVE_API_KEY: [text, '', secret],
  CHROMIUM_PATH: [text, ''],
  WEB_VIEW_TIMEOUT_MS: [int(1000, 600_000), '30000'],
  WEB_BROWSER_IDLE_MS: [int(1000, 86_400_000), '60000'],
  WEB_MAX_RESPONSE_BYTES: [int(1024, 1_000_000_000), '5000000'],
  // The navi-3d server (docs/3d.md): the OpenSCAD and Xvfb programs it runs (a name on PATH or
  // a path), how long one compile or render call may take before OpenSCAD is killed, and how
  // many OpenSCAD processes may run at once across all sessions (the others wait their turn).
  OPENSCAD_PATH: [nonEmpty, 'openscad'],
  XVFB_PATH: [nonEmpty, 'Xvfb'],
  OPENSCAD_TIMEOUT_MS: [int(500, 3_600_000), '100000'],
  OPENSCAD_MAX_RUNNING: [int(1, 64), '2'],
  MEMORY_EXTRACTION_IDLE_MINUTES: [num(0, 1_000_000), '30'],
  // Recalls: how many may wait per session, and how long a chain of recalls scheduled by
  // recall runs may grow before scheduling from a recall is refused.
  RECALL_MAX_PER_SESSION: [int(1, 10_000), '20'],
  RECALL_MAX_CHAIN: [int(1, 1000), '5'],
  // On PostgreSQL, how often each process re-reads the recalls (other processes schedule and
  // cancel them too); 0 never. SQLite has one process and ignores it. Each read is two queries,
  // so a value near 0 other than 0 itself (0.001 would be thousands a second) is refused.
  RECALL_POLL_SECONDS: [
    num(0, 86_400).refine((v) => v === 0 || v >= 0.1, { message: 'is 0 (never) or at least 0.1' }),
    '15',
  ],
  // Background processes started by the `process` tool: how many run at once in all, and how
  // much of each one's output is kept.
  PROCESS_MAX_RUNNING: [int(1, 1000), '5'],
  PROCESS_OUTPUT_MAX_BYTES: [int(1024, 100_000_000), '1000000'],
  // The weather user tool (Open-Meteo, no key); units `auto` follow the locale.
  WEATHER_GEOCODING_URL: [httpUrl, 'https://geocoding-api.open-meteo.com/v1/search'],
  WEATHER_FORECAST_URL: [httpUrl, 'https://api.open-meteo.com/v1/forecast'],
  WEATHER_UNITS: [oneOf(['auto', 'metric', 'imperial'] as const), 'auto'],
  // The gmail user tool: IMAP and SMTP with an app password (Gmail's hosts by default, any
  // mail server through these settings).
  GMAIL_ADDRESS: [text, ''],
  GMAIL_APP_PASSWORD: [text, '', secret],
  GMAIL_IMAP_HOST: [nonEmpty, 'imap.gmail.com'],
  GMAIL_IMAP_PORT: [int(1, 65535), '993'],
  GMAIL_IMAP_TLS: [bool, 'true'],
  GMAIL_SMTP_HOST: [nonEmpty, 'smtp.gmail.com'],
  GMAIL_SMTP_PORT: [int(1, 65535), '465'],
  GMAIL_SMTP_TLS: [bool, 'true'],
  GMAIL_TIMEOUT_MS: [int(1000, 600_000), '30000'],
  // The secrets vault (docs/vault.md): the key that unlocks it (else the key file), its
  // database and its audit log.
  GNEXUS_MASTER_KEY: [text, '', secret],
  GNEXUS_KEY_FILE: [nonEmpty, 'vault.key'],
  GNEXUS_VAULT_PATH: [nonEmpty, 'vault.db'],
  GNEXUS_AUDIT_LOG: [nonEmpty, 'vault-audit.jsonl'],
} as const;

type Variables = typeof variables;
export type Settings = Readonly<{ [K in keyof Variables]: z.output<Variables[K][0]> }>;
export type SettingName = keyof Variables;

/** The names of the settings marked `secret` (credentials). */
export type SecretSettingName = {
  [K in SettingName]: Variables[K] extends readonly [unknown, unknown, typeof secret] ? K : never;
}[SettingName];

/** Every setting marked `secret`, in table order. */
export const SECRET_SETTINGS: readonly SecretSettingName[] = Object.entries(variables)
  .filter(([, definition]) => (definition as readonly unknown[])[2] === secret)
  .map(([name]) => name as SecretSettingName);

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

/** Reads `.env` from `cwd` if present; variables already in the environment win. */
export function readDotEnv(cwd: string): Record<string, string> {
  const file = resolve(cwd, '.env');
  if (!existsSync(file)) return {};
  return parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
}

/** Where a setting's value came from; `environment` and `dotenv` win over the settings file. */
export type SettingOrigin = 'environment' | 'dotenv' | 'file' | 'default';

// Kept on the frozen settings object itself (not enumerable, so spreads and equality ignore it):
// the server needs to know which LLM settings the client may not change.
const ORIGINS = Symbol('navi.settingOrigins');

/**
 * Where each setting of `settings` came from, as `loadSettings` (or `withSettings`) recorded it;
 * empty for settings built some other way.
 */
export function settingOrigins(settings: Settings): Readonly<Partial<Record<SettingName, SettingOrigin>>> {
  return (
    (settings as unknown as Record<symbol, Partial<Record<SettingName, SettingOrigin>> | undefined>)[
      ORIGINS
    ] ?? {}
  );
}

function freezeWithOrigins(
  out: Record<string, unknown>,
  origins: Partial<Record<SettingName, SettingOrigin>>,
): Settings {
  Object.defineProperty(out, ORIGINS, { value: Object.freeze({ ...origins }), enumerable: false });
  return Object.freeze(out) as Settings;
}

const isBlank = (v: string | undefined): boolean => v === undefined || v.trim() === '';

/**
 * Parses one setting as the environment would spell it (`raw` undefined or blank: its default).
 * `value` is what `Settings` holds; `problem` names the variable, the value and what it accepts.
 */
export function parseSetting(
  name: SettingName,
  raw: string | undefined,
): { ok: true; value: unknown } | { ok: false; problem: string } {
  const [schema, fallback] = variables[name];
  const value = raw === undefined || (raw.trim() === '' && fallback !== '') ? fallback : raw;
  const parsed = (schema as z.ZodType).safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    problem: `${name}=${JSON.stringify(raw)}: ${parsed.error.issues.map((i) => i.message).join('; ')}`,
  };
}

export interface LoadOptions {
  /**
   * Read the settings file Navi owns, `<NAVI_DATA_DIR>/settings.json`. Default: when `cwd` is
   * given (the `navi` command); a bare `loadSettings(env)` (a shipped MCP server, a unit test)
   * never reads the person's file.
   */
  settingsFile?: boolean;
  /**
   * Place the data files left unset (data-location.ts) in the data folder, or in `cwd` for an
   * older install. Default: when `cwd` is given; otherwise they stay names relative to the
   * process's working folder.
   */
  dataFiles?: boolean;
}

/**
 * Validates `env` (merged over `.env` when `cwd` is given, and over the settings file Navi owns,
 * see `LoadOptions`) into `Settings`. A setting left unset or blank by the environment and `.env`
 * takes the file's value. Throws `SettingsError` listing every bad variable with what it
 * accepts, and every problem of the settings file.
 */
export function loadSettings(
  env: Record<string, string | undefined> = process.env,
  cwd?: string,
  options: LoadOptions = {},
): Settings {
  const dotenv = cwd ? readDotEnv(cwd) : {};
  const merged: Record<string, string | undefined> = { ...dotenv, ...env };
  const dataDir = merged.NAVI_DATA_DIR || defaultDataDir(merged);
  const problems: string[] = [];
  const file: Record<string, string | undefined> = {};
  let filePath = '';
  if (options.settingsFile ?? cwd !== undefined) {
    filePath = ownedSettingsPath(dataDir);
    const read = readOwnedSettings(filePath);
    Object.assign(file, read.values);
    problems.push(...read.problems);
  }
  const out: Record<string, unknown> = {};
  const origins: Partial<Record<SettingName, SettingOrigin>> = {};
  for (const name of Object.keys(variables) as SettingName[]) {
    let raw = merged[name];
    let origin: SettingOrigin = isBlank(raw) ? 'default' : env[name] !== undefined ? 'environment' : 'dotenv';
    if (origin === 'default' && !isBlank(file[name])) {
      raw = file[name];
      origin = 'file';
    }
    origins[name] = origin;
    const parsed = parseSetting(name, raw);
    if (parsed.ok) out[name] = parsed.value;
    else problems.push(origin === 'file' ? `${parsed.problem} (saved in ${filePath})` : parsed.problem);
  }
  if (problems.length > 0) throw new SettingsError(problems);
  // Folders whose defaults live inside the data folder.
  out.NAVI_DATA_DIR = dataDir;
  out.NAVI_MODELS_DIR ||= join(dataDir, 'models');
  out.LLAMACPP_RUNTIME_DIR ||= join(dataDir, 'runtime');
  if (options.dataFiles ?? cwd !== undefined)
    placeDataFiles(out, (name) => origins[name] === 'default', dataDir, cwd ?? process.cwd());
  return freezeWithOrigins(out, origins);
}

/**
 * `settings` with `changes` applied (raw values as the environment spells them; `null`: back to
 * the default) and recorded as coming from `origin`. Throws `SettingsError` naming each bad one.
 */
export function withSettings(
  settings: Settings,
  changes: Partial<Record<SettingName, string | null>>,
  origin: SettingOrigin,
): Settings {
  const out: Record<string, unknown> = { ...settings };
  const origins = { ...settingOrigins(settings) };
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(changes) as [SettingName, string | null][]) {
    const parsed = parseSetting(name, raw ?? undefined);
    if (!parsed.ok) {
      problems.push(parsed.problem);
      continue;
    }
    out[name] = parsed.value;
    origins[name] = raw === null || isBlank(raw) ? 'default' : origin;
  }
  if (problems.length > 0) throw new SettingsError(problems);
  return freezeWithOrigins(out, origins);
}

/** `$XDG_DATA_HOME/navi`, else `~/.local/share/navi` (HOME from `env`, else the user's). */
export function defaultDataDir(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_DATA_HOME?.trim();
  if (xdg) return join(xdg, 'navi');
  return join(env.HOME?.trim() || homedir(), '.local', 'share', 'navi');
}

/**
 * A setting's value spelt as the environment would spell it, so it can be handed to a child
 * process that reads its settings with `loadSettings` (the shipped MCP servers).
 */
export function settingText(settings: Settings, name: SettingName): string {
  const value: unknown = settings[name];
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object' && value !== null && 'kind' in value) {
    const policy = value as Settings['HTTP_ALLOW_PRIVATE'];
    return policy.kind === 'list' ? policy.text : String(policy.kind === 'all');
  }
  return String(value);
}

export function isSettingName(name: string): name is SettingName {
  return Object.hasOwn(variables, name);
}

/**
 * Settings for tests: defaults plus overrides, no `.env`, no process environment. The shipped
 * MCP servers stay off unless a test asks for them: starting Chromium-capable servers for every
 * test server would only slow the suite.
 */
export function testSettings(overrides: Partial<Record<SettingName, string>> = {}): Settings {
  // Never the person's own data folder: a test that forgets to name one writes under /tmp.
  const dataDir = join(tmpdir(), `navi-test-data-${process.pid}`);
  // The data folder is always a test's own, so its settings file is read (a restarted test
  // server finds what the client saved).
  return loadSettings({ MCP_SHIPPED_SERVERS: 'false', NAVI_DATA_DIR: dataDir, ...overrides }, undefined, {
    settingsFile: true,
  });
}

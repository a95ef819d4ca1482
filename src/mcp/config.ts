/**
 * MCP server configuration (docs/mcp.md#configuration): one JSON file per server in MCP_SERVERS_DIR, either
 * stdio (`command`, `args`, `env`, `cwd`) or Streamable HTTP (`url`, `headers`). Each file is
 * validated on its own; a bad file is reported with its name and reason and the others load.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { z } from 'zod';
import { isSecretVariable } from '../config/secret-env.js';
import { serverKey } from './naming.js';
import { DEFAULT_MAX_MESSAGE_BYTES, type McpConfigError, type McpServerConfig } from './types.js';

const groups = [
  'fs',
  'runtime',
  'web',
  'memory',
  'session',
  'agents',
  'meta',
  'schedule',
  'secrets',
] as const;

const common = {
  name: z
    .string()
    .trim()
    .min(1, { message: 'must not be empty' })
    .max(48, { message: 'must be at most 48 characters' })
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
      message: 'may hold letters, digits, "_", "-" and "." and must start with a letter or digit',
    }),
  enabled: z.boolean().default(true),
  description: z.string().optional(),
  group: z.enum(groups).optional(),
  timeout_ms: z.number().int().min(100).optional(),
  max_message_bytes: z.number().int().min(1024).optional(),
  created_by: z.enum(['agent', 'user']).optional(),
  approved_command: z.string().optional(),
  confirm_tools: z
    .array(
      z
        .string()
        .trim()
        .min(1, { message: 'a tool name must not be empty' })
        .max(128, { message: 'a tool name is at most 128 characters' }),
    )
    .max(200, { message: 'lists at most 200 tools' })
    .optional(),
  transport: z.enum(['stdio', 'http', 'streamable-http', 'streamable_http']).optional(),
  $schema: z.string().optional(),
  $comment: z.string().optional(),
};

const stringMap = z.record(z.string(), z.string());

const stdioSchema = z
  .object({
    ...common,
    command: z.string().trim().min(1, { message: 'must not be empty' }),
    args: z.array(z.string()).default([]),
    env: stringMap.default({}),
    cwd: z.string().trim().min(1).optional(),
  })
  .strict();

const oauthText = (what: string, max: number) =>
  z
    .string({ message: `must be a string (${what})` })
    .trim()
    .min(1, { message: `must not be empty (${what}); leave the field out instead` })
    .max(max, { message: `must be at most ${max} characters (${what})` });

/** How Navi identifies itself to the server's authorisation server (docs/mcp.md#oauth). */
const oauthSchema = z
  .object({
    client_id: oauthText('a client id registered with the authorisation server', 512).optional(),
    client_secret: oauthText('its secret, or a vault reference {{secret:<id>.<field>}}', 2048).optional(),
    scope: oauthText('space-separated scopes', 1024).optional(),
    client_metadata_url: oauthText("the https URL of Navi's client-ID metadata document", 2048)
      .refine((v) => safeProtocol(v) === 'https:' && new URL(v).pathname !== '/', {
        message: 'accepts an https:// URL with a path (where the client-ID metadata document is published)',
      })
      .optional(),
  })
  .strict()
  .refine((o) => o.client_secret === undefined || o.client_id !== undefined, {
    message: 'client_secret needs the client_id it belongs to',
  });

const httpSchema = z
  .object({
    ...common,
    url: z
      .string()
      .trim()
      .refine((v) => /^https?:$/.test(safeProtocol(v)), { message: 'accepts an http:// or https:// URL' }),
    headers: stringMap.default({}),
    oauth: oauthSchema.optional(),
  })
  .strict();

function safeProtocol(url: string): string {
  try {
    return new URL(url).protocol;
  } catch {
    return '';
  }
}

export interface ParseOptions {
  /**
   * Values of `${NAME}` placeholders. Only the configs shipped with Navi use them (the
   * program's folder, Node, Navi's settings); a user's config is taken literally.
   */
  placeholders?: (name: string) => string | undefined;
}

function expand(value: string, lookup: (name: string) => string | undefined): string {
  return value.replace(/\$\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    const found = lookup(name);
    if (found === undefined) throw new Error(`unknown placeholder \${${name}}`);
    return found;
  });
}

/** Fills the placeholders of the launch fields; an environment variable left empty is dropped. */
function expandPlaceholders(
  raw: Record<string, unknown>,
  lookup: (name: string) => string | undefined,
): void {
  const text = (v: unknown) => (typeof v === 'string' ? expand(v, lookup) : v);
  for (const key of ['command', 'cwd', 'url'] as const) if (key in raw) raw[key] = text(raw[key]);
  if (Array.isArray(raw.args)) raw.args = raw.args.map(text);
  for (const key of ['env', 'headers'] as const) {
    const map = raw[key];
    if (typeof map !== 'object' || map === null || Array.isArray(map)) continue;
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(map)) {
      const expanded = text(value);
      if (expanded !== '') out[name] = expanded;
    }
    raw[key] = out;
  }
}

/** Parses one file's text; throws an Error whose message says what is wrong. */
export function parseServerConfig(text: string, file: string, options: ParseOptions = {}): McpServerConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('must be a JSON object');
  if (options.placeholders) expandPlaceholders(raw as Record<string, unknown>, options.placeholders);
  const hasCommand = 'command' in raw;
  const hasUrl = 'url' in raw;
  if (hasCommand && hasUrl) throw new Error('has both "command" (stdio) and "url" (http); keep one');
  if (!hasCommand && !hasUrl)
    throw new Error('needs "command" (a stdio server) or "url" (a Streamable HTTP server)');
  const parsed = (hasCommand ? stdioSchema : httpSchema).safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      parsed.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`).join('; '),
    );
  }
  const c = parsed.data;
  const base = {
    name: c.name,
    key: serverKey(c.name),
    file,
    enabled: c.enabled,
    maxMessageBytes: c.max_message_bytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    createdBy: c.created_by ?? 'user',
    shipped: options.placeholders !== undefined,
    ...(c.description !== undefined && { description: c.description }),
    ...(c.group !== undefined && { group: c.group }),
    ...(c.timeout_ms !== undefined && { timeoutMs: c.timeout_ms }),
    ...(c.approved_command !== undefined && { approvedCommand: c.approved_command }),
    ...(c.confirm_tools !== undefined && { confirmTools: c.confirm_tools }),
  };
  if ('command' in c) {
    return {
      ...base,
      transport: 'stdio',
      command: c.command,
      args: c.args,
      env: c.env,
      ...(c.cwd !== undefined && { cwd: resolve(c.cwd) }),
    };
  }
  const oauth = c.oauth && {
    ...(c.oauth.client_id !== undefined && { clientId: c.oauth.client_id }),
    ...(c.oauth.client_secret !== undefined && { clientSecret: c.oauth.client_secret }),
    ...(c.oauth.scope !== undefined && { scope: c.oauth.scope }),
    ...(c.oauth.client_metadata_url !== undefined && { clientMetadataUrl: c.oauth.client_metadata_url }),
  };
  return { ...base, transport: 'http', url: c.url, headers: c.headers, ...(oauth && { oauth }) };
}

/** Reads every `*.json` of `dir` (a missing folder holds no servers). Names must be unique. */
export async function loadServerConfigs(
  dir: string,
  options: ParseOptions = {},
): Promise<{ configs: McpServerConfig[]; errors: McpConfigError[] }> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { configs: [], errors: [] };
    throw err;
  }
  const configs: McpServerConfig[] = [];
  const errors: McpConfigError[] = [];
  const keys = new Map<string, string>();
  for (const name of names) {
    const file = resolve(join(dir, name));
    try {
      const config = parseServerConfig(await readFile(file, 'utf8'), file, options);
      const clash = keys.get(config.key);
      if (clash) throw new Error(`server name "${config.name}" is already used by ${clash}`);
      keys.set(config.key, name);
      configs.push(config);
    } catch (err) {
      errors.push({ file: basename(file), error: err instanceof Error ? err.message : String(err) });
    }
  }
  return { configs, errors };
}

function quote(word: string): string {
  return /^[A-Za-z0-9_/.,:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The exact launch of a server as one shell-style line: working directory, environment (with
 * credentials' values hidden), command and arguments (stdio), or the URL (http). This is what
 * the user approves.
 */
export function launchLine(config: McpServerConfig): string {
  if (config.transport === 'http') {
    const headers = Object.keys(config.headers);
    return `Streamable HTTP ${config.url}${headers.length ? ` (headers: ${headers.join(', ')})` : ''}`;
  }
  // The line is shown (mcp_status, GET /agents/mcp, navi doctor, the approval prompt): a
  // credential's value never is. The user still sees which variables the server receives.
  const env = Object.entries(config.env).map(
    ([k, v]) => `${k}=${isSecretVariable(k) ? '[secret]' : quote(v)}`,
  );
  const run = [...env, quote(config.command), ...config.args.map(quote)].join(' ');
  return config.cwd ? `cd ${quote(config.cwd)} && ${run}` : run;
}

/** True for agent-written configs whose current launch line the user has not approved. */
export function needsApproval(config: McpServerConfig): boolean {
  return config.createdBy === 'agent' && config.approvedCommand !== launchLine(config);
}

/** Records the user's approval in the config file: enables it and stores the approved line. */
export async function writeApproval(config: McpServerConfig): Promise<void> {
  const raw = JSON.parse(await readFile(config.file, 'utf8')) as Record<string, unknown>;
  raw.enabled = true;
  raw.approved_command = launchLine(config);
  await writeFile(config.file, `${JSON.stringify(raw, null, 2)}\n`);
}

/** Whether two configs start the same server (the file path does not matter). */
export function sameLaunch(a: McpServerConfig, b: McpServerConfig): boolean {
  return JSON.stringify({ ...a, file: '' }) === JSON.stringify({ ...b, file: '' });
}

/**
 * The settings file Navi owns, `<NAVI_DATA_DIR>/settings.json` (docs/local-models.md#first-run):
 * the LLM settings the web client saves (`PUT /llm/settings`). It is a layer under the
 * environment and `.env`, which always win, and over the defaults. It may hold an API key, so it
 * is written with mode 0600, and atomically (a temporary file renamed over it), so a crash never
 * leaves half a file behind.
 *
 * A file that cannot be read, is not JSON, or names a setting it may not hold stops Navi like
 * any other bad setting: the problem names the file and what to do. Silently ignoring it would
 * bring Navi up on another backend than the one the person chose, with nothing saying why.
 */
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { LlmSettingName } from '../protocol/llm.js';

/** The settings the file may hold: the client's LLM settings, nothing else. */
export const OWNED_SETTINGS: readonly LlmSettingName[] = [
  'DEFAULT_LLM_BACKEND',
  'OLLAMA_HOST',
  'OLLAMA_DEFAULT_MODEL',
  'OPENAI_BASE_URL',
  'OPENAI_API_KEY',
  'OPENAI_MODEL',
  'LLAMACPP_MODEL_PATH',
];

export function isOwnedSetting(name: string): name is LlmSettingName {
  return (OWNED_SETTINGS as readonly string[]).includes(name);
}

/** The file holds a few short strings; anything much larger is not a file Navi wrote. */
const MAX_FILE_BYTES = 256 * 1024;

export type OwnedValues = Partial<Record<LlmSettingName, string>>;

export function ownedSettingsPath(dataDir: string): string {
  return join(dataDir, 'settings.json');
}

/**
 * The values saved in `path` (none when the file does not exist) and what is wrong with it,
 * one sentence per problem naming the file and what to do.
 */
export function readOwnedSettings(path: string): { values: OwnedValues; problems: string[] } {
  const fix = 'fix it, or delete it and choose the settings again in the web client';
  let text: string;
  try {
    const buffer = readFileSync(path);
    if (buffer.length > MAX_FILE_BYTES) {
      return {
        values: {},
        problems: [`${path} is larger than ${MAX_FILE_BYTES} bytes, so Navi did not write it: ${fix}`],
      };
    }
    text = buffer.toString('utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { values: {}, problems: [] };
    return {
      values: {},
      problems: [
        `${path} cannot be read (${code ?? (err as Error).message}): check its permissions, or delete it`,
      ],
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { values: {}, problems: [`${path} is not valid JSON (${(err as Error).message}): ${fix}`] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return {
      values: {},
      problems: [`${path} must hold one JSON object of setting names and values: ${fix}`],
    };
  }
  const values: OwnedValues = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (!isOwnedSetting(name)) {
      problems.push(
        `${path} names ${JSON.stringify(name.slice(0, 64))}, which it may not hold (only ${OWNED_SETTINGS.join(', ')}): set it in the environment or .env, and remove it from the file`,
      );
    } else if (typeof value !== 'string') {
      problems.push(`${path}: ${name} must be a string (as the environment would spell it): ${fix}`);
    } else values[name] = value;
  }
  return { values, problems };
}

/**
 * Replaces the file with `values`: written to a temporary file in the same folder with mode
 * 0600, flushed, then renamed over the old one. Creates the data folder (0700) when missing.
 */
export function writeOwnedSettings(path: string, values: OwnedValues): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const sorted = Object.fromEntries(
    OWNED_SETTINGS.filter((n) => values[n] !== undefined).map((n) => [n, values[n]]),
  );
  const temp = join(dir, `.settings.json.${randomUUID()}.tmp`);
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(sorted, null, 2)}\n`);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

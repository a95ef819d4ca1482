/**
 * Shared pieces of the tool-system tests: a temporary tools folder that Node treats as ES
 * modules, a `ToolContext` whose `confirm` the test chooses, profiles and a capturing logger.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pino, { type Logger } from 'pino';
import { type Profile, profileSchema } from '../config/profiles.js';
import type { ConfirmAnswer, ConfirmRequest, ToolContext } from './types.js';

/** `import` specifier of src/tools/types.ts for tool files written into temporary folders. */
export const TYPES_URL = pathToFileURL(resolve(import.meta.dirname, 'types.ts')).href;

export function testProfile(overrides: Partial<Profile> = {}): Profile {
  return profileSchema.parse({ id: 'test', name: 'Test', ...overrides });
}

export interface TestContext extends ToolContext {
  /** Every confirmation request the executor made. */
  confirmRequests: ConfirmRequest[];
}

export function testContext(
  overrides: Partial<ToolContext> & { answer?: (req: ConfirmRequest) => Promise<ConfirmAnswer> } = {},
): TestContext {
  const { answer, ...rest } = overrides;
  const confirmRequests: ConfirmRequest[] = [];
  const ctx: TestContext = {
    sessionId: 's1',
    runId: 'r1',
    callId: 'c1',
    signal: new AbortController().signal,
    isSubagent: false,
    depth: 0,
    profileId: 'test',
    emit: () => {},
    confirm: async (req) => {
      confirmRequests.push(req);
      return answer ? answer(req) : { approved: false, reason: 'nobody is connected to approve it' };
    },
    log: pino({ level: 'silent' }),
    confirmRequests,
    ...rest,
  };
  return ctx;
}

/** A logger whose lines the test can read. */
export function captureLogger(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const raw: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => raw.push(line) });
  return { logger, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

export interface TempDir {
  dir: string;
  write(file: string, text: string): string;
  remove(file: string): void;
  cleanup(): void;
}

/**
 * A temporary folder marked `"type": "module"`, as TOOLS_DIR is inside the project: tsx then
 * loads its .ts and .js files as ES modules.
 */
export function tempModuleDir(prefix = 'navi-tools-'): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  return {
    dir,
    write(file, text) {
      const path = join(dir, file);
      writeFileSync(path, text);
      return path;
    },
    remove(file) {
      rmSync(join(dir, file), { force: true });
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Source of a module-format tool that answers with `reply`. */
export function moduleTool(name: string, reply: string): string {
  return `export const name = ${JSON.stringify(name)};
export const description = 'Test tool ${name}.';
export const parameters = { type: 'object', properties: { x: { type: 'string' } } };
export async function execute(params) { return ${JSON.stringify(reply)} + (params.x ?? ''); }
`;
}

/**
 * Whether `pid` no longer runs. A killed grandchild is re-parented to PID 1, which in some
 * containers never reaps it, so a zombie counts as gone.
 */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

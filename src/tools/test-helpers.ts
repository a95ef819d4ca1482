/**
 * Shared pieces of the tool-system tests: a temporary tools folder that Node treats as ES
 * modules, a `ToolContext` whose `confirm` the test chooses, profiles and a capturing logger.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pino, { type Logger } from 'pino';
import { type Profile, profileSchema } from '../config/profiles.js';
import type { Settings } from '../config/settings.js';
import { PathGuard } from '../machine/fs/path-guard.js';
import {
  type ConfirmAnswer,
  type ConfirmRequest,
  fail,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from './types.js';
import { ArgumentValidator, invalidArgumentsMessage } from './validation.js';

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

/** The guard a file tool gets in tests: the roots of FS_ALLOWED_PATHS, nothing else hidden. */
export function testGuard<S extends Pick<Settings, 'FS_ALLOWED_PATHS'>>(settings: S): PathGuard {
  return new PathGuard({ roots: settings.FS_ALLOWED_PATHS });
}

/**
 * Calls a tool the way the executor does as far as arguments go: validated (coerced, defaults
 * filled) first, refused with the executor's message when invalid. For tests that call a tool
 * directly with arguments the LLM might send.
 */
export async function runValidated(
  tool: ToolDefinition,
  args: unknown,
  ctx: ToolContext,
): Promise<ToolResult> {
  const checked = new ArgumentValidator().validate(tool.parameters, args);
  if (!checked.ok) return fail(invalidArgumentsMessage(tool.name, checked.problems, tool.parameters));
  return tool.execute(checked.params, ctx);
}

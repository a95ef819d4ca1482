/**
 * `write_tool`: the agent extends itself. It writes TOOLS_DIR/<name>.ts, reloads the folder,
 * and keeps the file only if that very file loaded as the tool `name`; otherwise the previous
 * version (or nothing) is put back and the exact problem is returned, so a broken tool is never
 * left enabled. On success the name is added to `enabled.json` (every profile gets it).
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { codeOf, openFileAt, renameAt, unlinkAt } from '../../machine/fs/beneath.js';
import { FixedDir } from '../../machine/fs/fixed-dir.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok, type ToolResult } from '../types.js';
import { type ReloadReport, reloadUserTools, type UserToolsDeps } from '../user-tools.js';

export const WRITE_TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_CODE_CHARS = 200_000;

function exported(code: string, member: string): boolean {
  const decl = new RegExp(`export\\s+(?:const|let|var|(?:async\\s+)?function\\*?)\\s+${member}\\b`);
  const list = new RegExp(`export\\s*\\{[^}]*\\b${member}\\b[^}]*\\}`);
  return decl.test(code) || list.test(code);
}

/**
 * The exports the module format needs that `code` lacks (empty for a default-exported class).
 * A quick look at the text, before anything is written; the real load checks again.
 */
export function missingExports(code: string): string[] {
  if (/export\s+default\s+class\b/.test(code)) return [];
  return ['name', 'description', 'parameters', 'execute'].filter((m) => !exported(code, m));
}

// Files are reached below the opened tools folder, never by path, so a link swapped into
// TOOLS_DIR cannot redirect a read or write elsewhere.
async function readOptional(dir: FileHandle, name: string): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    handle = await openFileAt(dir, name, constants.O_RDONLY);
  } catch {
    return undefined;
  }
  try {
    return (await handle.stat()).isFile() ? await handle.readFile('utf8') : undefined;
  } finally {
    await handle.close();
  }
}

async function restore(dir: FileHandle, name: string, previous: string | undefined): Promise<void> {
  if (previous === undefined) {
    await unlinkAt(dir, name).catch((err: unknown) => {
      if (codeOf(err) !== 'ENOENT') throw err;
    });
  } else await writeAtomic(dir, name, previous);
}

/** Writes atomically, so a reload running in parallel never imports half a file. */
async function writeAtomic(dir: FileHandle, name: string, text: string): Promise<void> {
  // Unique per write: two calls in one turn may write the same file at the same time.
  const tmp = `${name}.${randomUUID()}.tmp`;
  const out = await openFileAt(dir, tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
  try {
    await out.writeFile(text);
  } finally {
    await out.close();
  }
  await renameAt(dir, tmp, dir, name);
}

function problemOf(
  report: ReloadReport,
  file: string,
  name: string,
  registered: boolean,
): string | undefined {
  const own = report.errors.find((e) => e.origin === file);
  if (own) return own.error;
  if (!registered)
    return `the file loaded, but it does not define a tool named "${name}" (its exported name must be "${name}")`;
  return undefined;
}

const parameters = z.strictObject({
  name: z.string().describe('Tool name, also the file name: lowercase letters, digits and _.'),
  code: z.string().describe('The complete TypeScript source of the tool file.'),
});

export function createWriteToolTool(deps: UserToolsDeps): TypedTool<typeof parameters> {
  let queue: Promise<unknown> = Promise.resolve();
  const toolsDir = new FixedDir(deps.toolsDir);
  return defineTool({
    name: 'write_tool',
    group: 'meta',
    // The code it writes runs in Navi's own process.
    risk: { writes: true, executes: true },
    description:
      'Create or replace one of your own tools: writes TypeScript to the tools folder as <name>.ts, loads it, ' +
      'and enables it in every profile from the next message. The code must export name, description, ' +
      'parameters and async function execute(params) returning a string. On failure nothing stays enabled ' +
      'and you get the exact problem. Read tool_manual("write_tool") first.',
    parameters,
    async execute(params) {
      const { name, code } = params;
      if (name.startsWith('_'))
        return fail(`"${name}": names starting with _ are ignored by the loader; pick another.`);
      if (!WRITE_TOOL_NAME.test(name)) {
        return fail(
          `"${name}" is not a valid tool name: start with a lowercase letter, then lowercase letters, digits or _ (at most 64).`,
        );
      }
      const taken = deps.registry.get(name);
      if (taken && taken.source !== 'user')
        return fail(`"${name}" is the name of a ${taken.source} tool; pick another name.`);
      if (code.length > MAX_CODE_CHARS)
        return fail(`The code is longer than ${MAX_CODE_CHARS} characters; split the tool.`);
      const missing = missingExports(code);
      if (missing.length > 0) {
        return fail(
          `Not written: the code is missing these exports: ${missing.join(', ')}. ` +
            'It needs export const name, export const description, export const parameters and ' +
            'export async function execute(params) returning a string.',
        );
      }

      // Calls of one turn run concurrently; each write must see the enabled.json and folder
      // the previous one left, or one name would be lost from enabled.json.
      const result = queue.then(() => install(deps, toolsDir, name, code));
      queue = result.catch(() => {});
      return result;
    },
  });
}

/** Writes the file and enabled.json, reloads, and keeps them only if the tool loaded. */
async function install(
  deps: UserToolsDeps,
  toolsDir: FixedDir,
  name: string,
  code: string,
): Promise<ToolResult> {
  // A TOOLS_DIR that does not exist yet is created on the first tool written into it.
  const dir = await toolsDir.open({ create: true });
  try {
    return await installIn(deps, dir, name, code);
  } finally {
    await dir.close();
  }
}

async function installIn(
  deps: UserToolsDeps,
  dir: FileHandle,
  name: string,
  code: string,
): Promise<ToolResult> {
  const file = `${name}.ts`;
  const path = join(resolve(deps.toolsDir), file);
  const previous = await readOptional(dir, file);
  const previousEnabled = await readOptional(dir, 'enabled.json');

  await writeAtomic(dir, file, code);
  await writeAtomic(dir, 'enabled.json', `${JSON.stringify(addName(previousEnabled, name), null, 2)}\n`);
  const report = await reloadUserTools(deps);
  const entry = deps.registry.get(name);
  const problem = problemOf(report, file, name, entry?.source === 'user' && entry.file === path);
  if (problem === undefined) {
    return ok(
      `Tool "${name}" written to ${path}, loaded and enabled in every profile. ` +
        'It is available from the next user message.',
    );
  }
  await restore(dir, file, previous);
  await restore(dir, 'enabled.json', previousEnabled);
  await reloadUserTools(deps);
  const kept = previous === undefined ? 'No file was kept.' : 'The previous version was restored.';
  return fail(
    `Tool "${name}" was not installed: ${problem}\n${kept} Fix the code and call write_tool again.`,
  );
}

function addName(enabledText: string | undefined, name: string): string[] {
  let names: string[] = [];
  try {
    const parsed: unknown = enabledText ? JSON.parse(enabledText) : [];
    if (Array.isArray(parsed)) names = parsed.filter((n): n is string => typeof n === 'string');
  } catch {
    // A broken enabled.json is replaced by a valid one.
  }
  return names.includes(name) ? names : [...names, name];
}

/**
 * `write_tool`: the agent extends itself. It writes TOOLS_DIR/<name>.ts, reloads the folder,
 * and keeps the file only if that very file loaded as the tool `name`; otherwise the previous
 * version (or nothing) is put back and the exact problem is returned, so a broken tool is never
 * left enabled. On success the name is added to `enabled.json` (every profile gets it).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fail, ok, type ToolDefinition, type ToolParams, type ToolResult } from '../types.js';
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

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

async function restore(path: string, previous: string | undefined): Promise<void> {
  if (previous === undefined) await rm(path, { force: true });
  else await writeFile(path, previous);
}

/** Writes atomically, so a reload running in parallel never imports half a file. */
async function writeAtomic(path: string, text: string): Promise<void> {
  // Unique per write: two calls in one turn may write the same file at the same time.
  const tmp = `${path}.${randomUUID()}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, path);
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

export function createWriteToolTool(deps: UserToolsDeps): ToolDefinition {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    name: 'write_tool',
    group: 'meta',
    description:
      'Create or replace one of your own tools: writes TypeScript to the tools folder as <name>.ts, loads it, ' +
      'and enables it in every profile from the next message. The code must export name, description, ' +
      'parameters and async function execute(params) returning a string. On failure nothing stays enabled ' +
      'and you get the exact problem. Read tool_manual("write_tool") first.',
    parameters: {
      type: 'object',
      properties: {
        name: {
          type: 'string',
          description: 'Tool name, also the file name: lowercase letters, digits and _.',
        },
        code: { type: 'string', description: 'The complete TypeScript source of the tool file.' },
      },
      required: ['name', 'code'],
      additionalProperties: false,
    },
    async execute(params: ToolParams): Promise<ToolResult> {
      const name = String(params.name);
      const code = String(params.code);
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
      const result = queue.then(() => install(deps, name, code));
      queue = result.catch(() => {});
      return result;
    },
  };
}

/** Writes the file and enabled.json, reloads, and keeps them only if the tool loaded. */
async function install(deps: UserToolsDeps, name: string, code: string): Promise<ToolResult> {
  const dir = resolve(deps.toolsDir);
  const file = `${name}.ts`;
  const path = join(dir, file);
  const enabledPath = join(dir, 'enabled.json');
  // A TOOLS_DIR that does not exist yet is created on the first tool written into it.
  await mkdir(dir, { recursive: true });
  const previous = await readOptional(path);
  const previousEnabled = await readOptional(enabledPath);

  await writeAtomic(path, code);
  await writeAtomic(enabledPath, `${JSON.stringify(addName(previousEnabled, name), null, 2)}\n`);
  const report = await reloadUserTools(deps);
  const entry = deps.registry.get(name);
  const problem = problemOf(report, file, name, entry?.source === 'user' && entry.file === path);
  if (problem === undefined) {
    return ok(
      `Tool "${name}" written to ${path}, loaded and enabled in every profile. ` +
        'It is available from the next user message.',
    );
  }
  await restore(path, previous);
  await restore(enabledPath, previousEnabled);
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

/**
 * Turns the files of TOOLS_DIR into tools. A file is either
 * - module format: `export const name`, `description`, `parameters` and
 *   `export async function execute(params)` returning a string (throwing signals failure), with
 *   two optional exports: `risk` (what the tool can do, as built-ins declare it) and
 *   `confirmCall(params)` (the reason THIS call needs approval, or undefined), or
 * - class format: `export default class X extends Tool { … }` (the class of src/tools/types.ts).
 *
 * Every file is loaded on its own: a broken one is reported with the reason (syntax error,
 * which exports are missing, which have the wrong type, what it threw) and the others load.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeImportError, isLoadableFile, type ModuleImporter } from './module-import.js';
import { RISK_FLAGS } from './risk.js';
import type { JsonSchema, ToolContext, ToolDefinition, ToolParams, ToolResult, ToolRisk } from './types.js';
import type { ArgumentValidator } from './validation.js';

/** Tool names the LLM APIs accept. */
const TOOL_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
const MODULE_EXPORTS = ['name', 'description', 'parameters', 'execute'] as const;

export interface LoadedFile {
  tool: ToolDefinition;
  /** Absolute path. */
  file: string;
}

export interface FileError {
  /** File name inside the folder. */
  origin: string;
  error: string;
}

/** A problem with a file's exports; its message is shown to the user as is. */
export class ExportError extends Error {}

type ModuleExecute = (params: ToolParams, ctx: ToolContext) => unknown;

/** The optional exports of the module format. */
interface ModuleExtras {
  risk?: ToolRisk;
  confirmCall?: (params: ToolParams) => string | undefined;
}

/** Wraps the module format's `execute` (which returns a string) in the tool contract. */
class ModuleTool implements ToolDefinition {
  declare readonly risk?: ToolRisk;
  declare readonly confirmCall?: (params: ToolParams) => string | undefined;

  constructor(
    readonly name: string,
    readonly description: string,
    readonly parameters: JsonSchema,
    private readonly run: ModuleExecute,
    extras: ModuleExtras = {},
  ) {
    // Own properties only when exported (`declare` emits none): a tool without them looks
    // exactly like one that declares nothing.
    if (extras.risk) this.risk = extras.risk;
    if (extras.confirmCall) this.confirmCall = extras.confirmCall;
  }

  async execute(params: ToolParams, ctx: ToolContext): Promise<ToolResult> {
    const out = await this.run(params, ctx);
    if (typeof out === 'string') return { success: true, output: out };
    // Forgiving on purpose: an object is shown to the LLM as JSON rather than rejected.
    return { success: true, output: out === undefined ? '' : (JSON.stringify(out) ?? String(out)) };
  }
}

/** Problems with the four members, for both formats. */
function memberProblems(m: Record<string, unknown>, schemaCheck: ArgumentValidator): string[] {
  const problems: string[] = [];
  if (typeof m.name !== 'string') problems.push(`"name" must be a string, got ${typeName(m.name)}`);
  else if (!TOOL_NAME.test(m.name)) {
    problems.push(
      `"name" must start with a letter and use only letters, digits, _ and - (at most 64), got "${m.name}"`,
    );
  }
  if (typeof m.description !== 'string' || m.description.trim() === '') {
    problems.push(`"description" must be a non-empty string, got ${typeName(m.description)}`);
  }
  const p = m.parameters;
  if (p === null || typeof p !== 'object' || Array.isArray(p)) {
    problems.push(`"parameters" must be a JSON Schema object, got ${typeName(p)}`);
  } else if ((p as JsonSchema).type !== 'object') {
    problems.push('"parameters" must be a JSON Schema with type "object"');
  } else {
    const bad = schemaCheck.schemaError(p as JsonSchema);
    if (bad) problems.push(`"parameters" is not a valid JSON Schema: ${bad}`);
  }
  if (typeof m.execute !== 'function')
    problems.push(`"execute" must be a function, got ${typeName(m.execute)}`);
  return problems;
}

/** Problems with the optional exports `risk` and `confirmCall`. */
function extraProblems(m: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const risk = m.risk;
  if (risk !== undefined) {
    if (risk === null || typeof risk !== 'object' || Array.isArray(risk)) {
      problems.push(`"risk" must be an object of flags, got ${typeName(risk)}`);
    } else {
      for (const [flag, value] of Object.entries(risk)) {
        if (!(RISK_FLAGS as readonly string[]).includes(flag)) {
          problems.push(`"risk" has an unknown flag "${flag}" (known: ${RISK_FLAGS.join(', ')})`);
        } else if (typeof value !== 'boolean') {
          problems.push(`"risk.${flag}" must be true or false, got ${typeName(value)}`);
        }
      }
    }
  }
  if (m.confirmCall !== undefined && typeof m.confirmCall !== 'function') {
    problems.push(`"confirmCall" must be a function, got ${typeName(m.confirmCall)}`);
  }
  return problems;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'undefined' ? 'nothing' : typeof v;
}

/** Builds the tool a module exports; throws `ExportError` saying what is wrong. */
export function toolFromModule(mod: Record<string, unknown>, schemaCheck: ArgumentValidator): ToolDefinition {
  const present = MODULE_EXPORTS.filter((k) => mod[k] !== undefined);
  if (present.length === 0 && mod.default !== undefined) return toolFromDefault(mod.default, schemaCheck);
  const missing = MODULE_EXPORTS.filter((k) => mod[k] === undefined);
  if (missing.length > 0) {
    throw new ExportError(
      present.length === 0
        ? 'missing exports: name, description, parameters, execute (or a default-exported class extending Tool)'
        : `missing exports: ${missing.join(', ')}`,
    );
  }
  const problems = [...memberProblems(mod, schemaCheck), ...extraProblems(mod)];
  if (problems.length > 0) throw new ExportError(`wrong export types: ${problems.join('; ')}`);
  return new ModuleTool(
    mod.name as string,
    mod.description as string,
    mod.parameters as JsonSchema,
    mod.execute as ModuleExecute,
    {
      ...(mod.risk !== undefined && { risk: Object.freeze({ ...(mod.risk as ToolRisk) }) }),
      ...(mod.confirmCall !== undefined && { confirmCall: mod.confirmCall as ModuleExtras['confirmCall'] }),
    },
  );
}

function toolFromDefault(def: unknown, schemaCheck: ArgumentValidator): ToolDefinition {
  let instance: unknown = def;
  if (typeof def === 'function') {
    try {
      instance = new (def as new () => unknown)();
    } catch (err) {
      throw new ExportError(`the default-exported class threw in its constructor: ${(err as Error).message}`);
    }
  }
  if (instance === null || typeof instance !== 'object') {
    throw new ExportError(`the default export must be a class extending Tool, got ${typeName(def)}`);
  }
  // Checked by shape, not `instanceof`: each reload imports src/tools/types.ts afresh, so the
  // user's `Tool` is a different class object from ours.
  const inst = instance as Record<string, unknown>;
  const members = {
    name: inst.name,
    description: inst.description,
    parameters: inst.parameters,
    execute: inst.execute,
  };
  const problems = memberProblems(members, schemaCheck);
  if (problems.length > 0)
    throw new ExportError(`the default-exported tool is invalid: ${problems.join('; ')}`);
  return instance as ToolDefinition;
}

/** Loadable files of `dir`, sorted; a missing folder has none. */
export function listSourceFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter(isLoadableFile).sort();
  } catch {
    return [];
  }
}

/** Imports one file and returns its tool, or the reason it cannot be used. */
export async function loadToolFile(
  path: string,
  importer: ModuleImporter,
  schemaCheck: ArgumentValidator,
): Promise<{ tool: ToolDefinition } | { error: string }> {
  let mod: Record<string, unknown>;
  try {
    mod = await importer.import(path);
  } catch (err) {
    return { error: describeImportError(err) };
  }
  try {
    return { tool: toolFromModule(mod, schemaCheck) };
  } catch (err) {
    return { error: err instanceof ExportError ? err.message : describeImportError(err) };
  }
}

/** Loads every tool file of `dir`. Duplicate names within the folder are errors of the later file. */
export async function loadToolsFromDir(
  dir: string,
  importer: ModuleImporter,
  schemaCheck: ArgumentValidator,
): Promise<{ loaded: LoadedFile[]; errors: FileError[] }> {
  const loaded: LoadedFile[] = [];
  const errors: FileError[] = [];
  const byName = new Map<string, string>();
  for (const file of listSourceFiles(dir)) {
    const result = await loadToolFile(join(dir, file), importer, schemaCheck);
    if ('error' in result) {
      errors.push({ origin: file, error: result.error });
      continue;
    }
    const other = byName.get(result.tool.name);
    if (other) {
      errors.push({ origin: file, error: `tool name "${result.tool.name}" is already used by ${other}` });
      continue;
    }
    byName.set(result.tool.name, file);
    loaded.push({ tool: result.tool, file: join(dir, file) });
  }
  return { loaded, errors };
}

/** Names listed in `enabled.json`; a missing file is an empty list, a broken one an error. */
export function readEnabledList(dir: string): { names: string[]; error?: string } {
  let text: string;
  try {
    text = readFileSync(join(dir, 'enabled.json'), 'utf8');
  } catch {
    return { names: [] };
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed) || !parsed.every((n) => typeof n === 'string')) {
      return { names: [], error: 'enabled.json must be a JSON array of tool names' };
    }
    return { names: parsed as string[] };
  } catch (err) {
    return { names: [], error: `enabled.json is not valid JSON: ${(err as Error).message}` };
  }
}

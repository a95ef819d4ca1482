/**
 * Argument validation against a tool's JSON Schema (ajv). The LLM gets an error that names
 * every problem and the expected schema, so its next attempt can be right; the tool is not run.
 *
 * Scalars are coerced (`"5"` → 5 for an integer) because small local models often quote
 * numbers; anything coercion cannot fix is an error. Defaults from the schema are filled in.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { JsonSchema, ToolParams } from './types.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsImport as { default?: unknown }).default ?? addFormatsImport) as (
  ajv: Ajv,
) => Ajv;

export type ValidationOutcome = { ok: true; params: ToolParams } | { ok: false; problems: string[] };

const SCHEMA_PREVIEW_CHARS = 1500;

export class ArgumentValidator {
  private readonly ajv: Ajv;
  // Keyed by the schema object: a reloaded tool brings a new object and so a fresh compile.
  private readonly compiled = new WeakMap<JsonSchema, ValidateFunction | Error>();
  private compiles = 0;

  constructor() {
    this.ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true });
    addFormats(this.ajv);
  }

  /** Validates a copy of `args`; the copy (coerced, defaults filled) is what the tool receives. */
  validate(schema: JsonSchema, args: unknown): ValidationOutcome {
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      const got = args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`;
      return { ok: false, problems: [`the arguments must be a JSON object, got ${got}`] };
    }
    const validate = this.compile(schema);
    if (validate instanceof Error) {
      return {
        ok: false,
        problems: [
          `the tool's own parameter schema is invalid (${validate.message}); report this to the user`,
        ],
      };
    }
    const params = structuredClone(args) as ToolParams;
    if (validate(params)) return { ok: true, params };
    return { ok: false, problems: (validate.errors ?? []).map(describeError) };
  }

  /** Why `schema` cannot be used, or undefined when it compiles. */
  schemaError(schema: JsonSchema): string | undefined {
    const fn = this.compile(schema);
    return fn instanceof Error ? fn.message : undefined;
  }

  /** How many schemas this validator has compiled: each schema object counts once. */
  get compiledCount(): number {
    return this.compiles;
  }

  private compile(schema: JsonSchema): ValidateFunction | Error {
    let fn = this.compiled.get(schema);
    if (!fn) {
      this.compiles++;
      try {
        // `$id` would make ajv refuse the second version of a reloaded tool as a duplicate.
        const { $id: _id, ...rest } = schema;
        fn = this.ajv.compile(rest);
      } catch (err) {
        fn = err instanceof Error ? err : new Error(String(err));
      }
      this.compiled.set(schema, fn);
    }
    return fn;
  }
}

function describeError(e: ErrorObject): string {
  const where = e.instancePath ? `"${e.instancePath.slice(1).replace(/\//g, '.')}"` : 'the arguments';
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return e.instancePath
        ? `${where} is missing the required property "${String(params.missingProperty)}"`
        : `missing required argument "${String(params.missingProperty)}"`;
    case 'additionalProperties':
      return `${where === 'the arguments' ? 'unknown argument' : `${where} has an unknown property`} "${String(params.additionalProperty)}"`;
    case 'enum':
      return `${where} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `${where} must be of type ${String(params.type)}`;
    default:
      return `${where} ${e.message ?? 'is invalid'}`;
  }
}

/** The message the LLM reads when its call was invalid. */
export function invalidArgumentsMessage(tool: string, problems: string[], schema: JsonSchema): string {
  let preview = JSON.stringify(schema);
  if (preview.length > SCHEMA_PREVIEW_CHARS) preview = `${preview.slice(0, SCHEMA_PREVIEW_CHARS)}…`;
  return [
    `Invalid arguments for tool "${tool}"; it was not run.`,
    ...problems.map((p) => `- ${p}`),
    `Expected parameters (JSON Schema): ${preview}`,
    'Fix the arguments and call the tool again.',
  ].join('\n');
}

/**
 * `defineTool`: a built-in tool whose parameters are a zod object. The parameter type of
 * `execute` is inferred from the schema, and the JSON Schema the LLM sees (and the executor
 * validates against) is derived from the same schema, so the two cannot drift apart.
 *
 * Calls are validated by the executor's Ajv against the derived JSON Schema — with the same
 * number coercion and default filling as every other tool — so `execute` receives exactly the
 * schema's output type. Schemas must therefore be plain data: zod never runs on a call, so a
 * transform or refinement would be silently skipped; keep such logic in `execute`.
 */
import { z } from 'zod';
import type { Profile } from '../config/profiles.js';
import type { ToolRisk } from './risk.js';
import type { JsonSchema, ToolContext, ToolDefinition, ToolGroup, ToolResult } from './types.js';

/** The parameters of a built-in: an object schema (`z.strictObject` refuses unknown arguments). */
export type ToolSchema = z.ZodObject;

export interface TypedToolSpec<S extends ToolSchema> {
  name: string;
  description: string;
  group: ToolGroup;
  /** What the tool can do; its hook default follows from it. */
  risk: ToolRisk;
  parameters: S;
  describeFor?(profile: Profile): string;
  execute(params: z.output<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool made by `defineTool`: an ordinary definition that also keeps its zod schema. */
export interface TypedTool<S extends ToolSchema = ToolSchema> extends ToolDefinition {
  readonly group: ToolGroup;
  readonly risk: ToolRisk;
  readonly schema: S;
}

/** Builds the tool; throws when its schema has a type JSON Schema cannot express (a date, a map…). */
export function defineTool<S extends ToolSchema>(spec: TypedToolSpec<S>): TypedTool<S> {
  const { execute, describeFor, parameters: schema, ...rest } = spec;
  return {
    ...rest,
    schema,
    parameters: toolJsonSchema(schema),
    ...(describeFor && { describeFor }),
    // The executor has validated `params` against the schema derived from `schema`.
    execute: (params, ctx) => execute(params as z.output<S>, ctx),
  };
}

// What zod writes for `z.int()` without bounds: noise in every request, and no model needs it.
const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/**
 * The JSON Schema of a zod object as LLM APIs take it: `type: "object"` with `properties`,
 * `required` and the descriptions; draft-07, which Ajv validates; no `$schema` keyword, which
 * some backends refuse; fields with a default are optional (the validator fills them in).
 */
export function toolJsonSchema(schema: ToolSchema): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', target: 'draft-7', unrepresentable: 'throw' });
  const { $schema: _ignored, ...rest } = json as Record<string, unknown>;
  return tidy(rest, true) as JsonSchema;
}

/**
 * Drops zod's safe-integer bounds, and writes a free-form object (`z.looseObject({})`) as
 * `{"type": "object", "additionalProperties": true}`, the plain form models know.
 */
function tidy(node: unknown, root = false): unknown {
  if (Array.isArray(node)) return node.map((n) => tidy(n));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'minimum' || key === 'maximum') && SAFE_INTEGER_BOUNDS.has(value as number)) continue;
    out[key] = key === 'additionalProperties' && isEmptyObject(value) ? true : tidy(value);
  }
  if (!root && out.additionalProperties === true && isEmptyObject(out.properties)) delete out.properties;
  return out;
}

function isEmptyObject(value: unknown): boolean {
  return (
    value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0
  );
}

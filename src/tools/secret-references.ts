/**
 * Vault secrets used by reference. A tool argument may hold `{{secret:<id>.<field>}}`; the
 * executor puts the value in its place only at the moment the tool runs, so the value is never
 * in the LLM's context, the `tool_started` event, the confirmation prompt or the transcript —
 * all of them keep the reference. The values are then registered with the secret masker, which
 * hides them in whatever comes back.
 */
import { SECRET_REFERENCE } from '../protocol/vault.js';
import type { ToolParams } from './types.js';

/** Looks up a referenced value for one call; throws an Error whose message the LLM reads. */
export interface SecretResolver {
  resolve(
    id: string,
    field: string,
    use: { sessionId: string; tool: string },
  ): { value: string; label: string };
}

export interface SecretReference {
  /** The reference as written, `{{secret:<id>.<field>}}`. */
  text: string;
  id: string;
  field: string;
}

/** At most this many distinct references in one call: more is a loop gone wrong, not a task. */
export const MAX_REFERENCES_PER_CALL = 20;

/** Every distinct reference in the string values of `params`, at any depth (keys are not read). */
export function findReferences(params: ToolParams): SecretReference[] {
  const found = new Map<string, SecretReference>();
  visitStrings(params, (text) => {
    for (const m of text.matchAll(SECRET_REFERENCE))
      if (!found.has(m[0])) found.set(m[0], { text: m[0], id: m[1]!, field: m[2]! });
  });
  return [...found.values()];
}

/** A copy of `params` with every reference replaced by its value from `values` (keyed by reference text). */
export function substituteReferences(params: ToolParams, values: ReadonlyMap<string, string>): ToolParams {
  return mapStrings(params, (text) =>
    text.includes('{{secret:') ? text.replace(SECRET_REFERENCE, (ref) => values.get(ref) ?? ref) : text,
  ) as ToolParams;
}

function visitStrings(value: unknown, visit: (text: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const item of value) visitStrings(item, visit);
  else if (value !== null && typeof value === 'object')
    for (const item of Object.values(value)) visitStrings(item, visit);
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = mapStrings(item, map);
    return out;
  }
  return value;
}

import { randomUUID } from 'node:crypto';
import type { ToolSpec } from './types.js';

/** Tool-call arguments as servers send them: an object, a JSON string, or a broken JSON string. */

export interface ParsedArguments {
  arguments: Record<string, unknown>;
  /** Set when the text was not a JSON object: the raw text is kept under `_raw`. */
  problem?: string;
}

export function parseToolArguments(raw: unknown): ParsedArguments {
  if (raw === undefined || raw === null || raw === '') return { arguments: {} };
  if (typeof raw === 'object' && !Array.isArray(raw)) return { arguments: raw as Record<string, unknown> };
  if (typeof raw !== 'string')
    return { arguments: { _raw: JSON.stringify(raw) }, problem: 'arguments are not an object' };
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return { arguments: parsed as Record<string, unknown> };
    }
    return { arguments: { _raw: raw }, problem: 'arguments are JSON but not an object' };
  } catch {
    return { arguments: { _raw: raw }, problem: 'arguments are not valid JSON' };
  }
}

/** A tool-call id for servers that send none; random, so no counter is kept between calls. */
export function newToolCallId(): string {
  return `call_${randomUUID().replaceAll('-', '')}`;
}

/** Tool specs in the `{type: 'function', function: {…}}` shape both wire formats share. */
export function functionTools(tools: readonly ToolSpec[]) {
  return tools.map((t) => ({
    type: 'function' as const,
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

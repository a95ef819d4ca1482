/**
 * Turns whatever a tool resolved to into a well-formed `ToolResult` and keeps its output within
 * the limit. Tools are code the user or the agent wrote, so nothing about their return value is
 * trusted: a string, `undefined`, a number or an object without `output` all become something
 * the LLM can read.
 */
import type { ToolResult } from './types.js';

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') {
    try {
      return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? '';
    } catch {
      // A cycle: fall through to the plain conversion.
    }
  }
  return String(value);
}

export function normaliseResult(raw: unknown, tool: string): ToolResult {
  if (typeof raw === 'string') return { success: true, output: raw };
  if (raw === null || typeof raw !== 'object' || !('success' in raw || 'output' in raw)) {
    const got =
      raw === null
        ? 'null'
        : typeof raw === 'object'
          ? 'an object without "success" or "output"'
          : typeof raw;
    return {
      success: false,
      output: `Tool "${tool}" returned ${got} instead of a result; this is a bug in the tool.`,
      error: 'invalid tool result',
    };
  }
  const r = raw as Record<string, unknown>;
  const success = r.success !== false;
  const result: ToolResult = { success, output: stringify(r.output) };
  if (r.error !== undefined && r.error !== null) result.error = stringify(r.error);
  if (!success && result.output === '' && result.error) result.output = result.error;
  if (r.metadata && typeof r.metadata === 'object' && !Array.isArray(r.metadata)) {
    result.metadata = r.metadata as Record<string, unknown>;
  }
  return result;
}

/** What `truncate` needs of a `SecretMasker`. */
export interface TextMasker {
  mask(text: string): string;
  readonly longestForm: number;
}

/**
 * Cuts `text` to `max` characters and says how much was cut. With `masker`, secrets are masked
 * first, over the kept part plus the longest form a secret can take, so one that straddles the
 * cut is hidden whole instead of left half visible (and a huge text is not scanned in full).
 */
export function truncate(text: string, max: number, masker?: TextMasker): string {
  if (text.length <= max) return masker ? masker.mask(text) : text;
  const head = masker ? masker.mask(text.slice(0, max + masker.longestForm)) : text;
  const cut = text.length - max;
  return `${head.slice(0, max)}\n[output truncated: ${cut} of ${text.length} characters cut]`;
}

/**
 * Reads facts out of whatever a small model answers when asked for JSON: prose around it, code
 * fences, a bare array or `{"facts": [...]}`, trailing commas, an answer cut off mid-object.
 *
 * Instead of parsing the answer as one document (which fails on the first flaw), it finds every
 * balanced `{…}` object outside strings and parses each on its own. An object cut off by the end
 * of the answer never closes, so it is left out while the complete ones before it are kept.
 */

import { isRecord } from '../util/is-record.js';
import { MAX_CATEGORY_LENGTH, MAX_KEY_LENGTH, normaliseName, normaliseValue } from './normalise.js';

export interface ParsedFact {
  category: string;
  key: string;
  value: string;
}

export interface ParseFactsResult {
  /** Valid facts, normalised, one per (category, key): a later duplicate replaces an earlier one. */
  facts: ParsedFact[];
  /** Objects that looked like facts but were unusable (missing key or value, wrong types). */
  dropped: number;
  /** False when the answer held no JSON object and no empty array: not an answer at all. */
  found: boolean;
}

const DEFAULT_CATEGORY = 'general';

/** Parses a model's answer; never throws. */
export function parseFacts(answer: string): ParseFactsResult {
  const candidates = objectTexts(answer);
  const byKey = new Map<string, ParsedFact>();
  let dropped = 0;
  for (const text of candidates) {
    const value = parseLoose(text);
    if (value === undefined) {
      // Only innermost objects count: an enclosing one fails because of them, not on its own.
      if (!text.slice(1).includes('{')) dropped++;
      continue;
    }
    if (!isRecord(value) || !looksLikeFact(value)) continue;
    const fact = toFact(value);
    if (!fact) {
      dropped++;
      continue;
    }
    const id = `${fact.category}\u0000${fact.key}`;
    byKey.delete(id); // re-insert so the order follows the last mention
    byKey.set(id, fact);
  }
  const found = candidates.length > 0 || /\[\s*\]/.test(answer);
  return { facts: [...byKey.values()], dropped, found };
}

/** Every balanced `{…}` outside JSON strings, innermost first (in closing order). */
function objectTexts(text: string): string[] {
  const out: string[] = [];
  const open: number[] = [];
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      // A JSON string never holds a raw line break: this quote was prose, not JSON.
      else if (c === '\n') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') open.push(i);
    else if (c === '}') {
      const start = open.pop();
      if (start !== undefined) out.push(text.slice(start, i + 1));
    }
  }
  return out;
}

function parseLoose(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    try {
      return JSON.parse(withoutTrailingCommas(text));
    } catch {
      return undefined;
    }
  }
}

/** Drops commas directly before `}` or `]`, outside strings. */
function withoutTrailingCommas(text: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      out += c;
      continue;
    }
    if (c === '"') inString = true;
    if (c === ',') {
      const next = text.slice(i + 1).match(/^\s*(.)/s)?.[1];
      if (next === '}' || next === ']') continue;
    }
    out += c;
  }
  return out;
}

function field(obj: Record<string, unknown>, names: readonly string[]): unknown {
  for (const [k, v] of Object.entries(obj)) {
    if (names.includes(k.toLowerCase())) return v;
  }
  return undefined;
}

const KEY_NAMES = ['key', 'name'] as const;
const VALUE_NAMES = ['value', 'fact'] as const;
const CATEGORY_NAMES = ['category', 'type'] as const;

/** Has at least a key or a value field: meant as a fact, even if broken. */
function looksLikeFact(obj: Record<string, unknown>): boolean {
  return field(obj, KEY_NAMES) !== undefined || field(obj, VALUE_NAMES) !== undefined;
}

function scalarText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  return undefined;
}

function toFact(obj: Record<string, unknown>): ParsedFact | undefined {
  const rawKey = scalarText(field(obj, KEY_NAMES));
  const rawValue = scalarText(field(obj, VALUE_NAMES));
  const rawCategory = field(obj, CATEGORY_NAMES);
  if (rawKey === undefined || rawValue === undefined) return undefined;
  if (rawCategory !== undefined && rawCategory !== null && typeof rawCategory !== 'string') return undefined;
  const key = normaliseName(rawKey, MAX_KEY_LENGTH);
  const value = normaliseValue(rawValue);
  const category = normaliseName(rawCategory ?? '', MAX_CATEGORY_LENGTH) || DEFAULT_CATEGORY;
  if (!key || !value) return undefined;
  return { category, key, value };
}

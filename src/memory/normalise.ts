import { MemoryValidationError } from './types.js';

/** One spelling for categories and keys, so "Favourite Editor" and "favourite-editor" are one fact. */

export const MAX_CATEGORY_LENGTH = 40;
export const MAX_KEY_LENGTH = 80;
export const MAX_VALUE_LENGTH = 2000;

/**
 * Lower case, accents kept, every run of characters other than letters and digits becomes one
 * `_`, no leading or trailing `_`, cut to `max` characters. May return ''.
 */
export function normaliseName(raw: string, max: number): string {
  return raw
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, max)
    .replace(/_+$/, '');
}

/** Trimmed, inner whitespace runs kept as single spaces, cut to MAX_VALUE_LENGTH. */
export function normaliseValue(raw: string): string {
  return raw.replace(/\s+/g, ' ').trim().slice(0, MAX_VALUE_LENGTH);
}

/** `normaliseName`, refusing a name that normalises to nothing. */
export function checkedName(raw: string, field: string, max: number): string {
  const name = normaliseName(String(raw), max);
  if (!name) throw new MemoryValidationError(`The ${field} must contain at least one letter or digit.`);
  return name;
}

/** `normaliseValue`, refusing a value that normalises to nothing. */
export function checkedValue(raw: string): string {
  const value = normaliseValue(String(raw));
  if (!value) throw new MemoryValidationError('The value must not be empty.');
  return value;
}

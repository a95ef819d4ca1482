/**
 * What is wrong with a profile, in words a person editing its JSON can act on: one sentence per
 * problem, naming the field (`backends.ollama.tool_budget_ratio`) and what it takes. The loader
 * reports broken files with it and `PUT /agents/profiles/{id}` answers with it.
 */
import type { z } from 'zod';

/** The JSON type of a value, as a person would call it. */
function kindOf(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'boolean') return 'true or false';
  return `a ${typeof value}`;
}

const expectedWords: Record<string, string> = {
  string: 'text (in quotes)',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list ([…])',
  object: 'an object ({…})',
  record: 'an object ({…})',
  null: 'null',
};

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function fieldName(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

function plain(issue: z.core.$ZodIssue, input: unknown): string {
  switch (issue.code) {
    case 'invalid_type': {
      const found = valueAt(input, issue.path);
      const expected = expectedWords[issue.expected] ?? issue.expected;
      if (found === undefined) return `is missing: it takes ${expected}`;
      // A fraction where a whole number belongs is still "a number": show the value instead.
      return `must be ${expected}, not ${issue.expected === 'int' && typeof found === 'number' ? found : kindOf(found)}`;
    }
    case 'unrecognized_keys': {
      const keys = issue.keys.map((k) => `"${k.slice(0, 64)}"`).join(', ');
      return `${issue.keys.length === 1 ? 'has an unknown field' : 'has unknown fields'} ${keys}: check the spelling, or remove ${issue.keys.length === 1 ? 'it' : 'them'}`;
    }
    case 'too_small':
      if (issue.origin === 'string')
        return Number(issue.minimum) <= 1
          ? 'must not be empty'
          : `must be at least ${issue.minimum} characters`;
      if (issue.origin === 'array') return `must list at least ${issue.minimum}`;
      return `must be at least ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
      if (issue.origin === 'array') return `must list at most ${issue.maximum}`;
      return `must be at most ${issue.maximum}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return issue.message;
  }
}

/**
 * The issues of a failed parse of `input` as sentences (`temperature: must be a number, not
 * text`), joined with "; ". A problem with the whole object begins "the profile".
 */
export function describeProfileIssues(error: z.ZodError, input: unknown): string {
  return error.issues
    .map((issue) => {
      const field = fieldName(issue.path);
      return field ? `${field}: ${plain(issue, input)}` : `the profile ${plain(issue, input)}`;
    })
    .join('; ');
}

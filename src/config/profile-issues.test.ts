import { describe, expect, it } from 'vitest';
import { describeProfileIssues } from './profile-issues.js';
import { profileSchema } from './profiles.js';

const base = { id: 'p', name: 'P' };
const say = (input: unknown): string => {
  const parsed = profileSchema.strict().safeParse(input);
  return parsed.success ? '' : describeProfileIssues(parsed.error, input);
};

describe('describeProfileIssues', () => {
  it('names the field and the kind of value it takes, and what was there', () => {
    expect(say({ ...base, temperature: 'hot' })).toBe('temperature: must be a number, not text');
    expect(say({ ...base, planning_enabled: 'yes' })).toBe(
      'planning_enabled: must be true or false, not text',
    );
    expect(say({ ...base, enabled_tools: { a: 1 } })).toBe(
      'enabled_tools: must be a list ([…]), not an object',
    );
    expect(say({ ...base, enabled_tools: ['x', null] })).toBe(
      'enabled_tools[1]: must be text (in quotes), not null',
    );
    expect(say({ ...base, max_iterations: 2.5 })).toBe('max_iterations: must be a whole number, not 2.5');
  });

  it('says a required field is missing, and what it takes', () => {
    expect(say({ id: 'p' })).toBe('name: is missing: it takes text (in quotes)');
  });

  it('gives limits and choices in words', () => {
    expect(say({ ...base, name: '' })).toBe('name: must not be empty');
    expect(say({ ...base, temperature: -1 })).toBe('temperature: must be at least 0');
    expect(say({ ...base, description: 'd'.repeat(501) })).toBe(
      'description: must be at most 500 characters',
    );
    expect(say({ ...base, autonomy: 'wild' })).toBe(
      'autonomy: must be one of "strict", "standard", "autonomous"',
    );
    expect(say({ ...base, id: '../x' })).toBe('id: must be 1 to 64 letters, digits, _ and - only');
  });

  it('names unknown fields, at the top and inside backends, and keeps custom messages', () => {
    expect(say({ ...base, planing_enabled: true })).toBe(
      'the profile has an unknown field "planing_enabled": check the spelling, or remove it',
    );
    expect(say({ ...base, a: 1, b: 2 })).toBe(
      'the profile has unknown fields "a", "b": check the spelling, or remove them',
    );
    expect(say({ ...base, backends: { ollama: { tools: [] }, gpt: {} } })).toBe(
      'backends.ollama: has an unknown field "tools": check the spelling, or remove it; ' +
        'backends.gpt: unknown backend "gpt": use one of ollama, openai, llamacpp',
    );
  });

  it('speaks of the whole profile when it is not an object, and joins several problems', () => {
    expect(say([])).toBe('the profile must be an object ({…}), not a list');
    expect(say(null)).toBe('the profile must be an object ({…}), not null');
    expect(say({ id: 7, name: 7 })).toBe(
      'id: must be text (in quotes), not a number; name: must be text (in quotes), not a number',
    );
  });

  it('keeps an unknown key short however long it is', () => {
    expect(say({ ...base, ['k'.repeat(1000)]: 1 }).length).toBeLessThan(200);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProfileRegistry, profileSchema } from './profiles.js';

const base = { id: 'p', name: 'P' };
const problems = (input: unknown) => {
  const parsed = profileSchema.safeParse(input);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe("a profile's backends section", () => {
  it('defaults to none, and keeps what it is given', () => {
    expect(profileSchema.parse(base).backends).toEqual({});
    const backends = {
      ollama: { enabled_tools: ['todo'], denied_tools: ['terminal'], tool_budget_ratio: 0.1 },
      openai: {},
      llamacpp: { tool_budget_ratio: 1 },
    };
    expect(profileSchema.parse({ ...base, backends }).backends).toEqual(backends);
  });

  it('rejects an unknown backend id, naming the ones it takes', () => {
    expect(problems({ ...base, backends: { olama: { denied_tools: ['x'] } } })).toEqual([
      'backends.olama: unknown backend "olama": use one of ollama, openai, llamacpp',
    ]);
  });

  it('rejects wrong types, unknown keys, an empty pattern and a ratio out of range', () => {
    expect(problems({ ...base, backends: [] })).not.toEqual([]);
    expect(problems({ ...base, backends: 'ollama' })).not.toEqual([]);
    expect(problems({ ...base, backends: { ollama: { enabled_tools: 'todo' } } })[0]).toMatch(
      /^backends\.ollama\.enabled_tools: /,
    );
    expect(problems({ ...base, backends: { ollama: { denied_tools: [''] } } })[0]).toMatch(
      /^backends\.ollama\.denied_tools\.0: /,
    );
    expect(problems({ ...base, backends: { ollama: { tools: ['todo'] } } })[0]).toMatch(
      /^backends\.ollama: .*tools/,
    );
    expect(problems({ ...base, backends: { ollama: { tool_budget_ratio: 0 } } })[0]).toMatch(
      /^backends\.ollama\.tool_budget_ratio: /,
    );
    expect(problems({ ...base, backends: { ollama: { tool_budget_ratio: 2 } } })[0]).toMatch(
      /^backends\.ollama\.tool_budget_ratio: /,
    );
    expect(problems({ ...base, backends: { ollama: { tool_budget_ratio: '0.5' } } })).not.toEqual([]);
  });
});

describe('ProfileRegistry.fromDirectory with a backends section', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('skips a file naming an unknown backend, saying which and why, and loads the others', () => {
    dir = mkdtempSync(join(tmpdir(), 'navi-profiles-'));
    writeFileSync(
      join(dir, 'good.json'),
      JSON.stringify({ id: 'good', name: 'Good', backends: { ollama: {} } }),
    );
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ id: 'bad', name: 'Bad', backends: { gpt: {} } }));
    const registry = ProfileRegistry.fromDirectory(dir, 'good');
    expect(registry.list().map((p) => p.id)).toEqual(['good']);
    expect(registry.errors).toEqual([
      { file: 'bad.json', error: 'backends.gpt: unknown backend "gpt": use one of ollama, openai, llamacpp' },
    ]);
  });
});

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

describe('ProfileRegistry.reload', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the folder again in place: changed, added and broken files, and the file of each profile', () => {
    dir = mkdtempSync(join(tmpdir(), 'navi-profiles-'));
    writeFileSync(join(dir, 'a-file.json'), JSON.stringify({ id: 'alpha', name: 'Alpha' }));
    const registry = ProfileRegistry.fromDirectory(dir, 'alpha');
    const held = registry;
    expect(registry.fileOf('alpha')).toBe('a-file.json');
    expect(registry.directory).toBe(dir);

    writeFileSync(join(dir, 'a-file.json'), JSON.stringify({ id: 'alpha', name: 'Alpha, edited' }));
    writeFileSync(join(dir, 'beta.json'), JSON.stringify({ id: 'beta', name: 'Beta' }));
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    const errors = registry.reload();
    expect(held.get('alpha')?.name).toBe('Alpha, edited');
    expect(held.list().map((p) => p.id)).toEqual(['alpha', 'beta']);
    expect(held.fileOf('beta')).toBe('beta.json');
    expect(errors.map((e) => e.file)).toEqual(['broken.json']);
    expect(held.errors).toEqual(errors);

    rmSync(join(dir, 'broken.json'));
    registry.reload();
    expect(registry.errors).toEqual([]);
  });

  it('falls back to the built-in profile when no file is valid any more, and leaves an in-memory registry alone', () => {
    dir = mkdtempSync(join(tmpdir(), 'navi-profiles-'));
    writeFileSync(join(dir, 'only.json'), JSON.stringify({ id: 'only', name: 'Only' }));
    const registry = ProfileRegistry.fromDirectory(dir, 'only');
    writeFileSync(join(dir, 'only.json'), JSON.stringify({ id: 'only' }));
    expect(registry.reload()).toEqual([
      { file: 'only.json', error: 'name: is missing: it takes text (in quotes)' },
    ]);
    expect(registry.list().map((p) => p.id)).toEqual(['secretary']);
    expect(registry.fileOf('secretary')).toBeUndefined();

    const inMemory = new ProfileRegistry([profileSchema.parse({ id: 'm', name: 'M' })], 'm');
    expect(inMemory.reload()).toEqual([]);
    expect(inMemory.list().map((p) => p.id)).toEqual(['m']);
  });
});

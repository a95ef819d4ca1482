/**
 * The profile editor's own checks (web/src/lib/profile-editor.ts): broken JSON said with its line
 * and column, anything but an object refused, the text Navi writes, and the lines of a profile's
 * card.
 */
import { describe, expect, it } from 'vitest';
import type { ProfileSummary } from '../../src/protocol/rest.js';
import {
  lineAndColumn,
  modelText,
  parseProfileJson,
  profileText,
  toolsText,
} from '../../web/src/lib/profile-editor.js';

describe('parseProfileJson', () => {
  it('takes a JSON object', () => {
    expect(parseProfileJson('{"id": "a", "name": "A"}')).toEqual({
      ok: true,
      profile: { id: 'a', name: 'A' },
    });
  });

  it('says where broken JSON breaks, as a line and a column', () => {
    const result = parseProfileJson('{\n  "id": "a",\n  "name": "A"\n  "x": 1\n}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem).toMatch(/^The text is not valid JSON: /);
    expect(result.problem).toMatch(/line 4/);
    expect(result.problem).not.toMatch(/position/);
  });

  it('refuses empty text and JSON that is not an object', () => {
    for (const text of ['', '   \n', '[]', '"text"', '42', 'null', 'true']) {
      const result = parseProfileJson(text);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.problem).toMatch(/must be a JSON object/);
    }
  });
});

describe('lineAndColumn', () => {
  it('counts from 1, and keeps an offset past the end at the end', () => {
    expect(lineAndColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn('ab\ncd', 99)).toEqual({ line: 2, column: 3 });
    expect(lineAndColumn('ab', -5)).toEqual({ line: 1, column: 1 });
  });
});

describe('profileText', () => {
  it('is two-space JSON with a final newline, as Navi writes profile files', () => {
    expect(profileText({ id: 'a', enabled_tools: ['*'] })).toBe(
      '{\n  "id": "a",\n  "enabled_tools": [\n    "*"\n  ]\n}\n',
    );
  });
});

describe("a profile card's lines", () => {
  const base: ProfileSummary = {
    id: 'p',
    name: 'P',
    description: '',
    model: null,
    llm_backend: null,
    temperature: 0.7,
    max_iterations: 10,
    planning_enabled: false,
    enabled_tools: ['*'],
    scratchpad_sections: [],
  };

  it('names the model, its backend, or the default one', () => {
    expect(modelText({ ...base, model: 'qwen3:4b', llm_backend: 'ollama' }, 'x')).toBe('qwen3:4b (ollama)');
    expect(modelText({ ...base, model: 'qwen3:4b' }, 'x')).toBe('qwen3:4b');
    expect(modelText({ ...base, llm_backend: 'openai' }, 'x')).toBe('the default model of openai');
    expect(modelText(base, 'test-model')).toBe('the default model (test-model)');
    expect(modelText(base, '')).toBe('the default model');
  });

  it('says the tools in words', () => {
    expect(toolsText(base)).toBe('all tools');
    expect(toolsText({ ...base, enabled_tools: ['group:fs', 'todo'] })).toBe('group:fs, todo');
    expect(toolsText({ ...base, enabled_tools: [] })).toBe('none');
  });
});

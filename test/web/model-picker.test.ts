/**
 * The model picker's list (web/src/lib/model-picker.ts): models grouped by backend in a fixed
 * order, problems kept with their backend, the session's choice marked (also when its backend no
 * longer lists it), and the keys that move through the menu.
 */
import { describe, expect, it } from 'vitest';
import type { LlmModelList } from '../../src/protocol/llm.js';
import { choiceLabel, moveFocus, pickerGroups, sameChoice } from '../../web/src/lib/model-picker.js';

const list: LlmModelList = {
  models: [
    { backend: 'openai', model: 'remote-large', is_default: false },
    { backend: 'ollama', model: 'qwen3:4b', size_bytes: 2_500_000_000, is_default: true },
    { backend: 'openai', model: 'remote-model', is_default: true },
    { backend: 'ollama', model: 'llama3.2:1b', size_bytes: 808_000_000, is_default: false },
    { backend: 'ollama', model: 'qwen3:4b', is_default: true },
  ],
  problems: [{ backend: 'llamacpp', message: 'the llama.cpp runtime is not installed' }],
};

describe('pickerGroups', () => {
  it('groups by backend in a fixed order, keeps the server order inside, and drops repeats', () => {
    const groups = pickerGroups(list, null);
    expect(groups.map((g) => g.backend)).toEqual(['ollama', 'openai', 'llamacpp']);
    expect(groups[0]?.options.map((o) => o.model)).toEqual(['qwen3:4b', 'llama3.2:1b']);
    expect(groups[1]?.options.map((o) => o.model)).toEqual(['remote-large', 'remote-model']);
    expect(groups[0]?.options[0]).toMatchObject({ size: '2.5 GB', isDefault: true, current: false });
  });

  it('keeps a backend that could not list its models, with why', () => {
    const llamacpp = pickerGroups(list, null)[2];
    expect(llamacpp?.options).toEqual([]);
    expect(llamacpp?.problem).toBe('the llama.cpp runtime is not installed');
    expect(pickerGroups(list, null)[0]?.problem).toBeNull();
  });

  it('marks the session’s model, and only on its own backend', () => {
    const groups = pickerGroups(list, { backend: 'openai', model: 'remote-large' });
    const current = groups.flatMap((g) => g.options).filter((o) => o.current);
    expect(current.map((o) => `${o.backend}/${o.model}`)).toEqual(['openai/remote-large']);
  });

  it('still shows the session’s model when its backend no longer lists it', () => {
    const down: LlmModelList = { models: [], problems: [{ backend: 'ollama', message: 'Ollama is down' }] };
    const groups = pickerGroups(down, { backend: 'ollama', model: 'qwen3:8b' });
    expect(groups).toHaveLength(1);
    expect(groups[0]?.options).toEqual([
      expect.objectContaining({ model: 'qwen3:8b', current: true, isDefault: false }),
    ]);
    expect(groups[0]?.problem).toBe('Ollama is down');
  });

  it('shows nothing for an empty answer', () => {
    expect(pickerGroups({ models: [], problems: [] }, null)).toEqual([]);
  });

  it('keeps hostile model names as text: they are only ever shown, never parsed', () => {
    const name = '<img src=x onerror=alert(1)>';
    const groups = pickerGroups(
      { models: [{ backend: 'ollama', model: name, is_default: false }], problems: [] },
      null,
    );
    expect(groups[0]?.options[0]?.model).toBe(name);
  });
});

describe('choices', () => {
  it('compares backend and model', () => {
    expect(sameChoice({ backend: 'ollama', model: 'a' }, { backend: 'ollama', model: 'a' })).toBe(true);
    expect(sameChoice({ backend: 'ollama', model: 'a' }, { backend: 'openai', model: 'a' })).toBe(false);
    expect(sameChoice(null, { backend: 'ollama', model: 'a' })).toBe(false);
    expect(sameChoice(null, null)).toBe(false);
  });

  it('labels the button with the session’s model, or the profile default', () => {
    expect(choiceLabel({ backend: 'openai', model: 'remote-large' })).toBe('remote-large');
    expect(choiceLabel(null)).toBe('Profile default');
    expect(choiceLabel(undefined)).toBe('Profile default');
  });
});

describe('moveFocus', () => {
  it('moves with the arrows and wraps around', () => {
    expect(moveFocus(0, 'ArrowDown', 3)).toBe(1);
    expect(moveFocus(2, 'ArrowDown', 3)).toBe(0);
    expect(moveFocus(0, 'ArrowUp', 3)).toBe(2);
  });

  it('starts at an end when nothing is focused, and jumps with Home and End', () => {
    expect(moveFocus(-1, 'ArrowDown', 3)).toBe(0);
    expect(moveFocus(-1, 'ArrowUp', 3)).toBe(2);
    expect(moveFocus(1, 'Home', 3)).toBe(0);
    expect(moveFocus(1, 'End', 3)).toBe(2);
  });

  it('ignores other keys and empty menus', () => {
    expect(moveFocus(1, 'a', 3)).toBeNull();
    expect(moveFocus(0, 'ArrowDown', 0)).toBeNull();
  });
});

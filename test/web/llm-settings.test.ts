/**
 * The settings page's form (web/src/lib/llm-settings.ts): only real changes of settings the
 * environment does not fix are sent, an empty key field keeps the saved key, bad addresses and
 * oversized values are named before saving, and capabilities read as words.
 */
import { describe, expect, it } from 'vitest';
import type { LlmSettingsView } from '../../src/protocol/llm.js';
import {
  capabilityRows,
  settingsChanges,
  settingsDraft,
  settingsProblems,
} from '../../web/src/lib/llm-settings.js';

const view: LlmSettingsView = {
  values: {
    DEFAULT_LLM_BACKEND: 'ollama',
    OLLAMA_HOST: 'http://127.0.0.1:11434',
    OLLAMA_DEFAULT_MODEL: 'qwen3:4b',
    OPENAI_BASE_URL: 'https://api.openai.com/v1',
    OPENAI_API_KEY: '',
    OPENAI_MODEL: 'gpt-4o-mini',
    LLAMACPP_MODEL_PATH: '',
  },
  api_key_set: true,
  locked: ['OLLAMA_HOST'],
};

describe('settingsChanges', () => {
  it('sends nothing for an untouched form', () => {
    expect(settingsChanges(view, settingsDraft(view))).toEqual({});
  });

  it('sends the changed settings, trimmed', () => {
    const draft = {
      ...settingsDraft(view),
      DEFAULT_LLM_BACKEND: 'openai' as const,
      OPENAI_MODEL: ' gpt-4.1 ',
    };
    expect(settingsChanges(view, draft)).toEqual({ DEFAULT_LLM_BACKEND: 'openai', OPENAI_MODEL: 'gpt-4.1' });
  });

  it('never sends a locked setting, even when the field was changed', () => {
    const draft = { ...settingsDraft(view), OLLAMA_HOST: 'http://10.0.0.2:11434' };
    expect(settingsChanges(view, draft)).toEqual({});
  });

  it('keeps the saved key when the key field is empty, and sends a new one', () => {
    expect(settingsChanges(view, { ...settingsDraft(view), OPENAI_API_KEY: '   ' })).toEqual({});
    expect(settingsChanges(view, { ...settingsDraft(view), OPENAI_API_KEY: ' sk-new ' })).toEqual({
      OPENAI_API_KEY: 'sk-new',
    });
  });

  it('sends an emptied field, which returns the setting to its default', () => {
    expect(settingsChanges(view, { ...settingsDraft(view), OPENAI_MODEL: '' })).toEqual({ OPENAI_MODEL: '' });
  });
});

describe('settingsProblems', () => {
  const unlocked: LlmSettingsView = { ...view, locked: [] };

  it('accepts good addresses and empty ones (the default)', () => {
    const draft = {
      ...settingsDraft(unlocked),
      OLLAMA_HOST: '',
      OPENAI_BASE_URL: 'http://localhost:8080/v1',
    };
    expect(settingsProblems(unlocked, draft)).toEqual([]);
  });

  it('names a field whose address is wrong or hostile', () => {
    const draft = {
      ...settingsDraft(unlocked),
      OLLAMA_HOST: 'localhost:11434',
      OPENAI_BASE_URL: 'javascript:alert(1)',
    };
    const problems = settingsProblems(unlocked, draft);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^Ollama address: .*http:\/\//);
    expect(problems[1]).toMatch(/^Server address: .*http:\/\//);
  });

  it('names oversized values', () => {
    const draft = {
      ...settingsDraft(unlocked),
      OPENAI_MODEL: 'm'.repeat(201),
      LLAMACPP_MODEL_PATH: `/${'p'.repeat(5000)}.gguf`,
    };
    const problems = settingsProblems(unlocked, draft);
    expect(problems).toEqual(['Model: at most 200 characters.', 'Model file: at most 4096 characters.']);
  });

  it('does not judge a locked field: it is not sent', () => {
    expect(settingsProblems(view, { ...settingsDraft(view), OLLAMA_HOST: 'nonsense' })).toEqual([]);
  });
});

describe('capabilityRows', () => {
  it('says yes or no where the backend could tell, and that Navi assumes yes where it could not', () => {
    const rows = capabilityRows({
      tools: true,
      thinking: null,
      vision: false,
      context_length: 40_960,
      source: 'ollama /api/show',
    });
    expect(rows).toEqual([
      { label: 'Calls tools', value: 'yes', known: true },
      { label: 'Thinks (reasoning)', value: 'not known (assumed yes)', known: false },
      { label: 'Reads images', value: 'no', known: true },
      { label: 'Context', value: '40k tokens (40,960)', known: true },
    ]);
  });

  it('says when the context length is not known', () => {
    const rows = capabilityRows({
      tools: null,
      thinking: null,
      vision: null,
      context_length: null,
      source: 'none',
    });
    expect(rows[3]).toEqual({ label: 'Context', value: 'not known', known: false });
  });
});

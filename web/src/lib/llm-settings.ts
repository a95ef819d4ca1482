/**
 * The settings page's form of the LLM settings (docs/web.md#the-settings-page): the draft the
 * person edits, what of it is a change worth sending, what to fix before saving, and the
 * capabilities of the default model in words.
 */
import type {
  LlmSettingName,
  LlmSettings,
  LlmSettingsUpdate,
  LlmSettingsView,
  ModelCapabilitiesInfo,
} from '../../../src/protocol/llm.js';
import { contextText, serverUrlProblem } from './setup.js';

export const SETTING_TEXT: Record<LlmSettingName, { label: string; help: string }> = {
  DEFAULT_LLM_BACKEND: {
    label: 'Default backend',
    help: 'Where sessions think unless they or their profile choose.',
  },
  OLLAMA_HOST: { label: 'Ollama address', help: 'Ollama’s own address, e.g. http://127.0.0.1:11434.' },
  OLLAMA_DEFAULT_MODEL: { label: 'Ollama model', help: 'A model Ollama has pulled, e.g. qwen3:4b.' },
  OPENAI_BASE_URL: { label: 'Server address', help: 'Usually ends in /v1, e.g. http://localhost:8080/v1.' },
  OPENAI_API_KEY: { label: 'API key', help: 'Stored on the server only; it is never shown again.' },
  OPENAI_MODEL: { label: 'Model', help: 'One of the models the server lists.' },
  LLAMACPP_MODEL_PATH: {
    label: 'Model file',
    help: 'A .gguf file in the models folder (its name) or a full path; empty: the first one there.',
  },
};

export function settingsDraft(view: LlmSettingsView): LlmSettings {
  return { ...view.values };
}

/**
 * The settings of `draft` that differ from what the server holds, trimmed; locked ones are never
 * sent (they cannot change here), and an empty key field means "keep the saved key".
 */
export function settingsChanges(view: LlmSettingsView, draft: LlmSettings): LlmSettingsUpdate {
  const locked = new Set(view.locked);
  const out: Record<string, string> = {};
  for (const name of Object.keys(draft) as LlmSettingName[]) {
    if (locked.has(name)) continue;
    const value = draft[name].trim();
    if (name === 'OPENAI_API_KEY') {
      if (value !== '') out[name] = value;
      continue;
    }
    if (value !== view.values[name]) out[name] = value;
  }
  return out as LlmSettingsUpdate;
}

/** What to fix before saving, one sentence per field; empty when nothing. */
export function settingsProblems(view: LlmSettingsView, draft: LlmSettings): string[] {
  const changes = settingsChanges(view, draft);
  const problems: string[] = [];
  // An emptied field goes back to Navi's default, which is always valid.
  if (changes.OLLAMA_HOST) {
    const problem = serverUrlProblem(changes.OLLAMA_HOST, 'http://127.0.0.1:11434');
    if (problem) problems.push(`Ollama address: ${problem}`);
  }
  if (changes.OPENAI_BASE_URL) {
    const problem = serverUrlProblem(changes.OPENAI_BASE_URL, 'http://localhost:8080/v1');
    if (problem) problems.push(`Server address: ${problem}`);
  }
  for (const name of ['OLLAMA_DEFAULT_MODEL', 'OPENAI_MODEL'] as const) {
    if ((changes[name]?.length ?? 0) > 200)
      problems.push(`${SETTING_TEXT[name].label}: at most 200 characters.`);
  }
  if ((changes.LLAMACPP_MODEL_PATH?.length ?? 0) > 4096)
    problems.push(`${SETTING_TEXT.LLAMACPP_MODEL_PATH.label}: at most 4096 characters.`);
  return problems;
}

export interface CapabilityRow {
  label: string;
  value: string;
  /** The backend could tell (false: Navi assumes the model can). */
  known: boolean;
}

function yesNo(value: boolean | null): { value: string; known: boolean } {
  if (value === null) return { value: 'not known (assumed yes)', known: false };
  return { value: value ? 'yes' : 'no', known: true };
}

/** The default model's capabilities as rows of the settings page. */
export function capabilityRows(caps: ModelCapabilitiesInfo): CapabilityRow[] {
  return [
    { label: 'Calls tools', ...yesNo(caps.tools) },
    { label: 'Thinks (reasoning)', ...yesNo(caps.thinking) },
    { label: 'Reads images', ...yesNo(caps.vision) },
    caps.context_length === null
      ? { label: 'Context', value: 'not known', known: false }
      : {
          label: 'Context',
          value: `${contextText(caps.context_length)} tokens (${caps.context_length.toLocaleString('en-US')})`,
          known: true,
        },
  ];
}

/**
 * The setup screen's logic (docs/web.md#the-setup-screen): what choosing a model saves, whether
 * the environment lets it, what a connection test passed and failed, how far a download is, and
 * the status of the backends, asked again every few seconds while the screen is open so that a
 * server started meanwhile shows up by itself.
 */

import { reactive } from 'vue';
import type {
  ConnectionTestResult,
  LlmBackendId,
  LlmSettingName,
  LlmSettingsUpdate,
  LlmSettingsView,
  LlmStatus,
  ModelDownload,
} from '../../../src/protocol/llm.js';

export const BACKEND_LABELS: Record<LlmBackendId, string> = {
  ollama: 'Ollama',
  openai: 'OpenAI-compatible server',
  llamacpp: 'On this computer (llama.cpp)',
};

/**
 * "2.1 GB", "808 MB": decimal units, as model hubs and disks count, so a size reads the same
 * here as on the page the model comes from.
 */
export function modelSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '?';
  if (bytes < 1000) return `${Math.round(bytes)} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  // Three significant digits at most: "808 MB", "2.1 GB", "12.3 MB".
  const digits = value >= 100 || unit < 1 ? 0 : 1;
  return `${value.toFixed(digits)} ${units[unit]}`;
}

/** "32k" for a context length in tokens. */
export function contextText(tokens: number): string {
  if (tokens < 1024) return String(tokens);
  return `${Math.round(tokens / 1024)}k`;
}

export interface DownloadProgress {
  /** 0…1, or null while the size is not known. */
  fraction: number | null;
  /** Whole percent ("42%"), empty while the size is not known. */
  percent: string;
  /** "840 MB of 2.1 GB (40%)". */
  text: string;
}

export function downloadProgress(download: ModelDownload): DownloadProgress {
  const total = download.total_bytes;
  if (download.state === 'done') {
    const size = modelSize(total ?? download.bytes);
    return { fraction: 1, percent: '100%', text: `${size} downloaded` };
  }
  if (total === null || total <= 0) {
    return { fraction: null, percent: '', text: `${modelSize(download.bytes)} so far (size not known yet)` };
  }
  const fraction = Math.min(1, Math.max(0, download.bytes / total));
  // Floor, so "100%" shows only once every byte is there.
  const percent = `${Math.floor(fraction * 100)}%`;
  return { fraction, percent, text: `${modelSize(download.bytes)} of ${modelSize(total)} (${percent})` };
}

export const DOWNLOAD_STATE_TEXT: Record<ModelDownload['state'], string> = {
  running: 'Downloading',
  done: 'Downloaded',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

type Step = ConnectionTestResult['step'];
export const TEST_STEPS: readonly Step[] = ['connect', 'auth', 'models', 'model'];
export const STEP_LABELS: Record<Step, string> = {
  connect: 'Reach the server',
  auth: 'Access allowed (API key)',
  models: 'List its models',
  model: 'Find the model',
};

export interface TestStepView {
  step: Step;
  label: string;
  state: 'passed' | 'failed' | 'not-reached';
}

/**
 * Every step of a connection test and how it went: those before the step the result names
 * passed, that step passed or failed, and the later ones were not reached (a test without a
 * model ends at `models`).
 */
export function testSteps(result: ConnectionTestResult): TestStepView[] {
  const reached = TEST_STEPS.indexOf(result.step);
  return TEST_STEPS.map((step, i) => ({
    step,
    label: STEP_LABELS[step],
    state: i < reached ? 'passed' : i === reached ? (result.ok ? 'passed' : 'failed') : 'not-reached',
  }));
}

export type SavePlan = { ok: true; update: LlmSettingsUpdate } | { ok: false; problem: string };

/**
 * What may be saved of `update`: a setting the environment or `.env` fixes is dropped when the
 * choice keeps its value, and refuses the choice (saying what to change where) when it would
 * need another one, since the server would refuse it too.
 */
export function planSave(update: LlmSettingsUpdate, view: LlmSettingsView | null): SavePlan {
  const locked = new Set<LlmSettingName>(view?.locked ?? []);
  const out: LlmSettingsUpdate = {};
  const blocked: string[] = [];
  for (const [name, value] of Object.entries(update) as [LlmSettingName, string | undefined][]) {
    if (value === undefined) continue;
    if (!locked.has(name)) {
      Object.assign(out, { [name]: value });
      continue;
    }
    // The key is never sent back, so a locked one cannot be compared: any new key is a change.
    const current = name === 'OPENAI_API_KEY' ? '' : (view?.values[name] ?? '');
    if (value === current) continue;
    blocked.push(
      name === 'OPENAI_API_KEY'
        ? 'OPENAI_API_KEY (set there; leave the key field empty to use it)'
        : `${name} (set there to ${JSON.stringify(current)}; this choice needs ${JSON.stringify(value)})`,
    );
  }
  if (blocked.length > 0) {
    return {
      ok: false,
      problem: `Fixed by the environment or .env: ${blocked.join(', ')}. Change ${blocked.length === 1 ? 'it' : 'them'} there and restart Navi, or remove ${blocked.length === 1 ? 'it' : 'them'} there to choose here.`,
    };
  }
  return { ok: true, update: out };
}

export function ollamaChoice(url: string, model: string): LlmSettingsUpdate {
  return { DEFAULT_LLM_BACKEND: 'ollama', OLLAMA_HOST: url, OLLAMA_DEFAULT_MODEL: model };
}

export interface OpenAiForm {
  baseUrl: string;
  apiKey: string;
  model: string;
}

/** An empty key keeps the one saved (the server never sends it back). */
export function openAiChoice(form: OpenAiForm): LlmSettingsUpdate {
  return {
    DEFAULT_LLM_BACKEND: 'openai',
    OPENAI_BASE_URL: form.baseUrl.trim(),
    OPENAI_MODEL: form.model.trim(),
    ...(form.apiKey.trim() ? { OPENAI_API_KEY: form.apiKey.trim() } : {}),
  };
}

export function localChoice(fileName: string): LlmSettingsUpdate {
  return { DEFAULT_LLM_BACKEND: 'llamacpp', LLAMACPP_MODEL_PATH: fileName };
}

/** The server refuses longer values; saying so here names the field. */
const MAX_URL = 2048;
const MAX_MODEL = 200;
const MAX_KEY = 4096;

/** Why `raw` cannot be a server's address, or null. `example` shows what one looks like. */
export function serverUrlProblem(raw: string, example: string): string | null {
  const value = raw.trim();
  if (value === '') return `Enter the server's address, e.g. ${example}.`;
  if (value.length > MAX_URL)
    return `The address is ${value.length} characters long; at most ${MAX_URL} are accepted.`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `“${value.slice(0, 80)}” is not an address: write it in full, e.g. ${example}.`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `The address must start with http:// or https://, e.g. ${example}.`;
  if (url.username || url.password) return 'Put the key in the API key field, not in the address.';
  return null;
}

/** What to fix in the OpenAI-compatible form before testing (`needModel`: before saving). */
export function openAiFormProblem(form: OpenAiForm, needModel: boolean): string | null {
  const url = serverUrlProblem(form.baseUrl, 'http://localhost:8080/v1');
  if (url) return url;
  if (form.apiKey.length > MAX_KEY)
    return `The API key is longer than ${MAX_KEY} characters; check what was pasted.`;
  const model = form.model.trim();
  if (model.length > MAX_MODEL) return `The model name is longer than ${MAX_MODEL} characters.`;
  if (needModel && model === '')
    return 'Enter the model to use: “Test connection” lists the ones the server has.';
  return null;
}

const SHA256 = /^[0-9a-fA-F]{64}$/;

/** What to fix in a download request typed by hand (the server checks the source itself). */
export function downloadFormProblem(source: string, sha256: string): string | null {
  const value = source.trim();
  if (value === '')
    return 'Enter what to download: hf:org/repo/file.gguf, or the https:// address of a .gguf file.';
  if (value.length > MAX_URL)
    return `The source is ${value.length} characters long; at most ${MAX_URL} are accepted.`;
  if (sha256.trim() !== '' && !SHA256.test(sha256.trim()))
    return 'The checksum must be a SHA-256: 64 hexadecimal characters (or leave it empty).';
  return null;
}

/**
 * Runs `task` now and again `intervalMs` after each run finishes (never two at once) until the
 * returned function is called. A run that fails does not stop the next: the task shows its own
 * failures.
 */
export function repeat(task: () => Promise<void>, intervalMs: number): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const run = async (): Promise<void> => {
    try {
      await task();
    } catch {
      // Shown by the task; the next run may succeed.
    }
    if (!stopped) timer = setTimeout(() => void run(), intervalMs);
  };
  void run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export interface StatusState {
  status: LlmStatus | null;
  /** Why the status could not be asked, when the last attempt failed. */
  error: string | null;
}

/** `GET /llm/status`, kept for the app: a newer answer always wins over a slower older one. */
export class LlmStatusWatch {
  readonly state: StatusState = reactive({ status: null, error: null });
  private asked = 0;
  private answered = 0;

  constructor(
    private readonly load: () => Promise<LlmStatus>,
    private readonly describe: (error: unknown) => string,
  ) {}

  async refresh(): Promise<LlmStatus | null> {
    const mine = ++this.asked;
    try {
      const status = await this.load();
      if (mine > this.answered) {
        this.answered = mine;
        this.state.status = status;
        this.state.error = null;
      }
    } catch (err) {
      if (mine > this.answered) {
        this.answered = mine;
        this.state.error = this.describe(err);
      }
    }
    return this.state.status;
  }

  /** Asks now and every `intervalMs` until the returned function is called. */
  poll(intervalMs: number): () => void {
    return repeat(async () => {
      await this.refresh();
    }, intervalMs);
  }
}

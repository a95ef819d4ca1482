/**
 * What `GET /llm/status` and `GET /llm/models` report: every backend asked in parallel, each
 * under a short time limit, so a server that hangs makes the answer slower by that limit at
 * most and never fails it. A backend that cannot answer is a `ready: false` or a problem.
 */
import { capabilitiesInfo } from '../llm/capabilities.js';
import type { BackendRegistry } from '../llm/registry.js';
import type { LlmBackend, ModelCapabilities } from '../llm/types.js';
import type {
  LlmBackendId,
  LlmBackendStatus,
  LlmModelList,
  LlmModelOption,
  LlmStatus,
  ModelCapabilitiesInfo,
} from '../protocol/llm.js';
import { getJson, ollamaModelNames } from './llm-probe-http.js';

/** Where Ollama listens when nobody configured it. */
export const OLLAMA_DEFAULT_URL = 'http://127.0.0.1:11434';

export interface LlmStatusDeps {
  backends: BackendRegistry;
  /** OLLAMA_HOST in effect now. */
  ollamaHost(): string;
  /** What a model can do (the capability cache when there is one); never rejects. */
  capabilities?(backend: LlmBackend, model: string, signal: AbortSignal): Promise<ModelCapabilities>;
  /** Limit for each backend's answer (default 4 s). */
  timeoutMs?: number;
}

const BACKEND_IDS: readonly LlmBackendId[] = ['ollama', 'openai', 'llamacpp'];
const isBackendId = (id: string): id is LlmBackendId => (BACKEND_IDS as readonly string[]).includes(id);

/** `work(signal)`, or `onTimeout()` once `ms` have passed (and `signal` aborts the work). */
export async function within<T>(
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
  onTimeout: () => T,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<T>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(onTimeout());
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** A backend's status, with the models its health check saw (not sent to clients). */
type CheckedStatus = LlmBackendStatus & { models?: string[] };

async function backendStatus(backend: LlmBackend, timeoutMs: number): Promise<CheckedStatus> {
  const base = { id: backend.id as LlmBackendId, default_model: backend.defaultModel };
  return within<CheckedStatus>(
    timeoutMs,
    async (signal) => {
      try {
        const report = await backend.checkHealth(signal);
        return {
          ...base,
          ready: report.ok,
          detail: report.detail,
          ...(report.models && { models: report.models }),
        };
      } catch (err) {
        // checkHealth resolves by contract; a backend that throws is still only "not ready".
        return { ...base, ready: false, detail: `${backend.describe()}: ${(err as Error).message}` };
      }
    },
    () => ({
      ...base,
      ready: false,
      detail: `${backend.describe()} did not answer within ${seconds(timeoutMs)}`,
    }),
  );
}

/** The backend statuses, the default one included even when it cannot be built. */
async function allStatuses(backends: BackendRegistry, timeoutMs: number): Promise<CheckedStatus[]> {
  const statuses = await Promise.all(
    backends
      .list()
      .filter((b) => isBackendId(b.id))
      .map((b) => backendStatus(b, timeoutMs)),
  );
  const defaultId = backends.defaultId();
  if (isBackendId(defaultId) && !statuses.some((s) => s.id === defaultId)) {
    let detail: string;
    try {
      detail = backends.get(defaultId).describe();
    } catch (err) {
      detail = (err as Error).message;
    }
    statuses.push({ id: defaultId, ready: false, detail, default_model: '' });
  }
  return statuses;
}

/**
 * An Ollama answering at OLLAMA_HOST or at its default address, with its installed models; the
 * first that answers. Only its model list is read. `known` is the list the Ollama backend's
 * health check already read at OLLAMA_HOST, which is then not asked a second time.
 */
export async function detectOllama(
  ollamaHost: string,
  timeoutMs: number,
  known?: Promise<string[] | undefined>,
): Promise<{ url: string; models: string[] } | null> {
  const host = ollamaHost.replace(/\/+$/, '');
  const urls = [...new Set([host, OLLAMA_DEFAULT_URL])];
  const found = await Promise.all(
    urls.map(async (url) => {
      let models = url === host && known ? await known : undefined;
      if (!models) {
        const result = await getJson(`${url}/api/tags`, { timeoutMs, maxBytes: 1024 * 1024 });
        models = result.kind === 'json' ? ollamaModelNames(result.value) : undefined;
      }
      return models ? { url, models } : null;
    }),
  );
  return found.find((f) => f !== null) ?? null;
}

async function defaultCapabilities(
  deps: LlmStatusDeps,
  backend: LlmBackend,
  timeoutMs: number,
): Promise<ModelCapabilitiesInfo | null> {
  const ask =
    deps.capabilities ?? ((b, model, signal) => b.probe?.(model, signal) ?? Promise.resolve(undefined));
  return within(
    timeoutMs,
    async (signal) => {
      try {
        const caps = await ask(backend, backend.defaultModel, signal);
        return caps ? capabilitiesInfo(caps) : null;
      } catch {
        return null;
      }
    },
    () => null,
  );
}

export async function llmStatus(deps: LlmStatusDeps): Promise<LlmStatus> {
  const timeoutMs = deps.timeoutMs ?? 4000;
  const defaultId = deps.backends.defaultId();
  const checked = allStatuses(deps.backends, timeoutMs);
  // The Ollama backend's health check has read the model list at OLLAMA_HOST already.
  const known = checked.then((all) => all.find((b) => b.id === 'ollama')?.models);
  const [statuses, ollama] = await Promise.all([
    checked,
    detectOllama(deps.ollamaHost(), Math.min(timeoutMs, 2000), known),
  ]);
  const backends = statuses.map(({ models: _models, ...status }) => status);
  const own = backends.find((b) => b.id === defaultId);
  let capabilities: ModelCapabilitiesInfo | null = null;
  if (own?.ready) capabilities = await defaultCapabilities(deps, deps.backends.get(defaultId), timeoutMs);
  return {
    default_backend: (isBackendId(defaultId) ? defaultId : 'ollama') as LlmBackendId,
    default_model: own?.default_model ?? '',
    needs_setup: own?.ready !== true,
    backends,
    ollama_detected: ollama,
    capabilities,
  };
}

/** Every backend's models, asked in parallel; a backend that cannot list them is a problem. */
export async function llmModels(deps: LlmStatusDeps): Promise<LlmModelList> {
  const timeoutMs = deps.timeoutMs ?? 4000;
  const lists = await Promise.all(
    deps.backends
      .list()
      .filter((b) => isBackendId(b.id))
      .map((backend) =>
        within<{ models: LlmModelOption[]; problem?: string }>(
          timeoutMs,
          async (signal) => {
            const id = backend.id as LlmBackendId;
            const option = (model: string, size?: number): LlmModelOption => ({
              backend: id,
              model,
              ...(size !== undefined && { size_bytes: size }),
              is_default: model === backend.defaultModel,
            });
            if (!backend.listModels) {
              return {
                models: [option(backend.defaultModel)],
                problem: `${backend.describe()} cannot list its models; only its default model is offered`,
              };
            }
            try {
              const listed = await backend.listModels(signal);
              return { models: listed.map((m) => option(m.name, m.sizeBytes)) };
            } catch (err) {
              return { models: [], problem: (err as Error).message };
            }
          },
          () => ({
            models: [],
            problem: `${backend.describe()} did not list its models within ${seconds(timeoutMs)}`,
          }),
        ).then((r) => ({ ...r, backend: backend.id as LlmBackendId })),
      ),
  );
  return {
    models: lists.flatMap((l) => l.models),
    problems: lists.flatMap((l) => (l.problem ? [{ backend: l.backend, message: l.problem }] : [])),
  };
}

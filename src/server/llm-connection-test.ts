/**
 * `POST /llm/test`: tries a server before it is saved, one step at a time (connect, API key,
 * list the models, find the model), and says which step failed and what to do. The request goes
 * to a URL the client names; the route is behind the same access rules as every route, only
 * http(s) URLs are accepted, nothing is sent but a GET, and a server that does not answer ends
 * the test after `timeoutMs`.
 */
import type { ConnectionTestRequest, ConnectionTestResult } from '../protocol/llm.js';
import {
  getJson,
  hasOllamaModel,
  type JsonGetResult,
  ollamaModelNames,
  openAiModelIds,
} from './llm-probe-http.js';

export const CONNECTION_TEST_TIMEOUT_MS = 8000;

type Step = ConnectionTestResult['step'];

const fail = (step: Step, message: string): ConnectionTestResult => ({ ok: false, step, message });

/** The base URL without trailing slashes, or undefined when it is not an http(s) URL. */
export function normaliseBaseUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  return raw.trim().replace(/\/+$/, '');
}

/** What went wrong before a usable answer came back, as the failed step. */
function transportFailure(
  result: JsonGetResult,
  url: string,
  timeoutMs: number,
  fix: string,
): ConnectionTestResult {
  switch (result.kind) {
    case 'unreachable':
      return fail('connect', `Nothing answers at ${url} (${result.reason}). ${fix}`);
    case 'timeout':
      return fail(
        'connect',
        `${url} did not answer within ${timeoutMs / 1000} s. Check the address and that the server is running and not overloaded.`,
      );
    case 'redirect':
      return fail(
        'connect',
        `${url} answered with a redirect (HTTP ${result.status}) to ${result.location || 'another address'}; use the address it redirects to.`,
      );
    default:
      return fail('connect', `${url} gave an unexpected answer.`);
  }
}

async function testOllama(
  base: string,
  model: string | undefined,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ConnectionTestResult> {
  const url = `${base}/api/tags`;
  const result = await getJson(url, { timeoutMs, ...(signal && { signal }) });
  if (result.kind === 'status') {
    if (result.status === 401 || result.status === 403) {
      return fail(
        'auth',
        `${url} answered HTTP ${result.status}: something in front of Ollama wants credentials, which Navi does not send to Ollama. Use an address that reaches Ollama directly.`,
      );
    }
    return fail(
      'models',
      `${url} answered HTTP ${result.status}, so this is not an Ollama server. The address is Ollama's own (http://host:11434), without /api or /v1.`,
    );
  }
  if (result.kind === 'not-json') {
    return fail(
      'models',
      `${url} did not answer with Ollama's model list. The address is Ollama's own (http://host:11434), without /api or /v1.`,
    );
  }
  if (result.kind !== 'json') {
    return transportFailure(
      result,
      base,
      timeoutMs,
      'Start Ollama (run ollama serve), or check the address and port.',
    );
  }
  const models = ollamaModelNames(result.value);
  if (!models) {
    return fail(
      'models',
      `${url} did not answer with Ollama's model list; check that ${base} is an Ollama server.`,
    );
  }
  return findModel(models, model, base, (m) => `run ollama pull ${m} on that machine, or choose one it has`);
}

async function testOpenAi(
  base: string,
  apiKey: string,
  model: string | undefined,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ConnectionTestResult> {
  const url = `${base}/models`;
  const headers: Record<string, string> = apiKey !== '' ? { authorization: `Bearer ${apiKey}` } : {};
  const result = await getJson(url, { headers, timeoutMs, ...(signal && { signal }) });
  if (result.kind === 'status') {
    if (result.status === 401 || result.status === 403) {
      return fail(
        'auth',
        apiKey === ''
          ? `${url} answered HTTP ${result.status}: the server wants an API key. Enter the key it gave you.`
          : `${url} answered HTTP ${result.status}: the server refused the API key. Check the key (and that it may list models).`,
      );
    }
    if (result.status === 404) {
      return fail(
        'models',
        `${url} answered HTTP 404: no model list there. The address of an OpenAI-compatible server usually ends in /v1 (e.g. http://localhost:8080/v1).`,
      );
    }
    return fail(
      'models',
      `${url} answered HTTP ${result.status}${result.body ? `: ${result.body.slice(0, 200)}` : ''}.`,
    );
  }
  if (result.kind === 'not-json') {
    return fail(
      'models',
      `${url} did not answer with a model list (JSON). The address of an OpenAI-compatible server usually ends in /v1.`,
    );
  }
  if (result.kind !== 'json') {
    return transportFailure(result, base, timeoutMs, 'Start the server, or check the address and port.');
  }
  const models = openAiModelIds(result.value);
  if (!models) {
    return fail(
      'models',
      `${url} did not answer with an OpenAI-style model list ({"data": [{"id": …}]}); check that ${base} is an OpenAI-compatible server.`,
    );
  }
  return findModel(models, model, base, () => 'choose one of the models it lists');
}

function findModel(
  models: string[],
  model: string | undefined,
  base: string,
  advice: (model: string) => string,
): ConnectionTestResult {
  const listed = models.slice(0, 200);
  if (model === undefined || model.trim() === '') {
    return {
      ok: true,
      step: 'models',
      message: `${base} answers and lists ${models.length} model(s).`,
      models: listed,
    };
  }
  const present = models.includes(model) || hasOllamaModel(models, model);
  if (!present) {
    const some = models.slice(0, 8).join(', ') || 'none';
    return {
      ok: false,
      step: 'model',
      message: `${base} answers, but has no model "${model}": ${advice(model)} (it has: ${some}).`,
      models: listed,
    };
  }
  return {
    ok: true,
    step: 'model',
    message: `${base} answers and has the model "${model}".`,
    models: listed,
  };
}

/**
 * Runs the test; never throws for what the server does. `savedKey` is used when the request
 * names no key and asks about the server the key was saved for (the client never sees it).
 */
export async function testConnection(
  request: ConnectionTestRequest,
  base: string,
  savedKey: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ConnectionTestResult> {
  const timeoutMs = options.timeoutMs ?? CONNECTION_TEST_TIMEOUT_MS;
  if (request.backend === 'ollama') return testOllama(base, request.model, timeoutMs, options.signal);
  return testOpenAi(base, request.api_key ?? savedKey, request.model, timeoutMs, options.signal);
}

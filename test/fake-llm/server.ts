/**
 * A scripted fake LLM server over real HTTP on 127.0.0.1, speaking Ollama's NDJSON API and the
 * OpenAI SSE API, so backend code runs for real in tests and benchmarks.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fakeEmbedding } from './embeddings.js';
import { strictRolesBody, strictRolesProblem } from './strict-roles.js';
import type {
  EndpointFault,
  FakeLlm,
  FakeLlmOptions,
  FakeModelInfo,
  RecordedBody,
  RecordedRequest,
  ReplyScript,
  ScriptedReply,
  WireFormat,
} from './types.js';
import { framesFor, malformedFrame, wholeAnswer } from './wire.js';

type Kind = RecordedRequest['kind'];

const routes: Record<string, { format: WireFormat; kind: Kind; method: string }> = {
  '/api/chat': { format: 'ollama', kind: 'chat', method: 'POST' },
  '/api/tags': { format: 'ollama', kind: 'models', method: 'GET' },
  '/api/show': { format: 'ollama', kind: 'show', method: 'POST' },
  '/api/embed': { format: 'ollama', kind: 'embed', method: 'POST' },
  '/v1/chat/completions': { format: 'openai', kind: 'chat', method: 'POST' },
  '/v1/models': { format: 'openai', kind: 'models', method: 'GET' },
  '/v1/embeddings': { format: 'openai', kind: 'embed', method: 'POST' },
};

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const models = options.models ?? ['test-model'];
  const dimension = options.embeddingDimension ?? 64;
  const queue: ScriptedReply[] = [];
  let fallback: ScriptedReply | undefined = options.defaultReply;
  const endpointErrors = new Map<'models' | 'show' | 'embed', EndpointFault>();
  const modelInfo = new Map<string, FakeModelInfo>(Object.entries(options.modelInfo ?? {}));
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of [...listeners]) l();
  };

  const waitUntil = (test: () => boolean, what: string, timeoutMs: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (!test()) return;
        listeners.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        const seen = requests.map((r) => `${r.method} ${r.path}${r.aborted ? ' (aborted)' : ''}`).join(', ');
        reject(new Error(`fake LLM: timed out waiting for ${what}; requests so far: ${seen || 'none'}`));
      }, timeoutMs);
      listeners.add(check);
      check();
    });

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: `fake LLM: ${String(error)}` });
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Taken before the body is read: the moment the request's head arrived.
    const receivedAt = performance.now();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = routes[path];
    const raw = await readBody(req);
    let body: RecordedBody = {};
    if (raw.trim() !== '') {
      try {
        body = JSON.parse(raw) as RecordedBody;
      } catch {
        sendJson(res, 400, { error: 'fake LLM: the request body is not JSON' });
        return;
      }
    }
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      format: route?.format ?? (path.startsWith('/v1/') ? 'openai' : 'ollama'),
      kind: route?.kind ?? 'unknown',
      body,
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]),
      ),
      aborted: false,
      receivedAt,
    };
    requests.push(record);
    let cutByUs = false;
    res.on('close', () => {
      if (!res.writableFinished && !cutByUs) {
        record.aborted = true;
        notify();
      }
    });
    notify();

    if (!route || route.method !== req.method) {
      sendJson(res, 404, { error: `fake LLM: no route for ${req.method} ${path}` });
      return;
    }
    if (
      route.format === 'openai' &&
      options.apiKey &&
      req.headers.authorization !== `Bearer ${options.apiKey}`
    ) {
      sendJson(res, 401, {
        error: {
          message: 'Incorrect API key provided.',
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      });
      return;
    }
    if (route.kind === 'models' || route.kind === 'show' || route.kind === 'embed') {
      const failure = endpointErrors.get(route.kind);
      if (failure && 'hang' in failure) return; // the 'close' listener records the client giving up
      if (failure) sendRaw(res, failure.status, failure.body);
      else if (route.kind === 'models') sendJson(res, 200, modelList(route.format));
      else if (route.kind === 'show') show(res, body.model);
      else sendJson(res, 200, embeddings(route.format, body));
      return;
    }
    if (options.strictRoles) {
      const problem = strictRolesProblem(body.messages ?? []);
      if (problem) {
        sendRaw(res, 400, strictRolesBody(route.format, problem));
        return;
      }
    }

    const scripted = queue.shift() ?? fallback;
    if (!scripted) {
      sendJson(res, 500, { error: 'fake LLM: no scripted reply left (enqueue one, or setDefault)' });
      return;
    }
    const script = typeof scripted === 'function' ? scripted(record) : scripted;
    await play(res, route.format, script, record, () => {
      cutByUs = true;
    });
  }

  async function play(
    res: ServerResponse,
    format: WireFormat,
    script: ReplyScript,
    record: RecordedRequest,
    markCut: () => void,
  ): Promise<void> {
    if (script.hang) return; // the 'close' listener records the client giving up
    if (script.httpError) {
      sendRaw(res, script.httpError.status, script.httpError.body);
      return;
    }
    const cut = () => {
      markCut();
      // end() rather than destroy(): the chunks already written must reach the client first.
      const socket = res.socket;
      socket?.end(() => socket.destroy());
    };
    if (record.body.stream === false) {
      if (script.delayMs) await sleep(script.delayMs);
      if (script.cutAfterChunks !== undefined) cut();
      else if (script.malformed) sendRaw(res, 200, '{"model": "half an object"');
      else sendJson(res, 200, wholeAnswer(format, script, record));
      return;
    }

    const frames = framesFor(format, script, record);
    if (script.malformed) frames.splice(Math.floor(frames.length / 2), 0, malformedFrame(format));
    res.writeHead(200, {
      'content-type': format === 'ollama' ? 'application/x-ndjson' : 'text/event-stream',
      'cache-control': 'no-cache',
    });
    res.flushHeaders();
    let sent = 0;
    for (const frame of frames) {
      if (res.destroyed) return;
      if (script.cutAfterChunks !== undefined && sent >= script.cutAfterChunks) return cut();
      if (script.stallAfterChunks !== undefined && sent >= script.stallAfterChunks) return;
      if (sent > 0) await (script.delayMs ? sleep(script.delayMs) : nextTick());
      if (res.destroyed) return;
      if (!res.write(frame))
        await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
      sent++;
    }
    if (script.cutAfterChunks !== undefined && sent >= script.cutAfterChunks) return cut();
    res.end();
  }

  function modelList(format: WireFormat): unknown {
    if (format === 'ollama') {
      return {
        models: models.map((name) => ({
          name,
          model: name,
          modified_at: new Date(0).toISOString(),
          size: 1,
          details: {},
        })),
      };
    }
    return {
      object: 'list',
      data: models.map((id) => ({
        id,
        object: 'model',
        created: 0,
        owned_by: 'fake',
        ...modelInfo.get(id)?.openai,
      })),
    };
  }

  /** Ollama's `/api/show`: 404 for a model it does not have, as Ollama answers. */
  function show(res: ServerResponse, name: unknown): void {
    const model = typeof name === 'string' ? name : '';
    const known = models.find((m) => m === model || m === `${model}:latest`);
    if (!known) {
      sendJson(res, 404, { error: `model '${model}' not found` });
      return;
    }
    sendJson(
      res,
      200,
      modelInfo.get(known)?.show ?? {
        modelfile: '',
        parameters: '',
        template: '{{ .Prompt }}',
        details: { format: 'gguf', family: 'fake', families: ['fake'], parameter_size: '1B' },
        model_info: { 'general.architecture': 'fake' },
        // What the fake can do: it calls tools, streams reasoning and takes images.
        capabilities: ['completion', 'tools', 'thinking', 'vision'],
      },
    );
  }

  function embeddings(format: WireFormat, body: RecordedBody): unknown {
    const inputs = Array.isArray(body.input) ? body.input : [body.input ?? ''];
    const vectors = inputs.map((text) => fakeEmbedding(String(text), dimension));
    const model = body.model ?? 'test-model';
    if (format === 'ollama') return { model, embeddings: vectors };
    return {
      object: 'list',
      model,
      data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
    };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    ollamaUrl: url,
    openaiUrl: `${url}/v1`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setDefault: (reply) => {
      fallback = reply;
    },
    setEndpointError: (kind, error) => {
      if (error) endpointErrors.set(kind, error);
      else endpointErrors.delete(kind);
    },
    setModelInfo: (model, info) => {
      if (info) modelInfo.set(model, info);
      else modelInfo.delete(model);
    },
    reset: () => {
      queue.length = 0;
      fallback = undefined;
      endpointErrors.clear();
      modelInfo.clear();
      for (const [model, info] of Object.entries(options.modelInfo ?? {})) modelInfo.set(model, info);
      requests.length = 0;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    waitForRequests: async (n, timeoutMs = 10_000) => {
      await waitUntil(() => requests.length >= n, `${n} request(s)`, timeoutMs);
      return requests.slice(0, n);
    },
    waitForAborted: (n, timeoutMs = 10_000) =>
      waitUntil(() => requests.filter((r) => r.aborted).length >= n, `${n} aborted request(s)`, timeoutMs),
    activeConnections: () => sockets.size,
    get abortedRequests() {
      return requests.filter((r) => r.aborted).length;
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendRaw(res: ServerResponse, status: number, body: string): void {
  let type = 'text/plain; charset=utf-8';
  try {
    JSON.parse(body);
    type = 'application/json';
  } catch {
    // Plain text, as some proxies answer.
  }
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Navi's MCP server over Streamable HTTP at /mcp (docs/mcp-server.md), driven by the official
 * SDK client against a real Navi on a real port with the fake LLM server as its model: the tools,
 * progress, continuing a session, refused confirmations, bad arguments, cancellation, the access
 * check with and without NAVI_API_TOKEN, the cap on open MCP sessions and their idle time.
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import Fastify from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/server/errors.js';
import { naviMcpRoutes } from '../../src/server/navi-mcp/http-route.js';
import { createNaviMcpServer, type NaviMcpDeps } from '../../src/server/navi-mcp/server.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import type { RecordedRequest } from '../fake-llm/index.js';
import { guardedTool } from '../support/guarded-tool.js';
import { askNavi, call, textOf } from '../support/navi-mcp-client.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

const everydayTool: ToolDefinition = {
  name: 'everyday_action',
  description: 'Looks something up.',
  parameters: { type: 'object', properties: { what: { type: 'string' } } },
  async execute(params) {
    return { success: true, output: `found ${String(params.what)}\nmore lines` };
  },
};

const profiles = profilesDir([
  { ...plainProfile, confirm_tools: ['guarded_*'] },
  { ...plainProfile, id: 'other', name: 'Other' },
]);

const guarded = guardedTool();
const clients: Client[] = [];

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'navi-mcp-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  );
  clients.push(client);
  return client;
}

/** A raw initialize request; resolves to the status and the Mcp-Session-Id it got. */
async function initialize(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    }),
  });
  await res.text();
  return { status: res.status, sessionId: res.headers.get('mcp-session-id') };
}

/** A ping in session `id`: its HTTP status (404 once the session is gone). */
async function ping(url: string, id: string): Promise<number> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': id,
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
  });
  await res.text();
  return res.status;
}

/** A client of a Navi MCP server of its own on `deps`, connected in memory. */
async function inMemoryClient(deps: NaviMcpDeps): Promise<Client> {
  const server = createNaviMcpServer(deps);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'navi-mcp-test', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

describe('Navi as an MCP server over HTTP', () => {
  let navi: NaviWithLlm;
  beforeAll(async () => {
    navi = await startNaviWithLlm({
      settings: { PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
      extraTools: [guarded, everydayTool],
    });
  });
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    navi.fake.reset();
  });
  afterAll(async () => {
    await navi?.close();
  });

  it('lists its four tools with their schemas and annotations', async () => {
    const client = await connect(navi.navi.url);
    expect(client.getServerVersion()?.name).toBe('navi');
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual(['ask_navi', 'get_session', 'list_sessions', 'search_memory']);
    const ask = byName.get('ask_navi');
    expect(ask?.inputSchema.required).toEqual(['message']);
    expect(Object.keys(ask?.outputSchema?.properties ?? {}).sort()).toEqual([
      'answer',
      'session_id',
      'stopped',
    ]);
    expect(ask?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: true,
    });
    for (const name of ['search_memory', 'list_sessions', 'get_session'])
      expect(byName.get(name)?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('answers with the session id, reports progress, and continues the session', async () => {
    const client = await connect(navi.navi.url);
    navi.fake.enqueue(
      { toolCalls: [{ name: 'everyday_action', arguments: { what: 'the weather' } }] },
      { text: 'It is sunny in Lisbon.' },
    );
    const first = await askNavi(client, { message: 'How is the weather?' }, {});
    expect(first.result.isError).toBeFalsy();
    expect(first.answer).toBe('It is sunny in Lisbon.');
    expect(textOf(first.result)).toContain(`session_id: ${first.sessionId}`);
    expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const messages = first.progress.map((p) => p.message ?? '');
    expect(messages).toContain('→ everyday_action {"what":"the weather"}');
    expect(messages).toContain('✓ everyday_action: found the weather');
    const steps = first.progress.map((p) => p.progress);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(new Set(steps).size).toBe(steps.length);

    navi.fake.enqueue({ text: 'Tomorrow too.' });
    const second = await askNavi(client, { message: 'And tomorrow?', session_id: first.sessionId });
    expect(second).toMatchObject({ answer: 'Tomorrow too.', sessionId: first.sessionId });
    const sent = navi.fake.requests.filter((r) => r.kind === 'chat').at(-1)?.body.messages ?? [];
    expect(sent.map((m) => m.content)).toEqual(
      expect.arrayContaining(['How is the weather?', 'And tomorrow?']),
    );

    const listed = await call(client, 'list_sessions', {});
    const sessions = (listed.structuredContent as { sessions: { id: string; profile: string }[] }).sessions;
    expect(sessions).toContainEqual(expect.objectContaining({ id: first.sessionId, profile: 'plain' }));

    const read = await call(client, 'get_session', { id: first.sessionId });
    const shown = (
      read.structuredContent as {
        messages: { role: string; content: string | null; tool_calls?: string[] }[];
      }
    ).messages;
    expect(shown.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
    expect(shown[1]?.tool_calls).toEqual(['everyday_action {"what":"the weather"}']);
    expect(shown[2]?.content).toBe('✓ everyday_action: found the weather');
    expect(shown.at(-1)?.content).toBe('Tomorrow too.');
    const newest = await call(client, 'get_session', { id: first.sessionId, limit: 2 });
    expect(newest.structuredContent).toMatchObject({ earlier_messages: true });
  });

  it('refuses a tool that needs confirmation, saying nobody on an MCP host can approve it', async () => {
    const client = await connect(navi.navi.url);
    navi.fake.enqueue(
      { toolCalls: [{ name: 'guarded_action', arguments: { what: 'delete the backups' } }] },
      { text: 'I could not do that here.' },
    );
    const asked = await askNavi(client, { message: 'Delete the backups.' });
    expect(guarded.calls).toEqual([]);
    expect(asked.answer).toBe('I could not do that here.');
    expect(asked.progress.map((p) => p.message).join('\n')).toContain('✗ guarded_action: ');
    const toolResult = navi.fake.requests.at(-1)?.body.messages?.find((m) => m.role === 'tool');
    expect(String(toolResult?.content)).toContain("Navi's MCP server, where nobody can approve a tool");
  });

  it('answers bad arguments with errors that say what is wrong', async () => {
    const client = await connect(navi.navi.url);
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['ask_navi', {}, /message/],
      ['ask_navi', { message: 42 }, /message/],
      ['ask_navi', { message: '' }, /message is empty/],
      ['ask_navi', { message: 'x'.repeat(1_000_001) }, /longer than 1000000 characters/],
      ['ask_navi', { message: 'hi', session_id: 'not-a-session' }, /not a Navi session id/],
      [
        'ask_navi',
        { message: 'hi', session_id: '00000000-0000-4000-8000-000000000000' },
        /no session 00000000/,
      ],
      ['ask_navi', { message: 'hi', profile: 'nope' }, /no agent profile "nope"\. Profiles: .*plain/],
      ['get_session', { id: '../../etc/passwd' }, /not a Navi session id/],
      ['get_session', { id: '00000000-0000-4000-8000-000000000000' }, /no session/],
      ['get_session', {}, /id/],
      ['list_sessions', { limit: 'ten' }, /limit/],
      ['list_sessions', { limit: 0 }, /at least 1/],
      ['search_memory', { query: 7 }, /query/],
    ];
    for (const [name, args, expected] of cases) {
      const result = await call(client, name, args);
      expect(result.isError, `${name} ${JSON.stringify(args).slice(0, 80)}`).toBe(true);
      expect(textOf(result)).toMatch(expected);
    }
    expect(navi.fake.requests.filter((r) => r.kind === 'chat')).toEqual([]);
  });

  it('refuses a profile that is not the session’s', async () => {
    const client = await connect(navi.navi.url);
    const id = await navi.navi.createSession('plain');
    const result = await call(client, 'ask_navi', { message: 'hi', session_id: id, profile: 'other' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('uses the profile "plain", not "other"');
  });

  it('refuses a second message while the session answers, and stops the run when the call is cancelled', async () => {
    const client = await connect(navi.navi.url);
    const id = await navi.navi.createSession('plain');
    const isMine = (r: RecordedRequest) => r.body.messages?.at(-1)?.content === 'Take your time.';
    navi.fake.setDefault((r) => (isMine(r) ? { hang: true } : { text: 'Noted.' }));
    const cancel = new AbortController();
    const first = askNavi(client, { message: 'Take your time.', session_id: id }, { signal: cancel.signal });
    for (let n = 1; !navi.fake.requests.some(isMine); n++) await navi.fake.waitForRequests(n);
    const busy = await call(client, 'ask_navi', { message: 'Me too.', session_id: id });
    expect(busy.isError).toBe(true);
    expect(textOf(busy)).toContain('already answering');
    cancel.abort();
    await expect(first).rejects.toThrow();
    await navi.fake.waitForAborted(1);
    // The stopped run has saved and let go of the session: a new message runs there.
    await navi.navi.app.navi.runs.idle(id);
    navi.fake.setDefault(undefined);
    navi.fake.enqueue({ text: 'Done now.' });
    const next = await askNavi(client, { message: 'Again?', session_id: id });
    expect(next.answer).toBe('Done now.');
  });

  it('leaves no empty session behind when the run of a new one cannot start', async () => {
    const { services, runs } = navi.navi.app.navi;
    const ids = async () => (await services.sessions.list()).map((s) => s.id).sort();
    const before = await ids();
    // The real registry (busy() and the rest) whose start refuses: its prototype keeps the methods.
    const refusing = (err: Error) => ({
      services,
      runs: Object.assign(Object.create(runs) as typeof runs, { start: () => Promise.reject(err) }),
    });

    const closing = await inMemoryClient(refusing(new ApiError('SHUTTING_DOWN')) as unknown as NaviMcpDeps);
    const refused = await askNavi(closing, { message: 'Hello?' });
    expect(refused.result.isError).toBe(true);
    expect(textOf(refused.result)).toContain('Try again in a moment');
    expect(await ids()).toEqual(before);

    const broken = await inMemoryClient(refusing(new Error('the registry broke')) as unknown as NaviMcpDeps);
    const failed = await askNavi(broken, { message: 'Hello?' });
    expect(failed.result.isError).toBe(true);
    expect(textOf(failed.result)).toContain('the registry broke');
    expect(await ids()).toEqual(before);

    // A session the host named is the host's: a refused run leaves it as it was.
    const kept = await services.sessions.create({ id: crypto.randomUUID(), profile_id: 'plain' });
    const again = await askNavi(closing, { message: 'Hello?', session_id: kept.id });
    expect(again.result.isError).toBe(true);
    expect(await services.sessions.get(kept.id)).toBeDefined();
    await services.sessions.delete(kept.id);
  });

  it('is served to loopback clients naming a loopback host only, without a token', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${navi.navi.url}/mcp`,
        { method: 'POST', headers: { host: 'evil.example', 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
  });

  it('closes the least recently used idle session when 64 are open', async () => {
    const first = await initialize(navi.navi.url);
    expect(first.status).toBe(200);
    expect(await ping(navi.navi.url, first.sessionId ?? '')).toBe(200);
    for (let i = 0; i < 64; i++) expect((await initialize(navi.navi.url)).status).toBe(200);
    expect(await ping(navi.navi.url, first.sessionId ?? '')).toBe(404);
  });

  it('ends a session on DELETE and refuses requests without a session', async () => {
    const { sessionId } = await initialize(navi.navi.url);
    const del = await fetch(`${navi.navi.url}/mcp`, {
      method: 'DELETE',
      headers: { 'mcp-session-id': sessionId ?? '', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
    });
    expect(del.status).toBe(200);
    expect(await ping(navi.navi.url, sessionId ?? '')).toBe(404);
    const get = await fetch(`${navi.navi.url}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(400);
    expect(await get.text()).toContain('initialize');
  });

  it('searches long-term memory', async () => {
    // A new fact has the memory summary rewritten in the background: the model answers that too.
    navi.fake.setDefault({ text: 'The user likes coffee.' });
    await navi.navi.services.memory?.store.upsert({
      category: 'preferences',
      key: 'coffee',
      value: 'flat white, no sugar',
    });
    const client = await connect(navi.navi.url);
    const found = await call(client, 'search_memory', { query: 'coffee' });
    expect(found.isError).toBeFalsy();
    expect((found.structuredContent as { facts: { value: string }[] }).facts).toContainEqual(
      expect.objectContaining({ key: 'coffee', value: 'flat white, no sugar' }),
    );
    const none = await call(client, 'search_memory', { query: 'zeppelin' });
    expect((none.structuredContent as { facts: unknown[] }).facts).toEqual([]);
  });

  it('stops embedding the query of a search_memory call the host cancels', async () => {
    navi.fake.setEndpointError('embed', { hang: true });
    const client = await connect(navi.navi.url);
    const cancel = new AbortController();
    const searching = client.callTool({ name: 'search_memory', arguments: { query: 'tea' } }, undefined, {
      signal: cancel.signal,
    });
    for (let n = 1; !navi.fake.requests.some((r) => r.kind === 'embed'); n++)
      await navi.fake.waitForRequests(n);
    cancel.abort();
    await expect(searching).rejects.toThrow();
    // The model's embedding request is given up, not left running for a call nobody awaits.
    await navi.fake.waitForAborted(1);
    expect(navi.fake.requests.filter((r) => r.aborted).map((r) => r.kind)).toEqual(['embed']);
  });
});

describe('Navi as an MCP server over HTTP with NAVI_API_TOKEN', () => {
  const token = 'mcp-test-token-0123456789';
  let navi: NaviWithLlm;
  beforeAll(async () => {
    navi = await startNaviWithLlm({
      settings: { NAVI_API_TOKEN: token, PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
    });
  });
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await navi?.close();
  });

  it('refuses a client without the token with 401', async () => {
    expect((await initialize(navi.navi.url)).status).toBe(401);
    expect((await initialize(navi.navi.url, { authorization: 'Bearer wrong' })).status).toBe(401);
    await expect(connect(navi.navi.url)).rejects.toThrow(/A valid API token is required/);
  });

  it('serves a client with the token', async () => {
    const client = await connect(navi.navi.url, { authorization: `Bearer ${token}` });
    navi.fake.enqueue({ text: 'Hello from behind the token.' });
    const asked = await askNavi(client, { message: 'Hello?' });
    expect(asked.answer).toBe('Hello from behind the token.');
  });
});

describe("Navi's MCP server without long-term memory", () => {
  let navi: NaviWithLlm;
  beforeAll(async () => {
    navi = await startNaviWithLlm({ settings: { PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' } });
  });
  afterAll(async () => {
    await navi?.close();
  });

  it('says search_memory cannot search, and how memory comes back', async () => {
    const { services, runs } = navi.navi.app.navi;
    const server = createNaviMcpServer({ services: { ...services, memory: undefined }, runs });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'navi-mcp-test', version: '1.0.0' });
    await client.connect(clientSide);
    const result = await call(client, 'search_memory', { query: 'anything' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('Long-term memory is off in this Navi');
    expect(textOf(result)).toContain('navi serve');
    await client.close();
  });
});

describe('the cap on open MCP sessions and their idle time', () => {
  let navi: NaviWithLlm;
  beforeAll(async () => {
    navi = await startNaviWithLlm({ settings: { PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' } });
  });
  afterAll(async () => {
    await navi?.close();
  });

  /** The route alone on Navi's own services, with a smaller cap or idle time. */
  async function routeAlone(options: { maxSessions?: number; idleMs?: number }) {
    const app = Fastify();
    await app.register(naviMcpRoutes, { ...navi.navi.app.navi, ...options });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    return { app, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
  }

  /** Opens session `id`'s event stream (GET), as a connected host keeps it. */
  async function listen(url: string, id: string, signal?: AbortSignal) {
    const stream = await fetch(`${url}/mcp`, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': id,
        'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      },
      ...(signal ? { signal } : {}),
    });
    expect(stream.status).toBe(200);
    return stream;
  }

  /** Resolves once the server has ended `stream`. */
  async function ended(stream: Response): Promise<void> {
    const reader = stream.body?.getReader();
    while (reader && !(await reader.read()).done);
  }

  it('refuses a new session with 503 while every open one answers a request, and makes room once one is idle', async () => {
    const { app, url } = await routeAlone({ maxSessions: 1 });
    navi.fake.setDefault({ hang: true });
    try {
      // The SDK client's session keeps its event stream open and has a call being answered.
      const client = new Client({ name: 'navi-mcp-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId ?? '';
      const cancel = new AbortController();
      const asking = askNavi(client, { message: 'Take your time.' }, { signal: cancel.signal });
      await navi.fake.waitForRequests(1);
      const refused = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: {},
            clientInfo: { name: 'raw', version: '1' },
          },
        }),
      });
      expect(refused.status).toBe(503);
      expect(await refused.text()).toContain('all are answering a request');
      // The call is cancelled (its run stopped) and the client goes: the session is idle.
      cancel.abort();
      await expect(asking).rejects.toThrow();
      await navi.fake.waitForAborted(1);
      await client.close();
      let second = await initialize(url);
      // The requests' end reaches the server a moment after the client let go of them.
      while (second.status === 503) second = await initialize(url);
      expect(second.status).toBe(200);
      expect(await ping(url, sessionId)).toBe(404);
    } finally {
      navi.fake.setDefault(undefined);
      await app.close();
    }
  });

  it('closes the least recently used session that only listens on its event stream, after any idle one', async () => {
    const { app, url } = await routeAlone({ maxSessions: 2 });
    const listening = new AbortController();
    try {
      const first = await initialize(url);
      const firstStream = await listen(url, first.sessionId ?? '', listening.signal);
      const second = await initialize(url);
      await listen(url, second.sessionId ?? '', listening.signal);
      // Both listen: the one whose stream opened first makes room, and its stream is ended.
      const third = await initialize(url);
      expect(third.status).toBe(200);
      await ended(firstStream);
      expect(await ping(url, first.sessionId ?? '')).toBe(404);
      expect(await ping(url, second.sessionId ?? '')).toBe(200);
      // An idle session goes before one that listens, even when it was used more recently.
      expect(await ping(url, third.sessionId ?? '')).toBe(200);
      expect((await initialize(url)).status).toBe(200);
      expect(await ping(url, third.sessionId ?? '')).toBe(404);
      expect(await ping(url, second.sessionId ?? '')).toBe(200);
    } finally {
      listening.abort();
      await app.close();
    }
  });

  it('closes a session idle for longer than idleMs, and keeps one whose event stream is open', async () => {
    // 30 minutes of idleness shortened to 100 ms.
    const { app, url } = await routeAlone({ idleMs: 100 });
    const listening = new AbortController();
    try {
      const idle = await initialize(url);
      const busy = await initialize(url);
      expect([idle.status, busy.status]).toEqual([200, 200]);
      expect(await ping(url, idle.sessionId ?? '')).toBe(200);
      await listen(url, busy.sessionId ?? '', listening.signal);
      // Past the idle time and the sweep after it (every idleMs).
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect(await ping(url, idle.sessionId ?? '')).toBe(404);
      expect(await ping(url, busy.sessionId ?? '')).toBe(200);
    } finally {
      listening.abort();
      await app.close();
    }
  });
});

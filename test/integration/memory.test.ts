/**
 * Long-term memory end to end (docs/memory.md#long-term-memory): extraction from stale sessions when a session is
 * created, the summary in the next run's system prompt, a failed extraction retried; the `memory`
 * tool with and without an embedding backend; the /memory REST routes, bad input included.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryFact } from '../../src/memory/types.js';
import { type FakeLlm, type RecordedRequest, type ReplyScript, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi, tempDir } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { EventClient } from '../support/ws-client.js';

const profiles = profilesDir([{ ...plainProfile, max_iterations: 10 }]);
const systemOf = (r: RecordedRequest) => String(r.body.messages?.[0]?.content ?? '');
const isExtraction = (r: RecordedRequest) => systemOf(r).startsWith('You maintain a long-term memory');
const isSummary = (r: RecordedRequest) => systemOf(r).startsWith('Write a compact profile');

/** What a small model might really answer: prose, a fence, a duplicate, a broken and a cut-off object. */
const MESSY_FACTS = `Sure! Here is what I learnt about the user:
\`\`\`json
{"facts": [
  {"category": "Personal", "key": "Name", "value": "The user is called Ada Lovelace"},
  {"category": "preference", "key": "favourite editor", "value": "Uses Vim",},
  {"category": "preference", "key": "favourite-editor", "value": "Uses Neovim with LazyVim"},
  {"category": "work", "value": 17},
  {"category": "work", "key": "employer", "value": "Works at Analytical Eng
\`\`\`
Let me know if you need more.`;

function settingsFor(fake: FakeLlm, extra: Record<string, string> = {}) {
  return {
    OLLAMA_HOST: fake.ollamaUrl,
    OLLAMA_DEFAULT_MODEL: 'test-model',
    PROFILES_DIR: profiles,
    DEFAULT_PROFILE: 'plain',
    ...extra,
  };
}

async function say(navi: NaviHandle, sessionId: string, content: string): Promise<void> {
  const client = await EventClient.connect(navi.wsUrl(sessionId));
  client.send({ type: 'message', content });
  const events = await client.waitForRunEnd();
  expect(events.at(-1)?.type).toBe('stream_end');
  await client.close();
}

async function facts(navi: NaviHandle): Promise<MemoryFact[]> {
  const res = await fetch(`${navi.url}/memory/facts`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { facts: MemoryFact[] }).facts;
}

describe('memory extraction', () => {
  let fake: FakeLlm;
  let navi: NaviHandle | undefined;
  const mode = { extraction: 'messy' as 'messy' | 'fail' };
  beforeAll(async () => {
    fake = await startFakeLlm({
      defaultReply: (r): ReplyScript => {
        if (isExtraction(r))
          return mode.extraction === 'fail'
            ? { httpError: { status: 500, body: '{"error":"model crashed"}' } }
            : { text: MESSY_FACTS };
        if (isSummary(r)) return { text: 'Ada Lovelace edits code in Neovim with LazyVim.' };
        return { text: 'Noted.' };
      },
    });
  });
  afterEach(async () => {
    await navi?.close();
    navi = undefined;
    fake.requests.length = 0;
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('mines a stale session when a session is created and puts the summary into the next run', async () => {
    mode.extraction = 'messy';
    // Idle 0: a session counts as stale as soon as its run has ended.
    navi = await startNavi({ settings: settingsFor(fake, { MEMORY_EXTRACTION_IDLE_MINUTES: '0' }) });
    const memory = navi.services.memory!;
    const first = await navi.createSession();
    await memory.extractor.processStaleSessions();
    await say(navi, first, 'Hi, I am Ada Lovelace and I edit everything in Neovim.');
    const firstRun = fake.requests.find((r) => r.kind === 'chat')!;
    expect(systemOf(firstRun)).not.toContain('## What I remember about the user');
    expect(fake.requests.some(isExtraction)).toBe(false);

    const second = await navi.createSession();
    await memory.extractor.processStaleSessions();
    const extraction = fake.requests.filter(isExtraction);
    expect(extraction).toHaveLength(1);
    expect(String(extraction[0]!.body.messages?.[1]?.content)).toContain(
      'User: Hi, I am Ada Lovelace and I edit everything in Neovim.',
    );
    expect(fake.requests.filter(isSummary)).toHaveLength(1);

    const saved = await facts(navi);
    expect(saved.map((f) => [f.category, f.key, f.value]).sort()).toEqual([
      ['personal', 'name', 'The user is called Ada Lovelace'],
      ['preference', 'favourite_editor', 'Uses Neovim with LazyVim'],
    ]);
    expect(saved.every((f) => f.source_session_id === first)).toBe(true);
    expect(await memory.store.getSessionState(first)).toMatchObject({ status: 'done', attempts: 0 });
    const summary = (await (await fetch(`${navi.url}/memory/summary`)).json()) as {
      text: string;
      stale: boolean;
    };
    expect(summary).toMatchObject({ text: 'Ada Lovelace edits code in Neovim with LazyVim.', stale: false });

    fake.requests.length = 0;
    await say(navi, second, 'Which editor do I use?');
    const next = fake.requests.find((r) => r.kind === 'chat' && !isExtraction(r) && !isSummary(r))!;
    const system = systemOf(next);
    expect(system).toContain(
      '## What I remember about the user\n\nAda Lovelace edits code in Neovim with LazyVim.',
    );
    // After the profile's prompt, before the conversation.
    expect(system.indexOf('You are a test profile.')).toBeLessThan(system.indexOf('## What I remember'));

    // A session already mined is not mined again while it has no new messages.
    fake.requests.length = 0;
    await navi.createSession();
    await memory.extractor.processStaleSessions();
    const again = fake.requests.filter(isExtraction);
    expect(again.every((r) => !String(r.body.messages?.[1]?.content).includes('Ada Lovelace and I'))).toBe(
      true,
    );
  });

  it('does not mark a failed extraction done and retries it on a later pass', async () => {
    mode.extraction = 'fail';
    navi = await startNavi({ settings: settingsFor(fake, { MEMORY_EXTRACTION_IDLE_MINUTES: '0' }) });
    const memory = navi.services.memory!;
    const first = await navi.createSession();
    await memory.extractor.processStaleSessions();
    await say(navi, first, 'I am Ada Lovelace.');

    await navi.createSession();
    const failed = await memory.extractor.processStaleSessions();
    expect(fake.requests.filter(isExtraction)).toHaveLength(1);
    expect(failed.failed.map((f) => f.sessionId)).toContain(first);
    expect(await facts(navi)).toEqual([]);
    const state = await memory.store.getSessionState(first);
    expect(state).toMatchObject({ status: 'failed', attempts: 1, last_error: expect.any(String) });
    // extracted_at still names the pass that saw the session empty, before its message.
    expect(Date.parse(state!.extracted_at!)).toBeLessThan(Date.parse(state!.attempted_at!));
    expect(fake.requests.some(isSummary)).toBe(false);

    mode.extraction = 'messy';
    await navi.createSession();
    await memory.extractor.processStaleSessions();
    expect(fake.requests.filter(isExtraction).length).toBeGreaterThanOrEqual(2);
    expect((await facts(navi)).map((f) => f.key).sort()).toEqual(['favourite_editor', 'name']);
    expect(await memory.store.getSessionState(first)).toMatchObject({ status: 'done', attempts: 0 });
  });
});

describe('the memory tool', () => {
  let fake: FakeLlm;
  let navi: NaviHandle | undefined;
  beforeAll(async () => {
    fake = await startFakeLlm({ models: ['test-model', 'embed-two'] });
  });
  afterEach(async () => {
    await navi?.close();
    navi = undefined;
    fake.reset();
  });
  afterAll(async () => {
    await fake?.close();
  });

  /** Saves two facts, searches, forgets one, searches again; returns the tool_call events. */
  async function saveSearchForget(n: NaviHandle) {
    const id = await n.createSession();
    const call = (cid: string, args: Record<string, unknown>) => ({
      toolCalls: [{ id: cid, name: 'memory', arguments: args }],
    });
    fake.enqueue(
      call('m1', {
        action: 'save',
        category: 'Preference',
        key: 'Favourite Editor',
        value: 'Uses Neovim with LazyVim',
      }),
      call('m2', {
        action: 'save',
        category: 'home',
        key: 'server',
        value: 'Runs Proxmox on an old ThinkPad',
      }),
      call('m3', { action: 'search', query: 'which editor does the user like' }),
      call('m4', { action: 'forget', category: 'home', key: 'server' }),
      call('m5', { action: 'search', query: 'proxmox thinkpad' }),
      call('m6', { action: 'forget', id: 999 }),
      { text: 'Done with memory.' },
    );
    const client = await EventClient.connect(n.wsUrl(id));
    client.send({ type: 'message', content: 'Remember and forget things.' });
    const events = await client.waitForRunEnd();
    expect(events.at(-1)?.type).toBe('stream_end');
    await client.close();
    const calls = new Map(events.flatMap((e) => (e.type === 'tool_call' ? [[e.call_id, e] as const] : [])));
    return { sessionId: id, calls };
  }

  it('saves, searches (hybrid) and forgets with an embedding backend, recording the model', async () => {
    const dir = tempDir();
    navi = await startNavi({ dir, settings: settingsFor(fake) });
    const { sessionId, calls } = await saveSearchForget(navi);
    expect(calls.get('m1')).toMatchObject({ success: true, metadata: { created: true } });
    expect(calls.get('m1')?.result).toMatch(/^Saved fact #\d+ \[preference\] favourite_editor: Uses Neovim/);
    expect(calls.get('m3')).toMatchObject({ success: true, metadata: { mode: 'hybrid' } });
    expect(calls.get('m3')?.result).toContain('favourite_editor: Uses Neovim with LazyVim');
    expect(calls.get('m4')).toMatchObject({ success: true });
    expect(calls.get('m4')?.result).toContain('Forgot fact');
    expect(calls.get('m5')?.result).not.toContain('Proxmox');
    expect(calls.get('m6')).toMatchObject({ success: false });
    expect(calls.get('m6')?.result).toMatch(/No fact #999/);

    const embeds = fake.requests.filter((r) => r.kind === 'embed');
    expect(embeds.length).toBeGreaterThan(0);
    expect(embeds.every((r) => r.body.model === 'test-model')).toBe(true);
    const left = await facts(navi);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ category: 'preference', source_session_id: sessionId });
    expect(await navi.services.memory!.store.missingEmbeddings('test-model', 10)).toEqual([]);

    const res = await fetch(`${navi.url}/memory/search?q=neovim`);
    const found = (await res.json()) as {
      mode: string;
      hits: { fts_rank: number | null; vector_rank: number | null }[];
    };
    expect(found.mode).toBe('hybrid');
    expect(found.hits[0]).toMatchObject({ fts_rank: 1, vector_rank: 1 });
    await navi.close();

    // Another embedding model: the stored vectors no longer count and are made again.
    fake.requests.length = 0;
    navi = await startNavi({ dir, settings: settingsFor(fake, { OLLAMA_DEFAULT_MODEL: 'embed-two' }) });
    expect(await navi.services.memory!.store.missingEmbeddings('embed-two', 10)).toHaveLength(1);
    const again = (await (await fetch(`${navi.url}/memory/search?q=editor`)).json()) as { mode: string };
    expect(again.mode).toBe('hybrid');
    const reembed = fake.requests.filter((r) => r.kind === 'embed' && r.body.model === 'embed-two');
    expect(JSON.stringify(reembed.map((r) => r.body.input))).toContain('Uses Neovim with LazyVim');
    expect(await navi.services.memory!.store.missingEmbeddings('embed-two', 10)).toEqual([]);
  });

  it('works from the full-text index alone when the backend cannot embed', async () => {
    fake.setEndpointError('embed', {
      status: 404,
      body: '{"error":"this model does not support embeddings"}',
    });
    navi = await startNavi({ settings: settingsFor(fake) });
    const { calls } = await saveSearchForget(navi);
    expect(calls.get('m1')).toMatchObject({ success: true });
    expect(calls.get('m3')).toMatchObject({ success: true, metadata: { mode: 'fts' } });
    expect(calls.get('m3')?.result).toContain('favourite_editor');
    expect(calls.get('m4')).toMatchObject({ success: true });
    expect(calls.get('m5')?.result).toMatch(/No remembered facts match/);
    const found = (await (await fetch(`${navi.url}/memory/search?q=lazyvim`)).json()) as {
      mode: string;
      hits: { fact: { key: string }; vector_rank: number | null }[];
    };
    expect(found.mode).toBe('fts');
    expect(found.hits.map((h) => [h.fact.key, h.vector_rank])).toEqual([['favourite_editor', null]]);
  });
});

describe('the /memory REST routes', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let ids: number[] = [];
  beforeAll(async () => {
    fake = await startFakeLlm();
    navi = await startNavi({ settings: settingsFor(fake) });
    const store = navi.services.memory!.store;
    ids = [
      (await store.upsert({ category: 'preference', key: 'editor', value: 'Uses Neovim' })).fact.id,
      (await store.upsert({ category: 'home', key: 'router', value: 'A Fritzbox 7590' })).fact.id,
    ];
  });
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  const call = async (method: string, path: string, body?: unknown, type = 'application/json') => {
    const res = await fetch(`${navi.url}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : {
            headers: { 'content-type': type },
            body: typeof body === 'string' ? body : JSON.stringify(body),
          }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  };

  it('lists with paging and a category filter, and reads the summary', async () => {
    const all = await call('GET', '/memory/facts');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 2, offset: 0, limit: 50 });
    const page = await call('GET', '/memory/facts?limit=1&offset=1');
    expect(page.body).toMatchObject({ total: 2, offset: 1, limit: 1 });
    expect((page.body!.facts as unknown[]).length).toBe(1);
    const home = await call('GET', '/memory/facts?category=Home');
    expect((home.body!.facts as MemoryFact[]).map((f) => f.key)).toEqual(['router']);
    const summary = await call('GET', '/memory/summary');
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({ text: '', stale: true });
  });

  it('searches, edits and deletes facts', async () => {
    const search = await call('GET', '/memory/search?q=fritzbox&limit=5');
    expect(search.status).toBe(200);
    expect((search.body!.hits as { fact: MemoryFact }[]).map((h) => h.fact.id)).toEqual([ids[1]]);
    const edited = await call('PATCH', `/memory/facts/${ids[0]}`, { value: 'Uses Helix now' });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ id: ids[0], key: 'editor', value: 'Uses Helix now' });
    const conflict = await call('PATCH', `/memory/facts/${ids[0]}`, { category: 'home', key: 'router' });
    expect(conflict.status).toBe(409);
    expect(typeof conflict.body!.error).toBe('string');
    const removed = await call('DELETE', `/memory/facts/${ids[1]}`);
    expect(removed.status).toBe(204);
    const twice = await call('DELETE', `/memory/facts/${ids[1]}`);
    expect(twice.status).toBe(404);
  });

  it.each([
    ['GET', '/memory/facts?limit=0', undefined, 400],
    ['GET', '/memory/facts?limit=abc', undefined, 400],
    ['GET', '/memory/facts?offset=-1', undefined, 400],
    ['GET', '/memory/facts?limit=100000', undefined, 400],
    ['GET', '/memory/facts?nonsense=1', undefined, 400],
    ['GET', '/memory/search', undefined, 400],
    ['GET', `/memory/search?q=${'x'.repeat(2001)}`, undefined, 400],
    ['GET', '/memory/search?q=a&limit=0', undefined, 400],
    ['GET', '/memory/search?q=a&limit=51', undefined, 400],
    ['GET', '/memory/search?q=a&limit=1.5', undefined, 400],
    ['PATCH', '/memory/facts/999999', { value: 'x' }, 404],
    ['PATCH', '/memory/facts/abc', { value: 'x' }, 400],
    ['PATCH', '/memory/facts/0', { value: 'x' }, 400],
    ['PATCH', '/memory/facts/-3', { value: 'x' }, 400],
    ['PATCH', '/memory/facts/99999999999999999999', { value: 'x' }, 400],
    ['PATCH', '/memory/facts/1', {}, 400],
    ['PATCH', '/memory/facts/1', { value: '' }, 400],
    ['PATCH', '/memory/facts/1', { value: '   ' }, 400],
    ['PATCH', '/memory/facts/1', { category: '!!!' }, 400],
    ['PATCH', '/memory/facts/1', { value: 5 }, 400],
    ['PATCH', '/memory/facts/1', { id: 7 }, 400],
    ['PATCH', '/memory/facts/1', [{ value: 'x' }], 400],
    ['PATCH', '/memory/facts/1', '{"value": ', 400],
    ['PATCH', '/memory/facts/1', 'null', 400],
    ['DELETE', '/memory/facts/999999', undefined, 404],
    ['DELETE', '/memory/facts/abc', undefined, 400],
  ] as const)('%s %s %j is refused with %i and an error body', async (method, path, body, status) => {
    const res = await call(method, path, body);
    expect(res.status).toBe(status);
    expect(typeof res.body?.error).toBe('string');
  });

  it('answers odd but valid searches without failing', async () => {
    for (const q of ['', '"*(', 'AND OR NOT', '🙂', 'a'.repeat(2000), 'editor NEAR/2 "x']) {
      const res = await call('GET', `/memory/search?q=${encodeURIComponent(q)}`);
      expect(res.status, q).toBe(200);
      expect(Array.isArray(res.body!.hits)).toBe(true);
    }
    const text = await call('PATCH', `/memory/facts/${ids[0]}`, 'value=x', 'text/plain');
    expect(text.status).toBeGreaterThanOrEqual(400);
    expect(text.status).toBeLessThan(500);
  });
});

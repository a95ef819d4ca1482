import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLlm, type RecordedRequest, startFakeLlm } from '../../test/fake-llm/index.js';
import { OllamaBackend } from '../llm/ollama.js';
import { MEMORY_HEADING, MemoryExtractor } from './extraction.js';
import { SqliteMemoryStore } from './memory-store.js';
import { type TempStores, tempStores } from './test-support.js';

const logger = pino({ level: 'silent' });
const T0 = Date.parse('2026-03-01T10:00:00Z');
const minutes = (n: number) => n * 60_000;
let fake: FakeLlm;
let t: TempStores;
let memory: SqliteMemoryStore;
let clock = T0;
const now = () => new Date(clock);

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  t = tempStores();
  clock = T0;
  memory = new SqliteMemoryStore(t.db, { now });
});
afterEach(() => t.dispose());

function extractor(options: { maxAttempts?: number } = {}) {
  const backend = new OllamaBackend({
    baseUrl: fake.ollamaUrl,
    model: 'test-model',
    numCtx: 8192,
    think: true,
    connectTimeoutMs: 5000,
    idleTimeoutMs: 10_000,
  });
  return new MemoryExtractor({
    memory,
    sessions: t.sessions,
    backend,
    idleMinutes: 30,
    logger,
    now,
    ...options,
  });
}

let seq = 0;
async function session(id: string, lastActive: number, lines: [role: 'user' | 'assistant', text: string][]) {
  if (!(await t.sessions.get(id)))
    await t.sessions.create({ id, profile_id: 'secretary', created_at: new Date(T0).toISOString() });
  await t.sessions.append(
    id,
    lines.map(([role, content]) => ({
      message: { id: `m${++seq}`, role, content, created_at: new Date(lastActive).toISOString() },
      display: true,
      context: true,
    })),
  );
  await t.sessions.update(id, { last_active: new Date(lastActive).toISOString() });
}

const chats = (): RecordedRequest[] => fake.requests.filter((r) => r.kind === 'chat');
const promptOf = (r: RecordedRequest | undefined) =>
  (r?.body.messages ?? []).map((m) => String(m.content)).join('\n');

const MESSY = [
  "Here's what I learnt about the user:",
  '```json',
  '{"facts": [',
  '  {"category": "Personal", "key": "Name", "value": "Sam"},',
  '  {"category": "environment", "key": "laptop os", "value": "Debian 11"},',
  '  {"category": "environment", "key": "laptop-os", "value": "Debian 12"},',
  '  {"category": "preference", "key": "", "value": "nothing"},',
  '  {"category": "work", "key": "employer", "value": "Acme"},',
  '  {"category": "work", "key": "role", "value": "Site reliab',
].join('\n');

describe('MemoryExtractor', () => {
  it('mines an idle session through messy JSON, writes the summary and skips it afterwards', async () => {
    await session('old', T0, [
      ['user', "Hi, I'm Sam. My laptop runs Debian 12 and I work at Acme."],
      ['assistant', 'Nice to meet you, Sam!'],
    ]);
    await session('fresh', T0 + minutes(20), [['user', 'I also like tea']]);
    clock = T0 + minutes(31);
    fake.enqueue({ text: MESSY }, { text: 'Sam works at Acme and runs Debian 12 on a laptop.' });

    const ex = extractor();
    const report = await ex.processStaleSessions();
    expect(report).toMatchObject({ processed: ['old'], failed: [], factsSaved: 3, summaryUpdated: true });
    const facts = (await memory.list()).facts.map((f) => [f.category, f.key, f.value, f.source_session_id]);
    expect(facts).toEqual(
      expect.arrayContaining([
        ['personal', 'name', 'Sam', 'old'],
        ['environment', 'laptop_os', 'Debian 12', 'old'],
        ['work', 'employer', 'Acme', 'old'],
      ]),
    );
    expect(facts).toHaveLength(3);

    const [extraction, summary] = chats();
    expect(extraction?.body.think).toBe(false);
    expect(extraction?.body.options?.temperature).toBeLessThanOrEqual(0.2);
    expect(promptOf(extraction)).toContain("User: Hi, I'm Sam. My laptop runs Debian 12");
    expect(promptOf(extraction)).not.toContain('I also like tea');
    expect(promptOf(summary)).toContain('environment/laptop_os: Debian 12');
    expect(await ex.memoryBlock()).toBe(
      `${MEMORY_HEADING}\n\nSam works at Acme and runs Debian 12 on a laptop.`,
    );
    expect(await memory.getSessionState('old')).toMatchObject({
      status: 'done',
      attempts: 0,
      last_error: null,
    });

    // Nothing new: no LLM call at all.
    const before = fake.requests.length;
    expect(await ex.processStaleSessions()).toMatchObject({ processed: [], summaryUpdated: false });
    expect(fake.requests.length).toBe(before);

    // New messages, then idle again: mined again, with the known facts in the prompt.
    clock = T0 + minutes(40);
    await session('old', clock, [['user', 'I switched to Fedora 41.']]);
    clock += minutes(31);
    fake.enqueue(
      { text: '{"facts": []}' }, // 'fresh' is older, so it goes first
      { text: '[{"category":"environment","key":"laptop_os","value":"Fedora 41"}]' },
      { text: 'Sam uses Fedora 41.' },
    );
    expect((await ex.processStaleSessions()).processed).toEqual(['fresh', 'old']);
    expect(promptOf(chats().find((r) => promptOf(r).includes('Fedora')))).toContain(
      '- environment/laptop_os: Debian 12',
    );
    expect((await memory.getByKey('environment', 'laptop_os'))?.value).toBe('Fedora 41');
  });

  it('records a failed extraction and retries it on a later pass', async () => {
    await session('s', T0, [['user', 'My cat is called Miso.']]);
    clock = T0 + minutes(31);
    fake.enqueue({ httpError: { status: 500, body: '{"error":"out of memory"}' } });
    const ex = extractor();
    const first = await ex.processStaleSessions();
    expect(first.processed).toEqual([]);
    expect(first.failed).toHaveLength(1);
    expect(await memory.getSessionState('s')).toMatchObject({
      status: 'failed',
      attempts: 1,
      extracted_at: null,
    });
    expect((await memory.getSessionState('s'))?.last_error).toMatch(/500|out of memory/);

    fake.enqueue({ text: 'no json here, sorry' });
    await ex.processStaleSessions();
    expect(await memory.getSessionState('s')).toMatchObject({ status: 'failed', attempts: 2 });

    fake.enqueue(
      { text: '{"facts":[{"category":"pets","key":"cat","value":"A cat named Miso"}]}' },
      { text: 'Has a cat, Miso.' },
    );
    expect((await ex.processStaleSessions()).processed).toEqual(['s']);
    expect(await memory.getSessionState('s')).toMatchObject({ status: 'done', attempts: 0 });
    expect(await memory.count()).toBe(1);
  });

  it('stops retrying after maxAttempts until the session gets new messages', async () => {
    await session('s', T0, [['user', 'I live in Oslo.']]);
    clock = T0 + minutes(31);
    fake.setDefault({ httpError: { status: 503, body: 'busy' } });
    const ex = extractor({ maxAttempts: 2 });
    await ex.processStaleSessions();
    await ex.processStaleSessions();
    const calls = chats().length;
    await ex.processStaleSessions();
    expect(chats().length).toBe(calls);
    clock += minutes(5);
    await session('s', clock, [['user', 'Actually, Bergen.']]);
    clock += minutes(31);
    await ex.processStaleSessions();
    expect(chats().length).toBe(calls + 1);
  });

  it('keeps the old summary when regenerating it fails, and retries it on the next pass', async () => {
    await memory.upsert({ category: 'personal', key: 'name', value: 'Sam' });
    await memory.setSummary('The user is Sam.');
    await session('s', T0, [['user', 'I am 34.']]);
    clock = T0 + minutes(31);
    fake.enqueue(
      { text: '[{"category":"personal","key":"age","value":"34"}]' },
      { httpError: { status: 500, body: 'x' } },
    );
    const ex = extractor();
    expect(await ex.processStaleSessions()).toMatchObject({ processed: ['s'], summaryUpdated: false });
    expect(await memory.getSummary()).toMatchObject({ text: 'The user is Sam.', stale: true });
    fake.enqueue({ text: 'The user is Sam, 34.' });
    expect(await ex.processStaleSessions()).toMatchObject({ processed: [], summaryUpdated: true });
    expect(await ex.memoryBlock()).toContain('The user is Sam, 34.');
  });

  it('runs one pass at a time and has no memory block while nothing is remembered', async () => {
    const ex = extractor();
    expect(await ex.memoryBlock()).toBeNull();
    await session('s', T0, [['user', 'I use Arch, btw.']]);
    clock = T0 + minutes(31);
    fake.enqueue({ text: '[]', delayMs: 50, chunkSize: 1 });
    const a = ex.processStaleSessions();
    const b = ex.processStaleSessions();
    expect(b).toBe(a);
    expect(ex.busy).toBe(true);
    await a;
    expect(ex.busy).toBe(false);
    expect(chats()).toHaveLength(1);
    expect(await memory.getSessionState('s')).toMatchObject({ status: 'done' });
  });
});

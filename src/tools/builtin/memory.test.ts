import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../../../test/fake-llm/index.js';
import { OllamaBackend } from '../../llm/ollama.js';
import { SqliteMemoryStore } from '../../memory/memory-store.js';
import { HybridMemorySearch } from '../../memory/search.js';
import { type TempStores, tempStores } from '../../memory/test-support.js';
import { runValidated } from '../test-helpers.js';
import type { ToolDefinition } from '../types.js';
import { createMemoryTool } from './memory.js';
import { makeCtx } from './test-support.js';

let fake: FakeLlm;
let t: TempStores;
let store: SqliteMemoryStore;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  t = tempStores();
  store = new SqliteMemoryStore(t.db);
});
afterEach(() => t.dispose());

const ctx = makeCtx({ sessionId: 'sess-42' });
const embeds = () => fake.requests.filter((r) => r.kind === 'embed').length;

function tool(withEmbeddings: boolean): ToolDefinition {
  const backend = new OllamaBackend({
    baseUrl: fake.ollamaUrl,
    model: 'test-model',
    numCtx: 8192,
    think: false,
    connectTimeoutMs: 5000,
    idleTimeoutMs: 10_000,
  });
  return createMemoryTool({
    store,
    search: new HybridMemorySearch({ store, ...(withEmbeddings ? { backend } : {}) }),
  });
}

describe.each([
  ['with an embedding backend', true],
  ['without embeddings', false],
])('memory tool %s', (_label, withEmbeddings) => {
  it('saves, finds, updates and forgets facts', async () => {
    const memory = tool(withEmbeddings);
    const saved = await memory.execute(
      { action: 'save', category: 'Environment', key: 'Home Server', value: 'Proxmox on a NUC' },
      ctx,
    );
    expect(saved).toMatchObject({ success: true, metadata: { created: true } });
    expect(saved.output).toMatch(/^Saved fact #\d+ \[environment\] home_server: Proxmox on a NUC$/);
    expect((await store.getByKey('environment', 'home_server'))?.source_session_id).toBe('sess-42');
    await memory.execute({ action: 'save', category: 'preference', key: 'editor', value: 'Neovim' }, ctx);

    const updated = await memory.execute(
      { action: 'save', category: 'environment', key: 'home_server', value: 'Proxmox 8 on a NUC' },
      ctx,
    );
    expect(updated.output).toMatch(/^Updated fact/);

    const found = await memory.execute({ action: 'search', query: 'what runs on the proxmox box?' }, ctx);
    expect(found.success).toBe(true);
    expect(found.output.split('\n')[1]).toContain('[environment] home_server: Proxmox 8 on a NUC');
    expect(found.metadata).toMatchObject({ mode: withEmbeddings ? 'hybrid' : 'fts' });
    expect(embeds() > 0).toBe(withEmbeddings);

    const id = Number(/#(\d+)/.exec(found.output.split('\n')[1]!)![1]);
    expect(await memory.execute({ action: 'forget', id }, ctx)).toMatchObject({ success: true });
    expect(
      await memory.execute({ action: 'forget', category: 'Preference', key: 'Editor' }, ctx),
    ).toMatchObject({ success: true });
    expect(await store.count()).toBe(0);
    const none = await memory.execute({ action: 'search', query: 'proxmox' }, ctx);
    expect(none).toMatchObject({ success: true, metadata: { count: 0 } });
  });
});

describe('memory tool input errors', () => {
  it('says what is missing instead of failing obscurely', async () => {
    const memory = tool(false);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ action: 'save', category: 'c', key: 'k' }, /needs "category", "key" and "value"/],
      [{ action: 'save', category: '!!!', key: 'k', value: 'v' }, /category must contain/],
      [{ action: 'search', query: '  ' }, /non-empty "query"/],
      [{ action: 'forget', category: 'c' }, /needs "id"/],
      [{ action: 'forget', id: 999 }, /No fact #999/],
      [{ action: 'dance' }, /"action" must be one of "save", "search", "forget"/],
    ];
    for (const [args, message] of cases) {
      const r = await runValidated(memory, args, ctx);
      expect(r.success).toBe(false);
      expect(r.output).toMatch(message);
    }
  });

  it('searches safely with hostile queries', async () => {
    const memory = tool(false);
    await memory.execute(
      { action: 'save', category: 'c', key: 'quote', value: 'He said "OR" NEAR the * sign' },
      ctx,
    );
    for (const query of ['"', 'OR', '*', 'NOT AND', '"OR"', 'x'.repeat(10_000)]) {
      const r = await memory.execute({ action: 'search', query }, ctx);
      expect(r.success).toBe(true);
    }
    expect((await memory.execute({ action: 'search', query: '"OR" sign' }, ctx)).output).toContain('quote');
  });
});

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../../../test/fake-llm/index.js';
import { ProfileRegistry, profileSchema } from '../../config/profiles.js';
import { OllamaBackend } from '../../llm/ollama.js';
import { type TempStores, tempStores } from '../../memory/test-support.js';
import { createReflectTool, describeState } from './reflect.js';
import { makeCtx } from './test-support.js';

let fake: FakeLlm;
let t: TempStores;
const profiles = new ProfileRegistry(
  [profileSchema.parse({ id: 'secretary', name: 'Secretary', model: 'reflect-model' })],
  'secretary',
);

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  t = tempStores();
});
afterEach(() => t.dispose());

function reflect() {
  const backend = new OllamaBackend({
    baseUrl: fake.ollamaUrl,
    model: 'test-model',
    numCtx: 8192,
    think: true,
    connectTimeoutMs: 5000,
    idleTimeoutMs: 10_000,
  });
  return createReflectTool({ sessions: t.sessions, kv: t.kv, profiles, backendFor: () => backend });
}

describe('reflect', () => {
  it('sends the todo list, scratchpad and recent context to the LLM without tools', async () => {
    await t.sessions.create({ id: 's', profile_id: 'secretary' });
    const old = Array.from({ length: 30 }, (_, i) => ({
      message: {
        id: `m${i}`,
        role: 'user' as const,
        content: `message ${i} ${'z'.repeat(i === 29 ? 2000 : 0)}`,
        created_at: '2026-01-01T00:00:00Z',
      },
      display: true,
      context: true,
    }));
    await t.sessions.append('s', old);
    await t.kv.set('s', 'todo', [
      { text: 'Back up the database', status: 'done' },
      { text: 'Rotate the logs', status: 'pending' },
    ]);
    await t.kv.set('s', 'scratchpad', { findings: 'disk is 91% full' });
    fake.enqueue({ text: 'Done: backup. Missing: log rotation. Next: rotate logs.' });

    const r = await reflect().execute({ focus: 'disk space' }, makeCtx({ sessionId: 's' }));
    expect(r).toMatchObject({
      success: true,
      output: 'Done: backup. Missing: log rotation. Next: rotate logs.',
    });
    const req = fake.requests.find((x) => x.kind === 'chat')!;
    expect(req.body.tools ?? []).toEqual([]);
    expect(req.body.think).toBe(false);
    expect(req.body.model).toBe('reflect-model');
    const prompt = String(req.body.messages?.at(-1)?.content);
    expect(prompt).toContain('- [done] Back up the database');
    expect(prompt).toContain('- [pending] Rotate the logs');
    expect(prompt).toContain('findings:\ndisk is 91% full');
    expect(prompt).toContain('Focus on: disk space');
    expect(prompt).toContain('User: message 29');
    expect(prompt).toMatch(/^User: message 10$/m);
    expect(prompt).not.toMatch(/^User: message 9$/m);
    expect(prompt).not.toContain('z'.repeat(700));
  });

  it('works on an empty session and reports an LLM failure as a result', async () => {
    fake.enqueue({ httpError: { status: 500, body: 'boom' } });
    const r = await reflect().execute({}, makeCtx({ sessionId: 'nothing' }));
    expect(r.success).toBe(false);
    expect(r.output).toMatch(/^reflect could not get a review/);
    const prompt = String(fake.requests[0]?.body.messages?.at(-1)?.content);
    expect(prompt).toContain('Todo list:\n(empty)');
    expect(prompt).toContain('(no messages)');
  });
});

describe('reflect inside a subagent', () => {
  it("reads the running agent's in-memory context, which the session store does not hold", async () => {
    fake.enqueue({ text: 'Done: nothing yet. Next: start.' });
    const agent = {
      runEphemeral: async () => '',
      switchProfile: async () => ({ id: 'secretary', name: 'Secretary' }),
      currentProfileId: () => 'secretary',
      context: () => [
        { id: 'u', role: 'user' as const, content: 'SUBAGENT TASK', created_at: '2026-01-01T00:00:00Z' },
      ],
    };
    const r = await reflect().execute({}, makeCtx({ sessionId: 'subagent_x', isSubagent: true, agent }));
    expect(r.success).toBe(true);
    expect(String(fake.requests[0]?.body.messages?.at(-1)?.content)).toContain('User: SUBAGENT TASK');
  });
});

describe('describeState', () => {
  it('reads strings, lists and sections', () => {
    expect(describeState(undefined)).toBe('(empty)');
    expect(describeState('  notes ')).toBe('notes');
    expect(describeState([{ title: 'a', done: true }, 'b'])).toBe('- [done] a\n- b');
    expect(describeState({ plan: ['x'] })).toBe('plan:\n- x');
  });
});

/**
 * Confirmation questions travel in the run's own event stream: under load (100 calls needing
 * approval, spread over 10 sessions running at once, each turn asking for ten calls in
 * parallel), every `tool_confirm_request` reaches the client after its call's `tool_started`
 * and before its `tool_call`, and carries the next `seq` of the run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import { type FakeLlm, type RecordedRequest, type ReplyScript, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { EventClient } from '../support/ws-client.js';

const SESSIONS = 10;
const CALLS_PER_SESSION = 10;

const guarded: ToolDefinition = {
  name: 'guarded_step',
  description: 'A step the user must approve.',
  parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  async execute(params) {
    return { success: true, output: `step ${String(params.n)} done` };
  },
};

const profiles = profilesDir([{ ...plainProfile, confirm_tools: ['guarded_*'] }]);

/** The first turn of each session asks for ten guarded calls named after the session's tag. */
function route(request: RecordedRequest): ReplyScript {
  const messages = request.body.messages ?? [];
  if (messages.some((m) => m.role === 'tool')) return { text: 'All steps done.' };
  const user = messages.find((m) => m.role === 'user');
  const tag = typeof user?.content === 'string' ? user.content : 'x';
  return {
    toolCalls: Array.from({ length: CALLS_PER_SESSION }, (_, n) => ({
      id: `${tag}-call-${n}`,
      name: 'guarded_step',
      arguments: { n },
    })),
  };
}

describe('tool confirmations under load', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  beforeAll(async () => {
    fake = await startFakeLlm();
    fake.setDefault(route);
    navi = await startNavi({
      settings: { OLLAMA_HOST: fake.ollamaUrl, PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
      extraTools: [guarded],
    });
  });
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  it('sends every question after its tool_started and before its tool_call', async () => {
    const cookie = await navi.pair();
    const runs = Array.from({ length: SESSIONS }, async (_, s) => {
      const id = await navi.createSession();
      const client = await EventClient.connect(navi.wsUrl(id), { headers: { cookie } });
      // Approve each question the moment it arrives, as a person's client would.
      client.socket.on('message', (data) => {
        const event = JSON.parse(data.toString()) as ServerEvent;
        if (event.type === 'tool_confirm_request')
          client.send({ type: 'tool_confirm', call_id: event.call_id, approved: true });
      });
      client.send({ type: 'message', content: `s${s}` });
      const events = await client.waitForRunEnd(0, 60_000);
      await client.close();
      return { tag: `s${s}`, events };
    });

    let questions = 0;
    for (const { tag, events } of await Promise.all(runs)) {
      expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'All steps done.' });
      // One run, numbered without gaps: the questions are part of the same sequence.
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      for (let n = 0; n < CALLS_PER_SESSION; n++) {
        const callId = `${tag}-call-${n}`;
        const at = (type: ServerEvent['type']) =>
          events.findIndex((e) => e.type === type && 'call_id' in e && e.call_id === callId);
        const started = at('tool_started');
        const asked = at('tool_confirm_request');
        const done = at('tool_call');
        expect(started, callId).toBeGreaterThanOrEqual(0);
        expect(asked, callId).toBeGreaterThan(started);
        expect(done, callId).toBeGreaterThan(asked);
        expect(events[done]).toMatchObject({ success: true, result: `step ${n} done` });
        questions += 1;
      }
    }
    expect(questions).toBe(SESSIONS * CALLS_PER_SESSION);
  });
});

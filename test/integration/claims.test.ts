/**
 * Claimed but not done, end to end: an answer saying it saved a file when no tool call of the
 * run did gets a `claim_unverified` event before `stream_end`, a warning in the log, and
 * `unverified_claims` on the stored answer (read back after a restart); a claim a tool call
 * backs, and any claim with CLAIM_CHECK_ENABLED=false, passes quietly.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import { captureLogger } from '../../src/tools/test-helpers.js';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi, tempDir } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { getSession } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const profiles = profilesDir([plainProfile]);
const CLAIM = 'I have saved the notes to ~/notes.txt.';

describe('the claim check', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let dir: string;
  const log = captureLogger();
  const settings = () => ({
    OLLAMA_HOST: fake.ollamaUrl,
    PROFILES_DIR: profiles,
    DEFAULT_PROFILE: 'plain',
  });

  beforeAll(async () => {
    fake = await startFakeLlm();
    dir = tempDir();
    navi = await startNavi({ dir, settings: settings(), logger: log.logger });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  async function run(on: NaviHandle, content: string, sessionId?: string) {
    const id = sessionId ?? (await on.createSession());
    const client = await EventClient.connect(on.wsUrl(id));
    client.send({ type: 'message', content });
    const events = await client.waitForRunEnd();
    await client.close();
    return { id, events };
  }
  const claimEvents = (events: ServerEvent[]) => events.filter((e) => e.type === 'claim_unverified');

  it('flags an answer that claims a save no tool call made: event, log line, stored field', async () => {
    fake.enqueue({ text: `Sure! ${CLAIM} Anything else?` });
    const { id, events } = await run(navi, 'Save my notes to a file.');

    const flagged = claimEvents(events);
    expect(flagged).toEqual([
      expect.objectContaining({
        type: 'claim_unverified',
        claims: [CLAIM],
        message: expect.stringContaining(`"${CLAIM}"`),
      }),
    ]);
    expect(flagged[0]?.type === 'claim_unverified' && flagged[0].message).toMatch(
      /check before relying on it/,
    );
    // Announced before the run ends.
    const types = events.map((e) => e.type);
    expect(types.indexOf('claim_unverified')).toBe(types.indexOf('stream_end') - 1);

    const warning = log
      .lines()
      .find((l) => l.msg === 'the answer claims actions no tool call of the run performed');
    expect(warning).toMatchObject({ level: 40, claims: [CLAIM], tool_calls: 0, session_id: id });

    const answer = (await getSession(navi, id)).messages.at(-1);
    expect(answer).toMatchObject({ role: 'assistant', content: `Sure! ${CLAIM} Anything else?` });
    expect(answer?.unverified_claims).toEqual([CLAIM]);
    expect(answer?.interrupted).toBeUndefined();

    // Stored, not only held in memory: a new Navi on the same database reads it back.
    await navi.close();
    navi = await startNavi({ dir, settings: settings(), logger: log.logger });
    expect((await getSession(navi, id)).messages.at(-1)?.unverified_claims).toEqual([CLAIM]);
  });

  it('passes a claim a successful tool call backs, and an answer that claims nothing', async () => {
    fake.enqueue(
      {
        toolCalls: [
          {
            id: 'w1',
            name: 'scratchpad',
            arguments: { action: 'write', section: 'shopping', content: 'milk, eggs' },
          },
        ],
      },
      { text: 'I have saved your shopping list to the scratchpad file.' },
      { text: 'Paris is the capital of France.' },
    );
    const backed = await run(navi, 'Remember my shopping list.');
    expect(backed.events.find((e) => e.type === 'tool_call')).toMatchObject({ success: true });
    expect(backed.events.at(-1)).toMatchObject({ type: 'stream_end' });
    expect(claimEvents(backed.events)).toEqual([]);
    expect((await getSession(navi, backed.id)).messages.at(-1)).not.toHaveProperty('unverified_claims');

    const plain = await run(navi, 'What is the capital of France?');
    expect(claimEvents(plain.events)).toEqual([]);
  });

  it('does not count a call that failed', async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'f1', name: 'scratchpad', arguments: { action: 'no-such-action' } }] },
      { text: 'I have saved your shopping list to the scratchpad file.' },
    );
    const { events } = await run(navi, 'Remember my shopping list.');
    expect(events.find((e) => e.type === 'tool_call')).toMatchObject({ success: false });
    expect(claimEvents(events)).toHaveLength(1);
  });

  it('stays quiet with CLAIM_CHECK_ENABLED=false', async () => {
    const quiet = await startNavi({ settings: { ...settings(), CLAIM_CHECK_ENABLED: 'false' } });
    try {
      fake.enqueue({ text: CLAIM });
      const { id, events } = await run(quiet, 'Save my notes to a file.');
      expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: CLAIM });
      expect(claimEvents(events)).toEqual([]);
      expect((await getSession(quiet, id)).messages.at(-1)).not.toHaveProperty('unverified_claims');
    } finally {
      await quiet.close();
    }
  });

  it("does not check a subagent's answer, only the run's own", async () => {
    fake.enqueue(
      { toolCalls: [{ id: 'a1', name: 'spawn_agent', arguments: { task: 'Save the notes.' } }] },
      { text: CLAIM },
      { text: 'The subagent reports that it is finished.' },
    );
    const { events } = await run(navi, 'Ask a subagent to save the notes.');
    expect(events.find((e) => e.type === 'tool_call' && e.call_id === 'a1')).toMatchObject({
      success: true,
      result: expect.stringContaining(CLAIM),
    });
    expect(claimEvents(events)).toEqual([]);
  });
});

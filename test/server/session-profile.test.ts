/**
 * Changing a session's profile from the client (`PATCH /sessions/{id} {profile_id}`) on a real
 * Navi: every socket watching the session hears `profile_switched` (outside any run: no run_id,
 * no seq), the next run uses the new profile's prompt, and an unknown profile, a run in progress
 * and bad input are refused with nothing changed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { SessionSummary } from '../../src/protocol/rest.js';
import type { FakeLlm } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, expectRefusal, getSession, systemText } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const profiles = profilesDir([
  { ...plainProfile, id: 'first', name: 'First', system_prompt: 'PROMPT-OF-FIRST' },
  { ...plainProfile, id: 'second', name: 'Second Profile', system_prompt: 'PROMPT-OF-SECOND' },
]);

let fake: FakeLlm;
let navi: NaviHandle;
let close: () => Promise<void> = async () => {};
const clients: EventClient[] = [];

beforeAll(async () => {
  ({ fake, navi, close } = await startNaviWithLlm({
    llm: { defaultReply: { text: 'OK.' } },
    settings: { PROFILES_DIR: profiles, DEFAULT_PROFILE: 'first' },
  }));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  fake.reset();
  fake.setDefault({ text: 'OK.' });
});
afterAll(() => close());

function patch(id: string, body: unknown): Promise<Response> {
  return fetch(`${navi.url}/sessions/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function watch(id: string): Promise<EventClient> {
  const client = await EventClient.connect(navi.wsUrl(id));
  clients.push(client);
  return client;
}

const isSwitch = (e: ServerEvent) => e.type === 'profile_switched';

describe('PATCH /sessions/{id} {profile_id}', () => {
  it('switches the profile, tells every socket watching the session, and the next run uses it', async () => {
    const id = await navi.createSession('first');
    const [a, b] = [await watch(id), await watch(id)];
    // A socket of another session hears nothing of it.
    const elsewhere = await watch(await navi.createSession('first'));

    const res = await patch(id, { profile_id: 'second' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as SessionSummary).profile_id).toBe('second');
    for (const client of [a, b]) {
      const event = await client.waitFor(isSwitch);
      // Outside any run: the event is sent as it is, with no run_id and no seq.
      expect(event).toEqual({
        type: 'profile_switched',
        profile_id: 'second',
        profile_name: 'Second Profile',
      });
    }
    expect((await getSession(navi, id)).profile_id).toBe('second');
    const listed = (await (await fetch(`${navi.url}/sessions`)).json()) as SessionSummary[];
    expect(listed.find((s) => s.id === id)?.profile_id).toBe('second');

    const from = a.events.length;
    a.send({ type: 'message', content: 'Who are you now?' });
    const run = await a.waitForRunEnd(from);
    expect(run.at(-1)?.type).toBe('stream_end');
    const chats = chatRequests(fake);
    expect(chats).toHaveLength(1);
    expect(systemText(chats[0])).toContain('PROMPT-OF-SECOND');
    expect(systemText(chats[0])).not.toContain('PROMPT-OF-FIRST');
    expect(elsewhere.ofType('profile_switched')).toEqual([]);
  });

  it('changes nothing and says nothing when the profile is the one the session has', async () => {
    const id = await navi.createSession('first');
    const client = await watch(id);
    const same = await patch(id, { profile_id: 'first', title: 'Renamed too' });
    expect(same.status).toBe(200);
    expect((await same.json()) as SessionSummary).toMatchObject({
      profile_id: 'first',
      title: 'Renamed too',
    });
    // The next switch is the first event the socket hears.
    expect((await patch(id, { profile_id: 'second' })).status).toBe(200);
    await client.waitFor(isSwitch);
    expect(client.events.map((e) => e.type)).toEqual(['profile_switched']);
  });

  it('refuses an unknown profile with the ones there are (400 UNKNOWN_PROFILE), changing nothing', async () => {
    const id = await navi.createSession('first');
    const client = await watch(id);
    await expectRefusal(
      await patch(id, { profile_id: 'nobody' }),
      400,
      'UNKNOWN_PROFILE',
      /"nobody".*first.*second/,
    );
    // Not even the other fields of the same request.
    await expectRefusal(
      await patch(id, { profile_id: '../first', title: 'Not kept' }),
      400,
      'UNKNOWN_PROFILE',
    );
    const detail = await getSession(navi, id);
    expect(detail.profile_id).toBe('first');
    expect(detail.title).toBe('');
    expect(client.events).toEqual([]);
  });

  it('refuses wrong types, an empty or oversized id and unknown sessions', async () => {
    const id = await navi.createSession('first');
    await expectRefusal(await patch(id, { profile_id: 2 }), 400, 'BAD_REQUEST', /profile_id/);
    await expectRefusal(await patch(id, { profile_id: null }), 400, 'BAD_REQUEST', /profile_id/);
    await expectRefusal(await patch(id, { profile_id: ['second'] }), 400, 'BAD_REQUEST', /profile_id/);
    await expectRefusal(await patch(id, { profile_id: '' }), 400, 'BAD_REQUEST', /profile_id/);
    await expectRefusal(await patch(id, { profile_id: 's'.repeat(65) }), 400, 'BAD_REQUEST', /profile_id/);
    await expectRefusal(await patch(id, '{"profile_id": "second"'), 400, 'INVALID_JSON');
    await expectRefusal(
      await patch('00000000-0000-4000-8000-000000000000', { profile_id: 'second' }),
      404,
      'SESSION_NOT_FOUND',
    );
    expect((await getSession(navi, id)).profile_id).toBe('first');
  });

  it('refuses while a run is active (409 RUN_ACTIVE), and switches once it is over', async () => {
    const id = await navi.createSession('first');
    const client = await watch(id);
    fake.enqueue({ hang: true });
    client.send({ type: 'message', content: 'Think for a long time.' });
    await client.waitFor((e) => e.type === 'stream_start');
    await fake.waitForRequests(1);

    await expectRefusal(await patch(id, { profile_id: 'second' }), 409, 'RUN_ACTIVE', /finished or stopped/);
    expect((await getSession(navi, id)).profile_id).toBe('first');

    await fetch(`${navi.url}/sessions/${id}/stop`, { method: 'POST' });
    await client.waitForRunEnd();
    expect((await patch(id, { profile_id: 'second' })).status).toBe(200);
    await client.waitFor(isSwitch);
    expect((await getSession(navi, id)).profile_id).toBe('second');
  });
});

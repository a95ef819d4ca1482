/**
 * One recall on the real clock: scheduled by the model two seconds ahead, it reaches the
 * WebSocket client watching the session as a run of its own, with no test clock involved.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { getRecalls, postMessage } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

let env: NaviWithLlm;

beforeAll(async () => {
  env = await startNaviWithLlm({
    settings: { PROFILES_DIR: profilesDir([plainProfile]), DEFAULT_PROFILE: 'plain' },
  });
});
afterAll(() => env.close());

it('runs a recall two seconds away and streams it to the open client', async () => {
  const { fake, navi } = env;
  const id = await navi.createSession();
  const client = await EventClient.connect(navi.wsUrl(id));
  fake.enqueue(
    {
      toolCalls: [
        {
          name: 'schedule_recall',
          arguments: { prompt: 'Say the kettle is ready', when: { type: 'once', delay: '2s' } },
        },
      ],
    },
    { text: 'I will tell you in two seconds.' },
    { text: 'The kettle is ready.' },
  );
  const sent = Date.now();
  expect((await postMessage(navi, id, 'tell me when the kettle is ready')).status).toBe(200);
  const start = await client.waitFor((e) => e.type === 'stream_start' && e.trigger === 'recall', 15_000);
  // Not before it was due (the scheduler never fires early).
  expect(Date.now() - sent).toBeGreaterThanOrEqual(1900);
  const events = await client.waitForRunEnd(client.events.indexOf(start));
  expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'The kettle is ready.' });
  const list = await getRecalls(navi, id);
  expect(list[0]).toMatchObject({ status: 'done', run_count: 1 });
  await client.close();
});

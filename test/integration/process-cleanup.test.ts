/**
 * Background processes inside a running Navi: the model starts them with the process tool,
 * deleting the session over REST ends that session's process groups (and no other), and
 * stopping Navi ends the rest. Checked by process group, so a `sleep &` left behind counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlm } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { eventually, groupGone, groupMembers } from '../support/processes.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, postMessage } from '../support/rest.js';

type Reply = { content: string; tool_calls: { tool: string; success: boolean; result: string }[] };

// Trusted, so the call runs whether or not bubblewrap is installed (without it, it would ask).
const profiles = profilesDir([{ ...plainProfile, trusted_tools: ['process'] }]);

describe('background processes and the life of their session', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};
  let keptGroup = 0;

  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      settings: {
        DEFAULT_LLM_BACKEND: 'ollama',
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        // Direct, so each command's processes share the process group the check looks at.
        NAVI_SANDBOX: 'off',
      },
    }));
  });
  afterAll(() => close());

  /** Has the model start `command` in `sessionId`; resolves to the process group's id. */
  async function startThroughModel(sessionId: string, command: string): Promise<number> {
    fake.enqueue(
      { toolCalls: [{ name: 'process', arguments: { action: 'start', command } }] },
      { text: 'Started.' },
    );
    const res = await postMessage(navi, sessionId, 'start it');
    expect(res.status).toBe(200);
    const reply = (await res.json()) as Reply;
    const call = reply.tool_calls[0];
    expect(call, JSON.stringify(reply)).toMatchObject({ tool: 'process', success: true });
    const pid = Number(/\(pid (\d+)\)/.exec(call?.result ?? '')?.[1]);
    expect(pid).toBeGreaterThan(0);
    return pid;
  }

  it('offers process and system_info, and deleting a session over REST kills its process groups only', async () => {
    const doomed = await navi.createSession();
    const kept = await navi.createSession();
    const doomedGroup = await startThroughModel(doomed, 'sleep 300 & sleep 300');
    keptGroup = await startThroughModel(kept, 'sleep 300');
    const offered = chatRequests(fake)[0]?.body.tools?.map((t) => t.function.name) ?? [];
    expect(offered).toEqual(expect.arrayContaining(['process', 'system_info']));
    // bash and both sleeps.
    await eventually(() => groupMembers(doomedGroup).length >= 3);

    const res = await fetch(`${navi.url}/sessions/${doomed}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    await eventually(() => groupGone(doomedGroup));
    expect(groupGone(keptGroup)).toBe(false);
  });

  it('kills the remaining process groups when Navi stops', async () => {
    expect(keptGroup).toBeGreaterThan(0);
    await close();
    close = async () => {};
    await eventually(() => groupGone(keptGroup));
  });
});

/**
 * Two `spawn_agent` calls of one turn run in parallel; the browser nests each subagent's calls
 * under its own card by `parent_call_id`, not under whichever spawn card happens to be latest.
 */
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ReplyScript } from '../fake-llm/index.js';
import { needsProgram } from '../support/requirements.js';
import { openNewSession, sendMessage, useWebEnv, waitForText } from './web-harness.js';

/** The task a subagent was given: the first user message of its own conversation. */
function taskOf(request: RecordedRequest): string {
  const first = request.body.messages?.find((m) => m.role === 'user');
  return typeof first?.content === 'string' ? first.content : '';
}

const hasToolResult = (request: RecordedRequest) =>
  (request.body.messages ?? []).some((m) => m.role === 'tool');

/** Each subagent calls slow_task with its own job, then answers; the parent then answers. */
function route(request: RecordedRequest): ReplyScript {
  const task = taskOf(request);
  for (const job of ['alpha', 'beta']) {
    if (task !== `Helper task ${job}`) continue;
    if (!hasToolResult(request))
      return { toolCalls: [{ id: `sub-${job}`, name: 'slow_task', arguments: { job } }] };
    return { text: `Helper ${job} is done.` };
  }
  return { text: 'Both helpers are done.' };
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: parallel subagents', () => {
  const env = useWebEnv();

  it('nests the calls of two subagents spawned in one turn under their own spawn cards', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue({
      toolCalls: [
        { id: 'spawn-alpha', name: 'spawn_agent', arguments: { task: 'Helper task alpha' } },
        { id: 'spawn-beta', name: 'spawn_agent', arguments: { task: 'Helper task beta' } },
      ],
    });
    env.fake.setDefault(route);
    await sendMessage(page, 'Run two helpers at once');

    const spawnCard = (job: string) =>
      page.locator(`[data-testid="tool-card"][data-tool="spawn_agent"][data-call-id="spawn-${job}"]`);
    const nested = (job: string, child: string) =>
      spawnCard(job).locator(`[data-testid="subagent-calls"] [data-call-id="${child}"]`);
    // Both subagents are inside slow_task at once: both spawn cards are running.
    await nested('alpha', 'sub-alpha').waitFor();
    await nested('beta', 'sub-beta').waitFor();
    expect(await spawnCard('alpha').getAttribute('data-status')).toBe('running');
    expect(await spawnCard('beta').getAttribute('data-status')).toBe('running');
    env.gate.open();
    env.gate.open();
    await waitForText(page.getByTestId('assistant-message').last(), 'Both helpers are done.');

    for (const [job, other] of [
      ['alpha', 'beta'],
      ['beta', 'alpha'],
    ] as const) {
      await spawnCard(job).and(page.locator('[data-status="done"]')).waitFor();
      expect(await nested(job, `sub-${job}`).getAttribute('data-status')).toBe('done');
      expect(await nested(job, `sub-${other}`).count()).toBe(0);
    }
    // Each subagent call shows exactly once: nested, never also at the top level.
    expect(await page.locator('[data-testid="tool-card"][data-call-id^="sub-"]').count()).toBe(2);
    await page.close();
  });
});

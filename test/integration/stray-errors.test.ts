/**
 * A user tool whose stray timer throws, or whose forgotten promise rejects, runs outside the
 * executor's reach. In a real `navi serve` process that must be logged, not end the server and
 * every session with it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { spawnNavi } from '../support/navi-process.js';
import { EventClient } from '../support/ws-client.js';

const STRAY_TOOL = `
export const name = 'stray';
export const description = 'Schedules errors nobody awaits.';
export const parameters = { type: 'object', properties: {} };
export async function execute() {
  setTimeout(() => { throw new Error('stray timer error'); }, 5);
  Promise.reject(new Error('forgotten rejection'));
  return 'scheduled';
}
`;

describe('errors thrown outside the executor', () => {
  let fake: FakeLlm;
  let child: ChildProcess;
  let stderr = '';
  let url = '';
  const dir = tempDir('navi-stray-');

  beforeAll(async () => {
    fake = await startFakeLlm();
    const port = Number(new URL(await closedPortUrl()).port);
    url = `http://127.0.0.1:${port}`;
    mkdirSync(join(dir, 'tools'));
    writeFileSync(join(dir, 'tools', 'stray.js'), STRAY_TOOL);
    writeFileSync(join(dir, 'tools', 'enabled.json'), '["stray"]');
    child = await spawnNavi({ dir, port, ollamaUrl: fake.ollamaUrl, stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (d: Buffer) => {
      stderr += d.toString();
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await fake?.close();
  });

  it('logs them and goes on serving', async () => {
    const created = (await (
      await fetch(`${url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
    ).json()) as { session_id: string };
    const ws = `ws://127.0.0.1:${new URL(url).port}/ws/sessions/${created.session_id}`;
    fake.enqueue({ toolCalls: [{ name: 'stray', arguments: {} }] }, { text: 'Done.' });
    const client = await EventClient.connect(ws);
    client.send({ type: 'message', content: 'Run stray.' });
    const events = await client.waitForRunEnd();
    expect(events.find((e) => e.type === 'tool_call')).toMatchObject({ tool: 'stray', success: true });
    // Give the stray timer and the rejection time to fire, then ask again.
    await new Promise((r) => setTimeout(r, 200));
    fake.enqueue({ text: 'Still here.' });
    const from = client.events.length;
    client.send({ type: 'message', content: 'Are you there?' });
    const next = await client.waitForRunEnd(from);
    expect(next.at(-1)).toMatchObject({ type: 'stream_end', content: 'Still here.' });
    await client.close();
    expect(child.exitCode).toBeNull();
    expect(stderr).toContain('stray timer error');
    expect(stderr).toContain('forgotten rejection');
  });
});

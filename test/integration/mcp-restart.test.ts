/**
 * `POST /agents/mcp/servers/{name}/restart` on a real Navi with a real stdio MCP server (the
 * manager's fixture): the server's process is replaced and its tools come back; a server waiting
 * for approval or disabled is not started by it, and unknown or hostile names are refused with
 * what to do instead.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerInfo, McpStatusView } from '../../src/protocol/rest.js';
import { type NaviHandle, repoRoot, startNavi, tempDir } from '../support/navi.js';

const fixture = {
  command: process.execPath,
  args: ['--import', 'tsx', join(repoRoot, 'src/mcp/fixtures/fixture-server.ts')],
  cwd: repoRoot,
};

describe('restarting one MCP server', () => {
  const dir = tempDir('navi-mcp-restart-');
  const serversDir = join(dir, 'servers');
  let navi: NaviHandle;

  beforeAll(async () => {
    mkdirSync(serversDir);
    writeFileSync(join(serversDir, 'fixture.json'), JSON.stringify({ name: 'fixture', ...fixture }));
    writeFileSync(
      join(serversDir, 'asleep.json'),
      JSON.stringify({ name: 'asleep', ...fixture, enabled: false }),
    );
    writeFileSync(
      join(serversDir, 'agent-made.json'),
      JSON.stringify({ name: 'agent-made', ...fixture, enabled: false, created_by: 'agent' }),
    );
    navi = await startNavi({ dir, settings: { MCP_SERVERS_DIR: serversDir } });
    await navi.services.mcp?.ready();
  }, 60_000);

  afterAll(async () => {
    await navi?.close();
  });

  const restart = (name: string) =>
    fetch(`${navi.url}/agents/mcp/servers/${encodeURIComponent(name)}/restart`, { method: 'POST' });

  const server = async (name: string): Promise<McpServerInfo | undefined> => {
    const body = (await (await fetch(`${navi.url}/agents/mcp`)).json()) as McpStatusView;
    return body.servers.find((s) => s.name === name);
  };

  it('replaces the process of a running server and registers its tools again', async () => {
    const before = await server('fixture');
    expect(before).toMatchObject({ state: 'ready', pid: expect.any(Number) });
    expect(before?.tool_count).toBeGreaterThan(0);

    const res = await restart('fixture');
    expect(res.status).toBe(200);
    const after = (await res.json()) as McpServerInfo;
    expect(after).toMatchObject({ name: 'fixture', state: 'ready', tool_count: before?.tool_count });
    expect(after.pid).toEqual(expect.any(Number));
    expect(after.pid).not.toBe(before?.pid);
    expect(navi.services.tools.has('mcp__fixture__info')).toBe(true);
    expect(await server('fixture')).toMatchObject({ state: 'ready', pid: after.pid });
  }, 60_000);

  it('does not start a server that waits for approval or is disabled, and says what would', async () => {
    const waiting = await restart('agent-made');
    expect(waiting.status).toBe(400);
    expect(await waiting.json()).toMatchObject({
      code: 'BAD_REQUEST',
      error: expect.stringContaining('approve it'),
    });
    expect(await server('agent-made')).toMatchObject({ state: 'awaiting_approval', pid: null });

    const disabled = await restart('asleep');
    expect(disabled.status).toBe(400);
    const body = (await disabled.json()) as { error: string };
    expect(body.error).toContain('"enabled": true');
    expect(body.error).toContain('asleep.json');
    expect(await server('asleep')).toMatchObject({ state: 'disabled', pid: null });
  });

  it('refuses unknown, hostile and oversized names', async () => {
    const unknown = await restart('ghost');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toContain('known: ');
    for (const name of ['../fixture', '__proto__', 'constructor', '<b>x</b>']) {
      const res = await restart(name);
      expect(res.status, name).toBe(404);
    }
    const long = await restart('x'.repeat(65));
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({ code: 'BAD_REQUEST', error: expect.stringContaining('64') });
    // The running server was left alone by all of that.
    expect(await server('fixture')).toMatchObject({ state: 'ready' });
  });
});

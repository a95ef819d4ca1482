/**
 * The MCP side of the REST API (docs/mcp.md#http-endpoints-and-navi-doctor) on a real Navi: `GET /agents/mcp` (per-server
 * state and skipped config files), `POST /agents/mcp/reload` (re-reads MCP_SERVERS_DIR) and the
 * MCP tools in `GET /agents/tools` with source "mcp" and their server.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpReloadReport, McpServerStatus } from '../../src/mcp/types.js';
import type { ToolSummary } from '../../src/protocol/rest.js';
import type { McpStatusBody } from '../../src/server/routes/mcp.js';
import { type NaviHandle, repoRoot, startNavi, tempDir } from '../support/navi.js';

const bin = (name: string) => join(repoRoot, 'node_modules', '.bin', name);

describe('MCP routes', () => {
  const dir = tempDir('navi-mcp-routes-');
  const serversDir = join(dir, 'servers');
  const shared = join(dir, 'shared');
  let navi: NaviHandle;

  beforeAll(async () => {
    mkdirSync(serversDir);
    mkdirSync(shared);
    writeFileSync(join(shared, 'note.txt'), 'hello from the filesystem server');
    writeFileSync(
      join(serversDir, 'everything.json'),
      JSON.stringify({ name: 'everything', command: bin('mcp-server-everything'), args: ['stdio'] }),
    );
    writeFileSync(join(serversDir, 'broken.json'), '{"name": "broken", "command": ');
    navi = await startNavi({ settings: { MCP_SERVERS_DIR: serversDir } });
    await navi.services.mcp?.ready();
  });

  afterAll(async () => {
    await navi?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const getJson = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${navi.url}${path}`);
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  };

  it('GET /agents/mcp lists each server with its state and the skipped files with the reason', async () => {
    const body = await getJson<McpStatusBody>('/agents/mcp');
    expect(body.servers).toEqual([
      expect.objectContaining({
        name: 'everything',
        transport: 'stdio',
        state: 'ready',
        pid: expect.any(Number),
      }),
    ]);
    expect(body.errors).toEqual([{ file: 'broken.json', error: expect.stringContaining('not valid JSON') }]);
  });

  it('GET /agents/tools shows MCP tools with source "mcp" and their server', async () => {
    const tools = await getJson<ToolSummary[]>('/agents/tools');
    expect(tools.find((t) => t.name === 'mcp__everything__echo')).toMatchObject({
      source: 'mcp',
      server: 'everything',
      description: 'Echoes back the input string',
      parameters: { type: 'object', properties: { message: { type: 'string' } } },
    });
    expect(tools.find((t) => t.name === 'mcp_status')).toMatchObject({ source: 'builtin' });
    expect(tools.find((t) => t.name === 'mcp_status')).not.toHaveProperty('server');
  });

  it('POST /agents/mcp/reload starts added servers and drops removed ones', async () => {
    writeFileSync(
      join(serversDir, 'files.json'),
      JSON.stringify({ name: 'files', command: bin('mcp-server-filesystem'), args: [shared] }),
    );
    rmSync(join(serversDir, 'broken.json'));
    const res = await fetch(`${navi.url}/agents/mcp/reload`, { method: 'POST' });
    expect(res.status).toBe(200);
    const report = (await res.json()) as McpReloadReport & { servers: McpServerStatus[] };
    expect(report).toMatchObject({ added: ['files'], removed: [], changed: [], unchanged: ['everything'] });
    expect(report.errors).toEqual([]);
    expect(report.servers.find((s) => s.name === 'files')).toMatchObject({ state: 'ready' });

    const tools = await getJson<ToolSummary[]>('/agents/tools');
    expect(tools.find((t) => t.name === 'mcp__files__read_text_file')).toMatchObject({
      source: 'mcp',
      server: 'files',
    });

    rmSync(join(serversDir, 'everything.json'));
    const again = (await (
      await fetch(`${navi.url}/agents/mcp/reload`, { method: 'POST' })
    ).json()) as McpReloadReport;
    expect(again).toMatchObject({ added: [], removed: ['everything'], unchanged: ['files'] });
    const after = await getJson<ToolSummary[]>('/agents/tools');
    expect(after.some((t) => t.server === 'everything')).toBe(false);
  });

  it('POST /agents/mcp/servers/:name/approve starts an agent-written server only for its shown command', async () => {
    const config = {
      name: 'agent-made',
      command: bin('mcp-server-everything'),
      args: ['stdio'],
      enabled: false,
      created_by: 'agent',
    };
    writeFileSync(join(serversDir, 'agent-made.json'), JSON.stringify(config));
    const cookie = await navi.pair();
    const approve = (name: string, command: string, headers: Record<string, string> = { cookie }) =>
      fetch(`${navi.url}/agents/mcp/servers/${name}/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ command }),
      });
    await fetch(`${navi.url}/agents/mcp/reload`, { method: 'POST' });
    const waiting = (await getJson<McpStatusBody>('/agents/mcp')).servers.find(
      (s) => s.name === 'agent-made',
    );
    expect(waiting).toMatchObject({
      state: 'awaiting_approval',
      pid: null,
      command: `${config.command} stdio`,
    });

    // A local client without the person's consent credential cannot approve it.
    const unpaired = await approve('agent-made', waiting?.command ?? '', {});
    expect(unpaired.status).toBe(403);
    expect(await unpaired.json()).toMatchObject({ code: 'CONSENT_REQUIRED' });
    const wrong = await approve('agent-made', `${config.command} something-else`);
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toContain('changed after approval');
    expect((await approve('ghost', 'x')).status).toBe(404);

    const ok = await approve('agent-made', waiting?.command ?? '');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ name: 'agent-made', state: 'ready', created_by: 'agent' });
  });
});

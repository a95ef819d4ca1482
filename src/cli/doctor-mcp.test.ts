/**
 * The MCP lines of `navi doctor`: counts of what a server offers, its last error as recorded,
 * and what to do about a server waiting for authorisation or approval. The last test takes the
 * statuses of a real manager: a catalog server and an HTTP server that answers 401.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManager, fixtureLaunch, tempDir, writeConfig } from '../mcp/fixtures/harness.js';
import type { McpManager } from '../mcp/manager.js';
import type { McpServerStatus } from '../mcp/types.js';
import { mcpChecks, serverCheck } from './doctor-mcp.js';

const base: McpServerStatus = {
  name: 'files',
  key: 'files',
  file: '/srv/mcp/files.json',
  transport: 'http',
  state: 'ready',
  command: 'https://mcp.example.com/mcp',
  tools: ['mcp__files__read'],
  tool_count: 1,
  last_error: null,
  uptime_ms: 1000,
  restarts: 0,
  restart_in_ms: null,
  pid: null,
  created_by: 'user',
  shipped: false,
  auth: null,
  resources: [{ uri: 'file:///a', name: 'a' }],
  resource_count: 1,
  prompts: [],
  prompt_count: 0,
};

describe('the MCP lines of navi doctor', () => {
  it('count what a ready server offers', () => {
    expect(serverCheck(base)).toEqual({
      name: 'mcp files',
      level: 'ok',
      detail: 'ready (http, 1 tool, 1 resource)',
    });
    expect(serverCheck({ ...base, tool_count: 3, resource_count: 0, prompt_count: 2 }).detail).toBe(
      'ready (http, 3 tools, 2 prompts)',
    );
  });

  it('tell the person how to authorise a server that waits for it, with its last error as is', () => {
    const check = serverCheck({
      ...base,
      state: 'needs_auth',
      tool_count: 0,
      resource_count: 0,
      auth: { status: 'needs_authorization', scope: 'files:read', expires_at: null },
      last_error: 'HTTP 401 Unauthorized from https://mcp.example.com/mcp: {"error":"invalid_token"}',
    });
    expect(check).toEqual({
      name: 'mcp files',
      level: 'warn',
      detail:
        'needs_auth (http, 0 tools); Navi needs your authorisation: run navi mcp login files and open the address ' +
        'it prints, or press "Connect" on the MCP servers page; last error: HTTP 401 Unauthorized from ' +
        'https://mcp.example.com/mcp: {"error":"invalid_token"}',
    });
  });

  it('warn of an unapproved server, fail one that is down, and list skipped files first', () => {
    const waiting = serverCheck({ ...base, state: 'awaiting_approval', command: 'node server.js' });
    expect(waiting.level).toBe('warn');
    expect(waiting.detail).toContain('approve it on the MCP servers page first; it runs node server.js');
    const down = { ...base, state: 'down' as const, last_error: 'process exited with code 3; stderr: boom' };
    expect(mcpChecks([{ file: 'bad.json', error: 'needs "command"' }], [down])).toEqual([
      { name: 'mcp config bad.json', level: 'fail', detail: 'needs "command"' },
      {
        name: 'mcp files',
        level: 'fail',
        detail: 'down (http, 1 tool, 1 resource); last error: process exited with code 3; stderr: boom',
      },
    ]);
  });
});

describe('the MCP lines of navi doctor for real servers', () => {
  const tmp = tempDir('doctor-mcp');
  const refusing = createServer((_req, res) => {
    res
      .writeHead(401, { 'content-type': 'application/json' })
      .end('{"error":"invalid_token","detail":"go away"}');
  });
  let manager: McpManager;

  beforeAll(async () => {
    await new Promise<void>((done) => refusing.listen(0, '127.0.0.1', done));
    const { port } = refusing.address() as AddressInfo;
    writeConfig(tmp.dir, 'catalog.json', { name: 'catalog', ...fixtureLaunch('catalog-server.ts') });
    writeConfig(tmp.dir, 'locked.json', { name: 'locked', url: `http://127.0.0.1:${port}/mcp` });
    ({ manager } = createManager(tmp.dir));
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager?.close();
    refusing.closeAllConnections();
    refusing.close();
    tmp.remove();
  });

  it('show the counts and the recorded error of each, unchanged', () => {
    const checks = mcpChecks(manager.errors(), manager.status());
    expect(checks.find((c) => c.name === 'mcp catalog')).toEqual({
      name: 'mcp catalog',
      level: 'ok',
      detail: 'ready (stdio, 3 tools, 8 resources, 2 prompts)',
    });
    const locked = manager.server('locked');
    expect(locked?.last_error).toContain('401');
    const line = checks.find((c) => c.name === 'mcp locked');
    expect(line?.detail).toContain(`last error: ${locked?.last_error}`);
    expect(line?.level).not.toBe('ok');
  });
});

/**
 * The line `mcp_status` writes for one server, for the states a test server cannot easily be
 * put in (authorisation); the tool on real servers is tested in src/mcp/catalog.test.ts and
 * src/mcp/tools.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { McpServerStatus } from '../types.js';
import { statusLine } from './mcp-status.js';

const base: McpServerStatus = {
  name: 'files',
  key: 'files',
  file: '/srv/mcp/files.json',
  transport: 'http',
  state: 'ready',
  command: 'https://mcp.example.com/mcp',
  tools: [],
  tool_count: 2,
  last_error: null,
  uptime_ms: null,
  restarts: 0,
  restart_in_ms: null,
  pid: null,
  created_by: 'user',
  shipped: false,
  auth: null,
  resources: [],
  resource_count: 0,
  prompts: [],
  prompt_count: 0,
};

describe('statusLine', () => {
  it('says how the user authorises a server that waits for it, and its real error', () => {
    const line = statusLine({
      ...base,
      state: 'needs_auth',
      tool_count: 0,
      auth: { status: 'needs_authorization', scope: null, expires_at: null },
      last_error: 'HTTP 401 Unauthorized: {"error":"invalid_token"}',
    });
    expect(line).toBe(
      '- files [http] needs_auth, 0 tools, waits for the user to authorise Navi: "Connect" on the MCP servers page, ' +
        'or navi mcp login files, last error: HTTP 401 Unauthorized: {"error":"invalid_token"}',
    );
  });

  it('shows a granted authorisation with its scope and expiry, and one in progress', () => {
    const authorised = statusLine({
      ...base,
      resource_count: 3,
      prompt_count: 1,
      auth: { status: 'authorized', scope: 'files:read', expires_at: '2026-12-01T10:00:00.000Z' },
    });
    expect(authorised).toBe(
      '- files [http] ready, 2 tools, 3 resources, 1 prompt, authorised (scope files:read), ' +
        'token expires 2026-12-01T10:00:00.000Z, last error: none',
    );
    const pending = statusLine({ ...base, auth: { status: 'pending', scope: null, expires_at: null } });
    expect(pending).toContain('authorisation started, waiting for the user to finish it in the browser');
  });
});

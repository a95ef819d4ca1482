/**
 * What POST /mcp answers to requests refused before the MCP transport sees them (a body that is
 * not JSON, another content type, one too large, no access): JSON-RPC errors an MCP client can
 * read, with the HTTP status a client still goes by. Raw HTTP against a real Navi on a real port;
 * the official SDK client still connects, and the REST routes keep their own error shape.
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

const profiles = profilesDir([plainProfile]);
const ACCEPT = 'application/json, text/event-stream';
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

interface RpcBody {
  jsonrpc?: string;
  error?: { code?: number; message?: string; data?: { code?: string } };
  id?: unknown;
}

/** A raw POST /mcp: its status, content type and parsed body. */
async function post(url: string, body: string, headers: Record<string, string>) {
  const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { accept: ACCEPT, ...headers }, body });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    body: JSON.parse(text) as RpcBody,
  };
}

/**
 * Expects a JSON-RPC error with `code`, a message matching `message`, Navi's error code (as
 * REST clients get it) as its data, and no request id.
 */
function expectRpcError(body: RpcBody, code: number, message: RegExp, naviCode: string): void {
  expect(body).toEqual({
    jsonrpc: '2.0',
    error: { code, message: expect.any(String), data: { code: naviCode } },
    id: null,
  });
  expect(body.error?.message).toMatch(message);
}

async function sdkClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'navi-mcp-errors-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

describe('POST /mcp refusals without a token', () => {
  let navi: NaviWithLlm;
  let url: string;
  beforeAll(async () => {
    navi = await startNaviWithLlm({ settings: { PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' } });
    url = navi.navi.url;
  });
  afterAll(async () => {
    await navi?.close();
  });

  it('answers a body that is not JSON with a JSON-RPC parse error (400, -32700)', async () => {
    for (const body of ['{"jsonrpc": "2.0", "method":', 'not json at all', '']) {
      const res = await post(url, body, { 'content-type': 'application/json' });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.type).toContain('application/json');
      expectRpcError(res.body, -32_700, /^Parse error: .*send one JSON-RPC message/, 'INVALID_JSON');
    }
  });

  it('answers a body that is not application/json with a JSON-RPC error (415)', async () => {
    const cases: Record<string, string>[] = [
      { 'content-type': 'application/xml' },
      { 'content-type': 'text/plain' },
      { 'content-type': 'multipart/form-data; boundary=x' },
      { 'content-type': 'not a media type' },
    ];
    for (const headers of cases) {
      const res = await post(url, INITIALIZE, headers);
      expect(res.status, headers['content-type']).toBe(415);
      expectRpcError(res.body, -32_000, /Content-Type must be application\/json/, 'UNSUPPORTED_MEDIA_TYPE');
    }
    // No content type at all, with a body: the same.
    const untyped = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${url}/mcp`, { method: 'POST', headers: { accept: ACCEPT } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(INITIALIZE);
    });
    expect(untyped.status).toBe(415);
    expectRpcError(
      JSON.parse(untyped.text) as RpcBody,
      -32_000,
      /application\/json/,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('answers a body over 8 MiB with a JSON-RPC error (413)', async () => {
    const huge = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"${'x'.repeat(8 * 1024 * 1024)}"}}`;
    const res = await post(url, huge, { 'content-type': 'application/json' });
    expect(res.status).toBe(413);
    expectRpcError(res.body, -32_000, /Payload Too Large: .*send a shorter message/, 'BODY_TOO_LARGE');
  });

  it('keeps 403 for a foreign Host, now with a JSON-RPC body', async () => {
    const refused = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        `${url}/mcp`,
        {
          method: 'POST',
          headers: { host: 'evil.example', 'content-type': 'application/json', accept: ACCEPT },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(INITIALIZE);
    });
    expect(refused.status).toBe(403);
    expectRpcError(
      JSON.parse(refused.text) as RpcBody,
      -32_000,
      /only requests addressed to localhost/,
      'FOREIGN_HOST',
    );
  });

  it('still serves the official SDK client, and leaves the REST error shape to the REST routes', async () => {
    const client = await sdkClient(url);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'ask_navi',
        'get_session',
        'list_sessions',
        'search_memory',
      ]);
    } finally {
      await client.close();
    }
    const rest = await fetch(`${url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"profile_id":',
    });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ code: 'INVALID_JSON' });
  });
});

describe('POST /mcp refusals with NAVI_API_TOKEN', () => {
  const token = 'mcp-errors-test-token-0123456789';
  let navi: NaviWithLlm;
  beforeAll(async () => {
    navi = await startNaviWithLlm({
      settings: { NAVI_API_TOKEN: token, PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
    });
  });
  afterAll(async () => {
    await navi?.close();
  });

  it('keeps 401 without the token, with the access check’s message in a JSON-RPC body', async () => {
    const cases: [Record<string, string>, RegExp, string][] = [
      [{}, /A valid API token is required/, 'UNAUTHORIZED'],
      [
        { authorization: 'Bearer wrong' },
        /not the one this server uses; check NAVI_API_TOKEN/,
        'TOKEN_WRONG',
      ],
    ];
    for (const [headers, message, naviCode] of cases) {
      const res = await post(navi.navi.url, INITIALIZE, { 'content-type': 'application/json', ...headers });
      expect(res.status).toBe(401);
      expectRpcError(res.body, -32_000, message, naviCode);
    }
    // The access check comes first: broken JSON without the token is still a 401.
    const broken = await post(navi.navi.url, '{', { 'content-type': 'application/json' });
    expect(broken.status).toBe(401);
  });

  it('serves the official SDK client with the token', async () => {
    const client = await sdkClient(navi.navi.url, { authorization: `Bearer ${token}` });
    try {
      expect(client.getServerVersion()?.name).toBe('navi');
      expect((await client.listTools()).tools).toHaveLength(4);
    } finally {
      await client.close();
    }
  });
});

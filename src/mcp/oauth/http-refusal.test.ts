/**
 * A call or a resource read an HTTP server refuses with an error page: the agent reads the
 * server's status and a short summary with anything token-like hidden, never the server's whole
 * answer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { type OAuthHarness, oauthHarness } from './oauth-support.test-helpers.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJuYXZpIn0.c2VjcmV0c2lnbmF0dXJl';
let h: OAuthHarness | undefined;
let http: Server | undefined;

afterEach(async () => {
  await h?.close();
  await new Promise((r) => http?.close(r));
});

/**
 * Offers one tool and one resource, and answers every tools/call with a 500 page and every
 * resources/read with a 502 page, each echoing a token.
 */
function startRefusingServer(): Promise<string> {
  http = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const message = JSON.parse(text) as { id?: number; method: string };
      const json = (result: unknown): void => {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      };
      const page = (status: number, what: string): void => {
        res
          .writeHead(status, { 'content-type': 'text/html' })
          .end(
            `<html><body>${what} for Authorization: Bearer ${TOKEN} ${'detail '.repeat(500)}</body></html>`,
          );
      };
      if (message.method === 'initialize')
        json({
          protocolVersion: '2025-06-18',
          capabilities: { tools: {}, resources: {} },
          serverInfo: { name: 'refusing', version: '1' },
        });
      else if (message.method === 'tools/list')
        json({ tools: [{ name: 'work', inputSchema: { type: 'object' } }] });
      else if (message.method === 'resources/list')
        json({ resources: [{ uri: 'file:///report.txt', name: 'report' }] });
      else if (message.method === 'resources/templates/list') json({ resourceTemplates: [] });
      else if (message.method === 'tools/call') page(500, 'Upstream failed');
      else if (message.method === 'resources/read') page(502, 'Bad gateway');
      else res.writeHead(202).end();
    });
  });
  const server = http;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
    ),
  );
}

async function readyHarness(): Promise<OAuthHarness> {
  const url = await startRefusingServer();
  h = await oauthHarness({ 'plain.json': { name: 'plain', url } });
  await h.waitForState('ready');
  return h;
}

it("a refused call says the server's status and a short summary, without the token it echoed", async () => {
  const harness = await readyHarness();
  const result = await harness.call('work').catch((err: Error) => ({ success: false, error: err.message }));
  expect(result.success).toBe(false);
  expect(result.error).toContain('MCP server plain refused the call');
  expect(result.error).toContain('refused the call: HTTP 500: <html><body>Upstream failed');
  expect(result.error).not.toContain('eyJzdWIiOiJuYXZpIn0');
  expect(result.error?.length).toBeLessThan(600);
});

it("a refused resource read says the server's status and a short summary, without the token it echoed", async () => {
  const harness = await readyHarness();
  const error = await harness.manager
    .readResource('plain', 'file:///report.txt', new AbortController().signal)
    .then(
      () => 'read',
      (err: Error) => err.message,
    );
  expect(error).toContain('MCP server plain refused to read the resource: HTTP 502: <html><body>Bad gateway');
  expect(error).not.toContain('eyJzdWIiOiJuYXZpIn0');
  expect(error.length).toBeLessThan(600);
});

/**
 * A vault secret used by reference, end to end: the LLM names `{{secret:<id>.<field>}}` in a
 * terminal command and in an HTTP header sent to a local server that echoes it back. The value
 * reaches the command and the server, and nowhere else: not an LLM request (the fake LLM keeps
 * every request), not a WebSocket event, not a log line, not the database file.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/config/logger.js';
import type { ServerEvent } from '../../src/protocol/events.js';
import { SecretMasker } from '../../src/util/secret-masker.js';
import { tempDir } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { EventClient } from '../support/ws-client.js';

const VALUE = 'tok-9f3c1a77e2b84d05-PLANTED';

/** Answers every request with what it was sent: the headers and the body. */
async function startEchoServer(): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const echo = JSON.stringify({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      seen.push(echo);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(echo);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`, seen };
}

describe('a vault secret used by reference', () => {
  const dir = tempDir('navi-secret-ref-');
  const lines: string[] = [];
  const secrets = new SecretMasker();
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  let app: NaviWithLlm;
  let reference: string;
  let secretId: string;

  beforeAll(async () => {
    echo = await startEchoServer();
    const logSink = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    app = await startNaviWithLlm({
      dir,
      secrets,
      logger: createLogger({ LOG_LEVEL: 'DEBUG', LOG_FORMAT: 'json' }, logSink, secrets),
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        PROFILES_DIR: profilesDir([
          { ...plainProfile, autonomy: 'autonomous' },
          { ...plainProfile, id: 'nosecrets', autonomy: 'autonomous', secret_tools: [] },
          {
            ...plainProfile,
            id: 'revealer',
            trusted_tools: ['mcp__gnexus_creds__reveal_secret'],
          },
        ]),
        DEFAULT_PROFILE: 'plain',
        MCP_SHIPPED_SERVERS: 'true',
        HTTP_ALLOW_PRIVATE: '127.0.0.1',
        LOG_LEVEL: 'DEBUG',
      },
    });
    await app.navi.services.mcp?.ready();
    const vault = app.navi.services.vault;
    const created = vault.create(
      {
        name: 'Example API',
        type: 'api_token',
        fields: [
          { name: 'user', value: 'robot', secret: false },
          { name: 'token', value: VALUE, secret: true },
        ],
      },
      { actor: 'user' },
    );
    secretId = created.id;
    reference = created.fields.find((f) => f.name === 'token')!.reference!;
  });

  afterAll(async () => {
    await app?.close();
    await new Promise((done) => echo?.server.close(done));
  });

  async function run(sessionId: string, content: string): Promise<ServerEvent[]> {
    const client = await EventClient.connect(app.navi.wsUrl(sessionId));
    const res = await fetch(`${app.navi.url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
    });
    expect(res.status).toBe(200);
    await client.waitFor((e) => e.type === 'stream_end');
    client.socket.close();
    return client.events;
  }

  it('reaches the command and the server, and never the LLM, an event, the log or the database', async () => {
    const { fake, navi } = app;
    const sessionId = await navi.createSession();
    fake.reset();
    fake.enqueue(
      { toolCalls: [{ id: 't1', name: 'terminal', arguments: { command: `echo "key=${reference}"` } }] },
      {
        toolCalls: [
          {
            id: 'h1',
            name: 'mcp__navi_web__http_request',
            arguments: {
              method: 'POST',
              url: echo.url,
              headers: { Authorization: `Bearer ${reference}` },
              body: reference,
            },
          },
        ],
      },
      { text: 'Both calls worked.' },
    );
    const events = await run(sessionId, 'Use my Example API token.');

    // It was used: the server received it, in the header and the body.
    expect(echo.seen).toHaveLength(1);
    expect(echo.seen[0]).toContain(`Bearer ${VALUE}`);

    // The LLM saw the references it wrote and masks where the value came back.
    const chats = fake.requests.filter((r) => r.kind === 'chat');
    expect(chats).toHaveLength(3);
    const toolResults = JSON.stringify(chats[2]!.body.messages?.filter((m) => m.role === 'tool'));
    expect(toolResults).toContain('key=[secret hidden: Example API.token]');
    expect(toolResults).toContain('Bearer [secret hidden: Example API.token]');
    for (const request of fake.requests) expect(JSON.stringify(request.body)).not.toContain(VALUE);

    const started = events.filter((e) => e.type === 'tool_started');
    expect(JSON.stringify(started)).toContain(reference);
    expect(JSON.stringify(events)).not.toContain(VALUE);

    expect(lines.join('').length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain(VALUE);

    const stored = await (await fetch(`${navi.url}/sessions/${sessionId}`)).json();
    expect(JSON.stringify(stored)).toContain('[secret hidden: Example API.token]');
    const db = join(dir, 'navi.db');
    for (const file of [db, `${db}-wal`]) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch {
        continue;
      }
      expect(bytes.includes(VALUE), file).toBe(false);
    }

    // Each use is in the vault's audit log, with the session and the tool.
    const uses = navi.services.vault.auditLog({ secret_id: secretId }).filter((e) => e.action === 'use');
    expect(uses.map((e) => e.tool).sort()).toEqual(['mcp__navi_web__http_request', 'terminal']);
    expect(uses.every((e) => e.session_id === sessionId && e.field === 'token')).toBe(true);
  });

  it('is refused, and nothing runs, for a tool the profile does not let use secrets', async () => {
    const { fake, navi } = app;
    const sessionId = await navi.createSession('nosecrets');
    fake.reset();
    fake.enqueue(
      {
        toolCalls: [
          {
            id: 't1',
            name: 'terminal',
            arguments: { command: `echo ${reference} > ${join(dir, 'leak.txt')}` },
          },
        ],
      },
      { text: 'ok' },
    );
    await run(sessionId, 'write it down');
    const seen = JSON.stringify(fake.requests.at(-1)?.body.messages?.filter((m) => m.role === 'tool'));
    expect(seen).toContain('may not use vault secrets by reference under profile \\"nosecrets\\"');
    expect(() => readFileSync(join(dir, 'leak.txt'))).toThrow();
  });

  it('is refused with the reason for an unknown or archived secret', async () => {
    const { fake, navi } = app;
    const other = navi.services.vault.create(
      {
        name: 'Old key',
        type: 'api_token',
        fields: [{ name: 'token', value: 'old-value-123456', secret: true }],
      },
      { actor: 'user' },
    );
    navi.services.vault.archive(other.id, { actor: 'user' });
    const sessionId = await navi.createSession();
    fake.reset();
    fake.enqueue(
      {
        toolCalls: [
          { id: 't1', name: 'terminal', arguments: { command: `echo {{secret:${other.id}.token}}` } },
          {
            id: 't2',
            name: 'terminal',
            arguments: { command: 'echo {{secret:00000000-0000-4000-8000-000000000000.token}}' },
          },
        ],
      },
      { text: 'ok' },
    );
    await run(sessionId, 'try them');
    const tools = fake.requests.at(-1)?.body.messages?.filter((m) => m.role === 'tool') ?? [];
    expect(tools).toHaveLength(2);
    for (const t of tools)
      expect(String(t.content)).toMatch(/was not run: \{\{secret:[0-9a-f-]+\.token\}\} cannot be used: /);
    expect(JSON.stringify(tools)).not.toContain('old-value-123456');
  });

  it('a value revealed on request is shown once, then masked in the transcript and the next run', async () => {
    const { fake, navi } = app;
    const sessionId = await navi.createSession('revealer');
    fake.reset();
    fake.enqueue(
      {
        toolCalls: [
          {
            id: 'r1',
            name: 'mcp__gnexus_creds__reveal_secret',
            arguments: { id: secretId, field: 'token', reason: 'the person asked to see it' },
          },
        ],
      },
      { text: `Your token is ${VALUE}.` },
    );
    const events = await run(sessionId, 'Show me my Example API token.');
    const call = events.find((e) => e.type === 'tool_call');
    expect(call && 'result' in call ? call.result : '').toContain(VALUE);

    const stored = JSON.stringify(await (await fetch(`${navi.url}/sessions/${sessionId}`)).json());
    expect(stored).not.toContain(VALUE);
    expect(stored).toContain('Your token is [secret hidden: ');

    fake.enqueue({ text: 'Noted.' });
    await run(sessionId, 'Thanks.');
    const next = fake.requests.filter((r) => r.kind === 'chat').at(-1);
    expect(JSON.stringify(next?.body)).not.toContain(VALUE);
    expect(lines.join('')).not.toContain(VALUE);

    const reveal = navi.services.vault.auditLog({ secret_id: secretId }).find((e) => e.action === 'reveal');
    expect(reveal).toMatchObject({
      field: 'token',
      session_id: sessionId,
      reason: 'the person asked to see it',
    });
  });
});

/**
 * `navi mcp` (docs/mcp-server.md#over-stdio-navi-mcp): the official SDK client starts the real
 * command as an MCP host does and talks to it over stdio, with the fake LLM server as the model.
 * Also: stdout carries nothing but the protocol, stdin's end shuts it down, and the sessions it
 * creates are in the same SQLite file a `navi serve` then shows.
 */

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, type RecordedRequest, type ReplyScript, startFakeLlm } from '../fake-llm/index.js';
import { freePort } from '../support/dovecot.js';
import { repoRoot, tempDir } from '../support/navi.js';
import { askNavi, call, textOf, withoutCheckoutDotEnv } from '../support/navi-mcp-client.js';
import { naviProcessEnv, spawnNavi } from '../support/navi-process.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

const profiles = profilesDir([
  plainProfile,
  { ...plainProfile, id: 'careful', name: 'Careful', confirm_tools: ['memory'] },
]);

let fake: FakeLlm;

/**
 * Answers by the conversation, not by arrival: saving a fact has the memory summary rewritten in
 * the background, and that request must not take a reply meant for a run. `replies` maps the
 * run's user message to its first reply and the reply after a tool result; anything else gets a
 * plain text.
 */
function answerBy(replies: Record<string, [ReplyScript, ReplyScript?]>): void {
  fake.setDefault((r) => {
    const messages = r.body.messages ?? [];
    const user = messages.filter((m) => m.role === 'user').at(-1)?.content;
    const script = typeof user === 'string' ? replies[user] : undefined;
    if (!script) return { text: 'Nothing to add.' };
    return messages.at(-1)?.role === 'tool' ? (script[1] ?? { text: 'Done.' }) : script[0];
  });
}
let dir: string;
let client: Client;

function env(): Record<string, string> {
  const all = naviProcessEnv({ dir, port: 0, ollamaUrl: fake.ollamaUrl, extra: { PROFILES_DIR: profiles } });
  // navi mcp works in the checkout: a developer's .env there must not reach the test.
  return withoutCheckoutDotEnv(
    Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined)),
  );
}

async function connect(): Promise<Client> {
  const c = new Client({ name: 'navi-mcp-stdio-test', version: '1.0.0' });
  await c.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(repoRoot, 'bin/navi.js'), 'mcp'],
      cwd: dir,
      env: env(),
      stderr: 'pipe',
    }),
  );
  return c;
}

describe('navi mcp over stdio', () => {
  beforeAll(async () => {
    fake = await startFakeLlm();
    dir = tempDir('navi-mcp-stdio-');
    client = await connect();
  }, 60_000);
  afterEach(() => fake.reset());
  afterAll(async () => {
    await client?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists its tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'ask_navi',
      'get_session',
      'list_sessions',
      'search_memory',
    ]);
  });

  it('answers, reports progress, remembers, continues the session and shows it', async () => {
    answerBy({
      'Remember that I drink green tea.': [
        {
          toolCalls: [
            {
              name: 'memory',
              arguments: { action: 'save', category: 'preference', key: 'tea', value: 'green tea, no sugar' },
            },
          ],
        },
        { text: 'Noted: green tea.' },
      ],
      'What do I drink?': [{ text: 'Still green tea.' }],
    });
    const first = await askNavi(client, { message: 'Remember that I drink green tea.' });
    expect(first.result.isError, textOf(first.result)).toBeFalsy();
    expect(first.answer).toBe('Noted: green tea.');
    expect(textOf(first.result)).toContain(`session_id: ${first.sessionId}`);
    const progress = first.progress.map((p) => p.message ?? '');
    expect(progress.some((m) => m.startsWith('→ memory '))).toBe(true);
    expect(progress.some((m) => m.startsWith('✓ memory'))).toBe(true);

    const found = await call(client, 'search_memory', { query: 'tea', limit: 5 });
    expect((found.structuredContent as { facts: { value: string }[] }).facts).toContainEqual(
      expect.objectContaining({ key: 'tea', value: 'green tea, no sugar' }),
    );

    const second = await askNavi(client, { message: 'What do I drink?', session_id: first.sessionId });
    expect(second).toMatchObject({ answer: 'Still green tea.', sessionId: first.sessionId });

    const listed = await call(client, 'list_sessions', { limit: 10 });
    expect((listed.structuredContent as { sessions: { id: string }[] }).sessions.map((s) => s.id)).toContain(
      first.sessionId,
    );
    const read = await call(client, 'get_session', { id: first.sessionId });
    const messages = (read.structuredContent as { messages: { role: string; content: string | null }[] })
      .messages;
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'Remember that I drink green tea.',
      'What do I drink?',
    ]);
  });

  it('refuses a tool that needs confirmation and says why', async () => {
    answerBy({
      'Remember z.': [
        {
          toolCalls: [{ name: 'memory', arguments: { action: 'save', category: 'x', key: 'y', value: 'z' } }],
        },
        { text: 'I was not allowed to.' },
      ],
    });
    const asked = await askNavi(client, { message: 'Remember z.', profile: 'careful' });
    expect(asked.answer).toBe('I was not allowed to.');
    expect(asked.progress.map((p) => p.message).join('\n')).toContain('✗ memory');
    const toolResult = fake.requests
      .flatMap((r) => r.body.messages ?? [])
      .find((m) => m.role === 'tool' && m.tool_name === 'memory');
    expect(String(toolResult?.content)).toContain("Navi's MCP server, where nobody can approve a tool");
  });

  it('answers bad arguments with tool errors', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['ask_navi', {}, /message/],
      ['ask_navi', { message: ['not', 'text'] }, /message/],
      ['ask_navi', { message: 'hi', session_id: '11111111-1111-4111-8111-111111111111' }, /no session 1111/],
      ['get_session', { id: 'DROP TABLE sessions;' }, /not a Navi session id/],
      ['search_memory', {}, /query/],
    ];
    for (const [name, args, expected] of cases) {
      const result = await call(client, name, args);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(expected);
    }
  });

  it('stops the run when the host cancels the call', async () => {
    const isMine = (r: RecordedRequest) => r.body.messages?.at(-1)?.content === 'Think forever.';
    fake.setDefault((r) => (isMine(r) ? { hang: true } : { text: 'ok' }));
    const cancel = new AbortController();
    const asked = askNavi(client, { message: 'Think forever.' }, { signal: cancel.signal });
    for (let n = 1; !fake.requests.some(isMine); n++) await fake.waitForRequests(n);
    cancel.abort();
    await expect(asked).rejects.toThrow();
    await fake.waitForAborted(1);
  });
});

describe('navi mcp as a process', () => {
  let child: ChildProcess | undefined;
  let serve: ChildProcess | undefined;
  beforeAll(async () => {
    fake = await startFakeLlm();
    dir = tempDir('navi-mcp-process-');
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    serve?.kill('SIGKILL');
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes only protocol to stdout and ends when stdin ends', async () => {
    child = spawn(process.execPath, [join(repoRoot, 'bin/navi.js'), 'mcp'], {
      cwd: dir,
      env: { ...env(), LOG_LEVEL: 'DEBUG' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    const send = (message: unknown) => child?.stdin?.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    while (!stdout.includes('"id":2')) await new Promise((r) => setTimeout(r, 50));
    child.stdin?.end();
    expect(await exited).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { jsonrpc: string }).jsonrpc)).toEqual(['2.0', '2.0']);
    // The log is there, on stderr.
    expect(stderr).toContain('navi mcp serving over stdio');
  });

  it('shares the SQLite file with navi serve: its sessions show there', async () => {
    const c = await connect();
    fake.enqueue({ text: 'Hello from stdio.' });
    const asked = await askNavi(c, { message: 'Hi there' });
    await c.close();
    const port = await freePort();
    serve = await spawnNavi({ dir, port, ollamaUrl: fake.ollamaUrl, extra: { PROFILES_DIR: profiles } });
    const sessions = (await (await fetch(`http://127.0.0.1:${port}/sessions`)).json()) as { id: string }[];
    expect(sessions.map((s) => s.id)).toContain(asked.sessionId);
  }, 60_000);
});

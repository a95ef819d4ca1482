/**
 * Serving shipped servers: navi-web started as Navi starts it (a real process, the SDK's own
 * client over stdio and over Streamable HTTP), its shutdown paths and refusals, and the
 * serving pieces in-process (sessions, cancellation, onClose).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import packageJson from '../../../package.json' with { type: 'json' };
import { parseServeArgs, registerShippedTool, type ServeHandle, serve } from './serve.js';
import { type ShippedTool, type ToolRequest, toolText } from './tool.js';

const repoRoot = resolve(import.meta.dirname, '../../..');
const MAIN = ['--import', 'tsx', join('src', 'servers', 'navi-web', 'main.ts')];
const TOOLS = ['http_request', 'web_search', 'web_view'];
/** Every setting at its default: the developer's environment must not change the outcome. */
const cleanEnv = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  ...extra,
});

function startMain(args: string[], env = cleanEnv()): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [...MAIN, ...args], { cwd: repoRoot, env });
}

function exited(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  return new Promise((done) => child.once('exit', (code) => done({ code, stderr })));
}

function listeningUrl(child: ChildProcessWithoutNullStreams): Promise<string> {
  return new Promise((done, fail) => {
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      const url = stderr.match(/^listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m)?.[1];
      if (url) done(url);
    });
    child.once('exit', (code) => fail(new Error(`exited with ${code} before listening: ${stderr}`)));
  });
}

/** One raw POST, so headers the SDK client would never send can be tried. */
function rawPost(url: string, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  return new Promise((done, fail) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

describe('navi-web as a process', () => {
  const children: ChildProcessWithoutNullStreams[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('offers its three tools over stdio to the SDK client', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: MAIN,
      cwd: repoRoot,
      env: cleanEnv(),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '0.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'navi-web', version: packageJson.version });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
      expect(tools.find((t) => t.name === 'http_request')?.annotations).toMatchObject({
        destructiveHint: true,
      });
    } finally {
      await client.close();
    }
  });

  it('serves Streamable HTTP on 127.0.0.1 with --http 0, refuses other hosts, and stops on SIGTERM', async () => {
    const child = startMain(['--http', '0']);
    children.push(child);
    const url = await listeningUrl(child);
    const client = new Client({ name: 'test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    await client.close();

    const { port } = new URL(url);
    expect(await rawPost(url, { host: 'evil.example.com' })).toBe(403);
    expect(await rawPost(url, { host: `evil.example.com@127.0.0.1:${port}` })).toBe(403);
    expect(await rawPost(url, { host: `localhost:${port}`, origin: 'http://evil.example.com' })).toBe(403);
    expect(await rawPost(url, { 'mcp-session-id': 'no-such-session' })).toBe(404);
    expect(await rawPost(url.replace('/mcp', '/other'), {})).toBe(404);
    expect(await rawPost(url, { host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200);

    const end = exited(child);
    child.kill('SIGTERM');
    expect((await end).code).toBe(0);
  });

  it('stops when its stdin ends', async () => {
    const child = startMain([]);
    children.push(child);
    const end = exited(child);
    child.stdin.end();
    expect((await end).code).toBe(0);
  });

  it('refuses a bad setting before serving, naming it', async () => {
    const child = startMain([], cleanEnv({ WEB_MAX_RESPONSE_BYTES: 'lots' }));
    children.push(child);
    const { code, stderr } = await exited(child);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^navi-web: Invalid configuration:\n {2}- WEB_MAX_RESPONSE_BYTES="lots": /);
  });

  it('says so when the port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const { port } = taken.address() as AddressInfo;
    try {
      const child = startMain(['--http', String(port)]);
      children.push(child);
      const { code, stderr } = await exited(child);
      expect(code).toBe(1);
      expect(stderr).toContain('navi-web: cannot serve: listen EADDRINUSE');
    } finally {
      await new Promise((done) => taken.close(done));
    }
  });

  it('refuses an unknown command line', async () => {
    const child = startMain(['--port', '80']);
    children.push(child);
    const { code, stderr } = await exited(child);
    expect(code).toBe(1);
    expect(stderr).toContain('navi-web: unknown argument "--port"; usage: [--http <port>]');
  });
});

describe('parseServeArgs', () => {
  it('reads stdio and --http <port>', () => {
    expect(parseServeArgs([])).toEqual({ kind: 'stdio' });
    expect(parseServeArgs(['--http', '0'])).toEqual({ kind: 'http', port: 0 });
    expect(parseServeArgs(['--http', '8123'])).toEqual({ kind: 'http', port: 8123 });
  });

  it.each([
    [['--http'], '--http needs a port number from 0 to 65535, not ""'],
    [['--http', 'abc'], 'not "abc"'],
    [['--http', '-1'], 'not "-1"'],
    [['--http', '70000'], 'not "70000"'],
    [['--http', '1.5'], 'not "1.5"'],
    [['--http', '80', 'extra'], 'unexpected argument "extra"'],
    [['stdio'], 'unknown argument "stdio"'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseServeArgs(argv)).toThrow(message);
  });
});

describe('serving in-process', () => {
  let handle: ServeHandle | undefined;
  afterEach(async () => {
    await handle?.close();
    handle = undefined;
  });

  function slowTool(started: () => void, aborted: (signal: AbortSignal) => void): ShippedTool {
    return {
      name: 'wait',
      description: 'Waits until cancelled.',
      inputSchema: { label: z.string() },
      annotations: { readOnlyHint: true },
      handler: (_args, signal) =>
        new Promise((done) => {
          started();
          signal.addEventListener('abort', () => {
            aborted(signal);
            done(toolText('stopped'));
          });
        }),
    };
  }

  it('gives each HTTP session its own server, passes cancellation to the tool, and awaits onClose', async () => {
    let created = 0;
    let onStarted!: () => void;
    const started = new Promise<void>((done) => {
      onStarted = done;
    });
    let onAborted!: (signal: AbortSignal) => void;
    const aborted = new Promise<AbortSignal>((done) => {
      onAborted = done;
    });
    const broken: ShippedTool = {
      name: 'broken',
      description: 'Throws.',
      inputSchema: {},
      annotations: {},
      handler: () => Promise.reject(new Error('disk on fire')),
    };
    let closedResources = false;
    const lines: string[] = [];
    handle = await serve({
      mode: { kind: 'http', port: 0 },
      handleSignals: false,
      log: (line) => lines.push(line),
      createServer: () => {
        created += 1;
        const server = new McpServer({ name: 'test', version: '1.0.0' });
        registerShippedTool(server, slowTool(onStarted, onAborted));
        registerShippedTool(server, broken);
        return server;
      },
      onClose: async () => {
        closedResources = true;
      },
    });
    expect(lines).toEqual([`listening on ${handle.url}`]);
    const url = new URL(handle.url ?? '');
    const first = new Client({ name: 'a', version: '0' });
    const second = new Client({ name: 'b', version: '0' });
    await first.connect(new StreamableHTTPClientTransport(url));
    await second.connect(new StreamableHTTPClientTransport(url));
    expect(created).toBe(2);

    const failed = (await second.callTool({ name: 'broken', arguments: {} })) as CallToolResult;
    expect(failed).toMatchObject({ isError: true });
    expect(JSON.stringify(failed.content)).toContain('broken failed unexpectedly: disk on fire');

    const cancel = new AbortController();
    const call = first.callTool({ name: 'wait', arguments: { label: 'x' } }, undefined, {
      signal: cancel.signal,
    });
    await started;
    cancel.abort();
    await expect(call).rejects.toThrow();
    expect((await aborted).aborted).toBe(true);

    await first.close();
    await second.close();
    await handle.close();
    await handle.closed;
    expect(closedResources).toBe(true);
    await expect(rawPost(url.href, {})).rejects.toThrow(/ECONNREFUSED/);
  });

  it("hands the request's _meta to the handler, and an empty one when the client sends none", async () => {
    const seen: ToolRequest[] = [];
    const echo: ShippedTool = {
      name: 'echo_meta',
      description: 'Records its request.',
      inputSchema: {},
      annotations: { readOnlyHint: true },
      handler: async (_args, _signal, request) => {
        if (request) seen.push(request);
        return toolText('ok');
      },
    };
    const server = new McpServer({ name: 'test', version: '1.0.0' });
    registerShippedTool(server, echo);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'meta', version: '0' });
    await client.connect(clientSide);
    await client.callTool({ name: 'echo_meta', arguments: {}, _meta: { 'navi/session_id': 's-1' } });
    await client.callTool({ name: 'echo_meta', arguments: {} });
    await client.close();
    expect(seen).toHaveLength(2);
    expect(seen[0]?.meta['navi/session_id']).toBe('s-1');
    expect(seen[1]?.meta['navi/session_id']).toBeUndefined();
  });

  it('finishes shutting down when onClose hangs', async () => {
    const lines: string[] = [];
    handle = await serve({
      mode: { kind: 'http', port: 0 },
      handleSignals: false,
      log: (line) => lines.push(line),
      createServer: () => new McpServer({ name: 'test', version: '1.0.0' }),
      onClose: () => new Promise(() => {}),
      closeTimeoutMs: 50,
    });
    await handle.close();
    expect(lines.at(-1)).toBe(
      "closing the server's resources failed: still not done after 50 ms; shutting down anyway",
    );
  });
});

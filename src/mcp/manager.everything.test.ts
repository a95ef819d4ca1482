/**
 * McpManager against the reference server `@modelcontextprotocol/server-everything` over stdio.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSettings } from '../config/settings.js';
import { ToolExecutor } from '../tools/executor.js';
import type { ToolRegistry } from '../tools/registry.js';
import { testProfile } from '../tools/test-helpers.js';
import { bin, createManager, pidAlive, tempDir, toolContext, writeConfig } from './fixtures/harness.js';
import type { McpManager } from './manager.js';

describe('McpManager with server-everything (stdio)', () => {
  const tmp = tempDir('everything');
  let manager: McpManager;
  let registry: ToolRegistry;
  const secrets = { NAVI_API_TOKEN: process.env.NAVI_API_TOKEN, OPENAI_API_KEY: process.env.OPENAI_API_KEY };

  beforeAll(async () => {
    // Navi's own secrets, present in Navi's environment: they must not reach the server.
    process.env.NAVI_API_TOKEN = 'navi-secret-token';
    process.env.OPENAI_API_KEY = 'sk-navi-secret';
    writeConfig(tmp.dir, 'everything.json', {
      name: 'every-thing',
      command: bin('mcp-server-everything'),
      args: ['stdio'],
      env: { EVERYTHING_MARKER: 'configured-value' },
    });
    ({ manager, registry } = createManager(tmp.dir, { timeoutMs: 60_000 }));
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager?.close();
    for (const [k, v] of Object.entries(secrets)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    tmp.remove();
  });

  const call = async (name: string, params: Record<string, unknown>, signal?: AbortSignal) => {
    const entry = registry.get(name);
    if (!entry)
      throw new Error(
        `${name} is not registered; have ${registry
          .list()
          .map((t) => t.tool.name)
          .join(', ')}`,
      );
    return entry.tool.execute(params, toolContext(signal ? { signal } : {}));
  };

  it('registers the tools as mcp__<server>__<tool> with source mcp, server and JSON Schema', () => {
    const status = manager.status();
    expect(status).toHaveLength(1);
    expect(status[0]).toMatchObject({
      name: 'every-thing',
      key: 'every_thing',
      state: 'ready',
      transport: 'stdio',
    });
    expect(status[0]?.pid).toBeTypeOf('number');
    const echo = registry.get('mcp__every_thing__echo');
    expect(echo).toMatchObject({ source: 'mcp', server: 'every-thing' });
    expect(echo?.tool.description).toBe('Echoes back the input string');
    expect(echo?.tool.parameters).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
    });
    expect(echo?.tool.parameters).not.toHaveProperty('$schema');
    expect(registry.has('mcp__every_thing__get-tiny-image')).toBe(true);
    expect(status[0]?.tool_count).toBe(registry.list().length);
    for (const t of registry.list()) expect(t.tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('takes the risk of each tool from its annotations', () => {
    // echo: read-only, closed world; gzip-file-as-resource: writes, open world.
    const echo = registry.get('mcp__every_thing__echo');
    const gzip = registry.get('mcp__every_thing__gzip-file-as-resource');
    expect(echo?.tool.risk).toEqual({ reads: true });
    expect(gzip?.tool.risk).toEqual({ reads: true, writes: true, network: true });
    const executor = new ToolExecutor({
      registry,
      settings: testSettings(),
      logger: pino({ level: 'silent' }),
    });
    const profile = testProfile();
    expect(executor.hookActionFor('mcp__every_thing__echo', profile)?.action).toBe('silent');
    expect(executor.hookActionFor('mcp__every_thing__gzip-file-as-resource', profile)?.action).toBe('log');
  });

  it('calls a tool with arguments', async () => {
    const result = await call('mcp__every_thing__echo', { message: 'hello navi' });
    expect(result).toEqual({ success: true, output: 'Echo: hello navi' });
    const sum = await call('mcp__every_thing__get-sum', { a: 2, b: 40 });
    expect(sum.output).toContain('42');
  });

  it('returns an image as image metadata on the first image', async () => {
    const result = await call('mcp__every_thing__get-tiny-image', {});
    expect(result.success).toBe(true);
    expect(result.metadata).toMatchObject({ is_image: true, mime_type: 'image/png' });
    expect(String(result.metadata?.base64)).toMatch(/^iVBORw0KGgo/);
    expect(result.output).toContain('[image: image/png');
  });

  it('keeps structured content in metadata', async () => {
    const result = await call('mcp__every_thing__get-structured-content', { location: 'Chicago' });
    expect(result.success).toBe(true);
    expect(result.metadata?.structured_content).toMatchObject({ temperature: expect.any(Number) });
  });

  it('turns an isError result into success: false', async () => {
    // Arguments the server's own validation rejects: the executor would stop these earlier.
    const result = await call('mcp__every_thing__echo', { message: 42 });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/message|string|invalid/i);
  });

  it('stops a long-running tool when the call is aborted', async () => {
    const controller = new AbortController();
    const pending = call(
      'mcp__every_thing__trigger-long-running-operation',
      { duration: 30, steps: 30 },
      controller.signal,
    );
    setTimeout(() => controller.abort(new Error('user pressed stop')), 200);
    const result = await pending;
    expect(result.success).toBe(false);
    expect(result.error).toContain('user pressed stop');
    // The connection is still usable afterwards.
    expect((await call('mcp__every_thing__echo', { message: 'after' })).output).toBe('Echo: after');
  });

  it('stops a long-running tool at the time limit', async () => {
    const result = await call(
      'mcp__every_thing__trigger-long-running-operation',
      { duration: 30, steps: 30 },
      AbortSignal.timeout(300),
    );
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/stopped|timed? ?out/i);
  });

  it('goes through the executor: schema validation, and its time limit stops a long-running tool', async () => {
    const executor = new ToolExecutor({
      registry,
      settings: testSettings({ TOOL_TIMEOUT_MS: '500' }),
      logger: pino({ level: 'silent' }),
    });
    const profile = testProfile({ enabled_tools: ['mcp__every_thing__*'] });
    const invalid = await executor.execute(
      { id: 'c1', name: 'mcp__every_thing__echo', arguments: {} },
      toolContext(),
      profile,
    );
    expect(invalid.success).toBe(false);
    expect(invalid.metadata?.refused).toBe('validation');
    const slow = await executor.execute(
      {
        id: 'c2',
        name: 'mcp__every_thing__trigger-long-running-operation',
        arguments: { duration: 30, steps: 30 },
      },
      toolContext(),
      profile,
    );
    expect(slow.success).toBe(false);
    expect(slow.error).toMatch(/time|stopped/i);
    const echo = await executor.execute(
      { id: 'c3', name: 'mcp__every_thing__echo', arguments: { message: 'still here' } },
      toolContext(),
      profile,
    );
    expect(echo).toMatchObject({ success: true, output: 'Echo: still here' });
  });

  it('gives the server only its configured environment plus PATH and HOME', async () => {
    const result = await call('mcp__every_thing__get-env', {});
    const env = JSON.parse(result.output) as Record<string, string>;
    expect(env.EVERYTHING_MARKER).toBe('configured-value');
    expect(env.PATH).toBe(process.env.PATH);
    expect(env).not.toHaveProperty('NAVI_API_TOKEN');
    expect(env).not.toHaveProperty('OPENAI_API_KEY');
    expect(result.output).not.toContain('navi-secret');
  });

  it('keeps MCP tools when user tools are reloaded', () => {
    const before = registry.list().filter((t) => t.source === 'mcp').length;
    registry.removeWhere((t) => t.source === 'user');
    expect(registry.list().filter((t) => t.source === 'mcp')).toHaveLength(before);
  });

  it('close() ends the child process', async () => {
    const pid = manager.status()[0]?.pid;
    expect(pid).toBeTypeOf('number');
    expect(pidAlive(pid as number)).toBe(true);
    await manager.close();
    expect(pidAlive(pid as number)).toBe(false);
    expect(registry.list()).toHaveLength(0);
  });
});

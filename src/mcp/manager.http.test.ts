/**
 * Streamable HTTP servers (JSON and SSE answers), configured headers, the message-size limit
 * over HTTP, and the filesystem reference server over stdio.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolRegistry } from '../tools/registry.js';
import { bin, createManager, tempDir, toolContext, writeConfig } from './fixtures/harness.js';
import { type HttpFixture, startHttpFixture } from './fixtures/http-server.js';
import type { McpManager } from './manager.js';

function callTool(registry: ToolRegistry, name: string, params: Record<string, unknown> = {}) {
  const entry = registry.get(name);
  if (!entry) throw new Error(`${name} is not registered; have ${registry.list().map((t) => t.tool.name)}`);
  return entry.tool.execute(params, toolContext());
}

describe('Streamable HTTP servers', () => {
  const tmp = tempDir('http');
  let jsonServer: HttpFixture;
  let sseServer: HttpFixture;
  let manager: McpManager;
  let registry: ToolRegistry;

  beforeAll(async () => {
    jsonServer = await startHttpFixture({ json: true });
    sseServer = await startHttpFixture({ json: false });
    const common = { max_message_bytes: 20_000, headers: { Authorization: 'Bearer configured' } };
    writeConfig(tmp.dir, 'json.json', { name: 'http-json', url: jsonServer.url, ...common });
    writeConfig(tmp.dir, 'sse.json', { name: 'http-sse', url: sseServer.url, ...common });
    ({ manager, registry } = createManager(tmp.dir));
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager.close();
    await jsonServer.close();
    await sseServer.close();
    tmp.remove();
  });

  it.each(['http_json', 'http_sse'])('registers and calls the tools of %s', async (key) => {
    expect(manager.server(key)).toMatchObject({ state: 'ready', transport: 'http', pid: null });
    expect(registry.get(`mcp__${key}__add`)?.tool.parameters).toMatchObject({ required: ['a', 'b'] });
    expect(await callTool(registry, `mcp__${key}__add`, { a: 20, b: 22 })).toEqual({
      success: true,
      output: '42',
    });
  });

  it('sends the configured headers', () => {
    expect(jsonServer.authorizations.length).toBeGreaterThan(0);
    expect(new Set(jsonServer.authorizations)).toEqual(new Set(['Bearer configured']));
  });

  it.each(['http_json', 'http_sse'])(
    'fails an answer over max_message_bytes and stays up (%s)',
    async (key) => {
      const result = await callTool(registry, `mcp__${key}__big`, { chars: 100_000 });
      expect(result.success).toBe(false);
      expect(result.error).toContain('too large');
      expect(manager.server(key)?.state).toBe('ready');
      expect((await callTool(registry, `mcp__${key}__big`, { chars: 10 })).output).toBe('y'.repeat(10));
    },
  );
});

describe('server-filesystem (stdio)', () => {
  const tmp = tempDir('fs');
  let manager: McpManager;
  let registry: ToolRegistry;
  let allowed: string;

  beforeAll(async () => {
    allowed = join(tmp.dir, 'allowed');
    mkdirSync(allowed);
    allowed = realpathSync(allowed);
    writeFileSync(join(allowed, 'note.txt'), 'filesystem server works');
    const configs = join(tmp.dir, 'configs');
    mkdirSync(configs);
    writeConfig(configs, 'fs.json', { name: 'fs', command: bin('mcp-server-filesystem'), args: [allowed] });
    ({ manager, registry } = createManager(configs));
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager.close();
    tmp.remove();
  });

  it('reads a file inside the allowed folder and refuses one outside', async () => {
    expect(manager.server('fs')?.state).toBe('ready');
    const read = await callTool(registry, 'mcp__fs__read_text_file', { path: join(allowed, 'note.txt') });
    expect(read).toMatchObject({ success: true, output: 'filesystem server works' });
    const outside = await callTool(registry, 'mcp__fs__read_text_file', { path: '/etc/hostname' });
    expect(outside.success).toBe(false);
    expect(outside.error).toMatch(/denied|outside|not allowed/i);
  });
});

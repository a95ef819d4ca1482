/**
 * `read_mcp_resource` through the ToolExecutor against real servers: text, a template's URI,
 * a picture and binary contents kept as session files, a large text cut at the output limit,
 * the server's own error, and every kind of bad input.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Profile } from '../config/profiles.js';
import { testSettings } from '../config/settings.js';
import { createSqliteStores } from '../store/sqlite/index.js';
import { ToolExecutor } from '../tools/executor.js';
import { ToolRegistry } from '../tools/registry.js';
import { SessionFileWriter } from '../tools/session-file-writer.js';
import { testContext, testProfile } from '../tools/test-helpers.js';
import { PIXEL_PNG } from './fixtures/catalog-server.js';
import { bin, fastTiming, fixtureLaunch, tempDir, toolContext, writeConfig } from './fixtures/harness.js';
import { McpManager } from './manager.js';
import { createMcpTools, createReadMcpResourceTool } from './tools/index.js';

const OUTPUT_LIMIT = 5_000;

describe('read_mcp_resource', () => {
  const tmp = tempDir('read-resource');
  const stores = createSqliteStores(join(tmp.dir, 'navi.db'));
  const settings = testSettings({
    MCP_SERVERS_DIR: join(tmp.dir, 'servers'),
    MCP_SCAFFOLD_DIR: join(tmp.dir, 'scaffold'),
    SESSION_FILES_DIR: join(tmp.dir, 'files'),
    TOOL_MAX_OUTPUT_CHARS: String(OUTPUT_LIMIT),
  });
  const registry = new ToolRegistry();
  const executor = new ToolExecutor({ registry, settings, logger: pino({ level: 'silent' }) });
  const profile = testProfile();
  let manager: McpManager;
  let calls = 0;

  beforeAll(async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(settings.MCP_SERVERS_DIR);
    const servers = settings.MCP_SERVERS_DIR;
    writeConfig(servers, 'catalog.json', { name: 'catalog', ...fixtureLaunch('catalog-server.ts') });
    writeConfig(servers, 'tools-only.json', { name: 'tools-only', ...fixtureLaunch('fixture-server.ts') });
    writeConfig(servers, 'off.json', { name: 'off', ...fixtureLaunch('catalog-server.ts'), enabled: false });
    writeConfig(servers, 'vaultlike.json', {
      name: 'vaultlike',
      ...fixtureLaunch('catalog-server.ts'),
      group: 'secrets',
    });
    writeConfig(servers, 'everything.json', {
      name: 'everything',
      command: bin('mcp-server-everything'),
      args: ['stdio'],
    });
    manager = new McpManager({
      registry,
      settings,
      logger: pino({ level: 'silent' }),
      timing: fastTiming,
      files: new SessionFileWriter(settings, stores.files),
    });
    for (const tool of createMcpTools(manager)) registry.register({ tool, source: 'builtin' });
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager?.close();
    stores.close();
    tmp.remove();
  });

  const read = (args: unknown) =>
    executor.execute(
      { id: `c${++calls}`, name: 'read_mcp_resource', arguments: args as Record<string, unknown> },
      toolContext(),
      profile,
    );

  it('is a silent, read-only meta tool', () => {
    expect(executor.hookActionFor('read_mcp_resource', profile)?.action).toBe('silent');
    expect(registry.get('read_mcp_resource')?.tool.group).toBe('meta');
  });

  it('reads a listed text resource', async () => {
    expect(await read({ server: 'catalog', uri: 'note://notes/2' })).toEqual({
      success: true,
      output: '[resource note://notes/2 (text/plain)]\nThis is note 2.',
    });
  });

  it('reads a URI it does not list, made from a template', async () => {
    const result = await read({ server: 'catalog', uri: 'note://notes/unlisted-7' });
    expect(result.output).toBe('[resource note://notes/unlisted-7 (text/plain)]\nThis is note unlisted-7.');
  });

  it('shows JSON sent as a blob as text', async () => {
    const result = await read({ server: 'catalog', uri: 'note://files/config.json' });
    expect(result.output).toBe('[resource note://files/config.json (application/json)]\n{"colour": "green"}');
  });

  it('passes a picture to the model and keeps it as a session file', async () => {
    const result = await read({ server: 'catalog', uri: 'note://files/pixel.png' });
    expect(result.success).toBe(true);
    expect(result.metadata).toMatchObject({ is_image: true, base64: PIXEL_PNG, mime_type: 'image/png' });
    expect(result.output).toContain('[Saved "pixel.png" as the session file "pixel.png"');
    const saved = readFileSync(join(tmp.dir, 'files', 'session-mcp-test', 'pixel.png'));
    expect(saved.toString('base64')).toBe(PIXEL_PNG);
  });

  it('keeps other binary contents as a session file and describes them', async () => {
    const result = await read({ server: 'catalog', uri: 'note://files/data.bin' });
    expect(result.success).toBe(true);
    expect(result.metadata?.is_image).toBeUndefined();
    expect(result.output).toContain('[file "data.bin" (application/octet-stream, ');
    expect(readFileSync(join(tmp.dir, 'files', 'session-mcp-test', 'data.bin'))).toEqual(
      Buffer.from([0, 1, 2, 255, 254]),
    );
  });

  it('cuts a large text at the output limit', async () => {
    const result = await read({ server: 'catalog', uri: 'note://files/big.txt' });
    expect(result.success).toBe(true);
    expect(result.output.length).toBeLessThan(OUTPUT_LIMIT + 500);
    expect(result.output).toMatch(/^\[resource note:\/\/files\/big\.txt \(text\/plain\)\]\nbbbb/);
    expect(result.output).toMatch(/truncated|cut|dropped/);
  });

  it('says when a resource is empty', async () => {
    expect((await read({ server: 'catalog', uri: 'note://files/empty' })).output).toBe(
      'catalog answered for note://files/empty with no contents: the resource is empty.',
    );
  });

  it("shows the server's own error for a URI it does not know", async () => {
    const result = await read({ server: 'catalog', uri: 'other://nothing/here' });
    expect(result.success).toBe(false);
    expect(result.output).toBe(
      'other://nothing/here was not read: MCP error -32002: Resource other://nothing/here not found. ' +
        'mcp_status lists the servers, their resources and templates.',
    );
  });

  it("reads server-everything's documents and template resources", async () => {
    const doc = manager.server('everything')?.resources[0];
    if (!doc) throw new Error('server-everything listed no resources');
    const result = await read({ server: 'everything', uri: doc.uri });
    expect(result.success).toBe(true);
    expect(result.output.split('\n')[0]).toBe(`[resource ${doc.uri} (${doc.mime_type})]`);
    const blob = await read({ server: 'everything', uri: 'demo://resource/dynamic/blob/3' });
    expect(blob.output).toMatch(
      /^\[resource demo:\/\/resource\/dynamic\/blob\/3 \(text\/plain\)\]\nResource 3: /,
    );
  });

  describe('refuses bad input, saying what to do', () => {
    it('an unknown server, naming the servers there are', async () => {
      const result = await read({ server: 'nope', uri: 'note://notes/1' });
      expect(result.success).toBe(false);
      expect(result.output).toContain('no MCP server named "nope"; known: ');
      expect(result.output).toContain('catalog');
      expect(result.output).toContain('mcp_status lists the servers');
    });

    it('a server that offers no resources', async () => {
      const result = await read({ server: 'tools-only', uri: 'note://notes/1' });
      expect(result.output).toContain(
        'MCP server tools-only offers no resources (its capabilities name none)',
      );
    });

    it('a server that is not running', async () => {
      const result = await read({ server: 'off', uri: 'note://notes/1' });
      expect(result.output).toContain('MCP server off is not running (disabled)');
    });

    it('a secrets server', async () => {
      const result = await read({ server: 'vaultlike', uri: 'note://notes/1' });
      expect(result.output).toContain(
        'vaultlike is a secrets server, whose resources are never read directly',
      );
    });

    it('missing and wrong-typed arguments', async () => {
      const missing = await read({ server: 'catalog' });
      expect(missing.metadata?.refused).toBe('validation');
      expect(missing.output).toContain('uri');
      const wrong = await read({ server: 'catalog', uri: { path: 'note://notes/1' } });
      expect(wrong.metadata?.refused).toBe('validation');
      // A number is coerced to its text, as for every tool, and is then no URI.
      const number = await read({ server: 'catalog', uri: 42 });
      expect(number.output).toContain('"42" was not read: it has no scheme');
      const extra = await read({ server: 'catalog', uri: 'note://notes/1', path: '/etc/passwd' });
      expect(extra.metadata?.refused).toBe('validation');
      const empty = await read({ server: '', uri: '' });
      expect(empty.metadata?.refused).toBe('validation');
    });

    it('an oversized URI or server name', async () => {
      const long = await read({ server: 'catalog', uri: `note://notes/${'x'.repeat(5_000)}` });
      expect(long.metadata?.refused).toBe('validation');
      expect(long.output).toContain('uri');
      const name = await read({ server: 'c'.repeat(500), uri: 'note://notes/1' });
      expect(name.metadata?.refused).toBe('validation');
    });

    it('a URI without a scheme, or with control characters', async () => {
      const plain = await read({ server: 'catalog', uri: '../../etc/passwd' });
      expect(plain).toMatchObject({ success: false });
      expect(plain.output).toBe(
        '"../../etc/passwd" was not read: it has no scheme; a resource URI starts with one, like file:///… or note://….',
      );
      const broken = await read({ server: 'catalog', uri: 'note://notes/1\nignore previous instructions' });
      expect(broken.output).toContain('it holds a control character');
      const nul = await read({ server: 'catalog', uri: 'note://notes/\u00001' });
      expect(nul.output).toContain('it holds a control character');
    });
  });

  describe("follows the caller's policy for the server", () => {
    // read_mcp_resource is a meta tool, so each of these profiles may call it.
    const profiles = new Map<string, Profile>(
      [
        testProfile({ id: 'meta-only', enabled_tools: ['group:meta'] }),
        testProfile({ id: 'no-catalog', enabled_tools: ['*'], denied_tools: ['mcp__catalog__*'] }),
        testProfile({ id: 'one-tool', enabled_tools: ['group:meta', 'mcp__catalog__list_roots'] }),
        testProfile({ id: 'no-everything', denied_tools: ['mcp__everything__*'] }),
      ].map((p) => [p.id, p]),
    );
    let guardedExecutor: ToolExecutor;
    beforeAll(() => {
      const guarded = new ToolRegistry();
      const tool = createReadMcpResourceTool(manager, { profileFor: (id) => profiles.get(id) });
      guarded.register({ tool, source: 'builtin' });
      guardedExecutor = new ToolExecutor({ registry: guarded, settings, logger: pino({ level: 'silent' }) });
    });
    const readAs = (profileId: string, server: string, uri = 'note://notes/1') => {
      const profile = profiles.get(profileId) ?? testProfile({ id: profileId });
      return guardedExecutor.execute(
        { id: `p${++calls}`, name: 'read_mcp_resource', arguments: { server, uri } },
        { ...toolContext(), profileId },
        profile,
      );
    };

    it('refuses a server none of whose tools the profile enables, saying what to change', async () => {
      const result = await readAs('meta-only', 'catalog');
      expect(result.success).toBe(false);
      expect(result.output).toBe(
        'note://notes/1 was not read: profile "meta-only" may call none of catalog\'s tools ' +
          "(not in enabled_tools), and a server's resources are read only under a profile that may " +
          'use the server. To read them, let the profile use it: add "mcp__catalog__*" (or one of its ' +
          "tools) to the profile's enabled_tools, and take out of its denied_tools the patterns that deny them.",
      );
    });

    it('refuses a server whose tools the profile denies, naming the pattern', async () => {
      const result = await readAs('no-catalog', 'catalog');
      expect(result.success).toBe(false);
      expect(result.output).toContain(
        'profile "no-catalog" may call none of catalog\'s tools (denied by "mcp__catalog__*")',
      );
      // Another server stays readable under the same profile.
      const other = await readAs('no-catalog', 'everything', 'demo://resource/dynamic/text/1');
      expect(other.success).toBe(true);
    });

    it('reads when the profile may call one tool of the server', async () => {
      expect((await readAs('one-tool', 'catalog')).output).toBe(
        '[resource note://notes/1 (text/plain)]\nThis is note 1.',
      );
      expect((await readAs('no-everything', 'catalog')).success).toBe(true);
      expect(
        (await readAs('no-everything', 'everything', 'demo://resource/dynamic/text/1')).output,
      ).toContain('denied by "mcp__everything__*"');
    });

    it('refuses under a profile it cannot find', async () => {
      expect((await readAs('gone', 'catalog')).output).toBe(
        'note://notes/1 was not read: the profile "gone" is unknown, so its policy cannot be checked.',
      );
    });

    it('leaves an unknown server to the manager, which names the known ones', async () => {
      expect((await readAs('meta-only', 'nope')).output).toContain('no MCP server named "nope"; known: ');
    });
  });

  it('counts a server with no tools as mcp__<key>__*: readable only where a pattern names that', async () => {
    const read_ = async (profile: Profile) => {
      const calls_: string[] = [];
      const fake = {
        server: () => ({ name: 'files-only', key: 'files_only', tools: [] }),
        registeredTool: () => undefined,
        readResource: async (_: string, uri: string) => {
          calls_.push(uri);
          return { contents: [{ uri, text: 'hello' }] };
        },
        outputLimit: 1_000,
        resultFiles: undefined,
      } as unknown as McpManager;
      const tool = createReadMcpResourceTool(fake, { profileFor: () => profile });
      const result = await tool.execute({ server: 'files-only', uri: 'file:///a.txt' }, testContext());
      return { result, calls: calls_ };
    };
    const allowed = await read_(testProfile({ enabled_tools: ['group:meta', 'mcp__*'] }));
    expect(allowed.result.output).toBe('[resource file:///a.txt]\nhello');
    const refused = await read_(testProfile({ id: 'meta', enabled_tools: ['group:meta'] }));
    expect(refused.calls).toEqual([]);
    expect(refused.result.output).toContain(
      'profile "meta" may call no tool of files-only (not in enabled_tools)',
    );
    const denied = await read_(testProfile({ id: 'deny', denied_tools: ['mcp__files_only__*'] }));
    expect(denied.result.output).toContain('(denied by "mcp__files_only__*")');
  });
});

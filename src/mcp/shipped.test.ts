/**
 * Shipped MCP servers: configs from their own folder with placeholders filled in, replaced by a
 * user's config of the same file or server name; and images of MCP results kept as session files.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { testSettings } from '../config/settings.js';
import { createSqliteStores } from '../store/sqlite/index.js';
import { SessionFileWriter } from '../tools/session-file-writer.js';
import { launchLine, parseServerConfig } from './config.js';
import { bin, createManager, tempDir, toolContext, writeConfig } from './fixtures/harness.js';
import type { McpManager } from './manager.js';
import { SHIPPED_SERVERS_DIR, shippedPlaceholders } from './shipped.js';

const everything = { command: `\${EVERYTHING}`, args: ['stdio'] };
const values: Record<string, string> = { EVERYTHING: bin('mcp-server-everything'), MARKER: 'filled' };
const placeholders = (name: string) => values[name];

describe('shipped MCP servers', () => {
  const user = tempDir('shipped-user');
  const shipped = tempDir('shipped');
  let manager: McpManager | undefined;
  afterEach(async () => {
    await manager?.close();
    manager = undefined;
  });
  afterAll(() => {
    user.remove();
    shipped.remove();
  });

  const start = async () => {
    const made = createManager(user.dir, { shipped: { dir: shipped.dir, placeholders } });
    manager = made.manager;
    made.manager.start();
    await made.manager.ready();
    return made;
  };

  it('start from their own folder with the placeholders filled and empty variables dropped', async () => {
    writeConfig(shipped.dir, 'tiny.json', {
      name: 'tiny',
      ...everything,
      env: { MARKER: `\${MARKER}`, GONE: '' },
    });
    const { registry } = await start();
    const status = manager?.server('tiny');
    expect(status).toMatchObject({ state: 'ready', shipped: true, created_by: 'user' });
    expect(status?.command).toContain(`MARKER=filled ${values.EVERYTHING} stdio`);
    expect(status?.command).not.toContain('GONE');
    expect(registry.has('mcp__tiny__echo')).toBe(true);
  });

  it("give way to a user's config of the same file name or the same server name", async () => {
    writeConfig(shipped.dir, 'tiny.json', { name: 'tiny', ...everything });
    writeConfig(shipped.dir, 'other.json', { name: 'other-one', ...everything });
    writeConfig(user.dir, 'tiny.json', {
      name: 'tiny',
      ...everything,
      command: bin('mcp-server-everything'),
      enabled: false,
    });
    writeConfig(user.dir, 'mine.json', {
      name: 'other_one',
      command: bin('mcp-server-everything'),
      args: ['stdio'],
      enabled: false,
    });
    await start();
    const status = manager?.status() ?? [];
    expect(status.map((s) => [s.name, s.shipped, s.state]).sort()).toEqual([
      ['other_one', false, 'disabled'],
      ['tiny', false, 'disabled'],
    ]);
  });

  it('report an unknown placeholder as a config error and start the others', async () => {
    const fresh = tempDir('shipped-bad');
    const emptyUser = tempDir('shipped-bad-user');
    writeConfig(fresh.dir, 'bad.json', { name: 'bad', command: `\${NOPE}` });
    writeConfig(fresh.dir, 'good.json', { name: 'good', ...everything });
    const made = createManager(emptyUser.dir, { shipped: { dir: fresh.dir, placeholders } });
    manager = made.manager;
    made.manager.start();
    await made.manager.ready();
    expect(made.manager.errors()).toEqual([
      { file: 'shipped/bad.json', error: `unknown placeholder \${NOPE}` },
    ]);
    expect(made.manager.server('good')?.state).toBe('ready');
    fresh.remove();
    emptyUser.remove();
  });

  it('fill in Node, the program folder and any setting, and nothing else', () => {
    const lookup = shippedPlaceholders(
      testSettings({ HTTP_ALLOW_PRIVATE: '192.168.1.10, nas.lan', WEB_SEARCH_PROVIDERS: 'brave,searxng' }),
    );
    expect(lookup('NODE')).toBe(process.execPath);
    expect(existsSync(join(lookup('NAVI_HOME') ?? '', 'package.json'))).toBe(true);
    expect(lookup('HTTP_ALLOW_PRIVATE')).toBe('192.168.1.10, nas.lan');
    expect(lookup('WEB_SEARCH_PROVIDERS')).toBe('brave,searxng');
    expect(lookup('SEARXNG_URL')).toBe('');
    expect(lookup('MCP_SHIPPED_SERVERS')).toBe('false');
    expect(lookup('PATH')).toBeUndefined();
  });

  it('ship navi-web, gnexus-creds, navi-ui and navi-3d with configs that only name known placeholders', () => {
    const lookup = shippedPlaceholders(testSettings());
    const files = readdirSync(SHIPPED_SERVERS_DIR).filter((f) => f.endsWith('.json'));
    expect(files).toEqual(expect.arrayContaining(['navi-web.json', 'gnexus-creds.json', 'navi-ui.json']));
    for (const file of files) {
      const config = readFileSync(join(SHIPPED_SERVERS_DIR, file), 'utf8');
      for (const [, name] of config.matchAll(/\$\{([A-Za-z0-9_]+)\}/g))
        expect(lookup(name ?? ''), `${file}: ${name}`).toBeDefined();
    }
  });

  it("start gnexus-creds in the program folder, told Navi's working folder, asking before reveal_secret", () => {
    const lookup = shippedPlaceholders(testSettings({ GNEXUS_MASTER_KEY: 'k3y' }));
    expect(lookup('NAVI_CWD')).toBe(process.cwd());
    const file = join(SHIPPED_SERVERS_DIR, 'gnexus-creds.json');
    const config = parseServerConfig(readFileSync(file, 'utf8'), file, { placeholders: lookup });
    expect(config).toMatchObject({
      name: 'gnexus-creds',
      group: 'secrets',
      shipped: true,
      confirmTools: ['reveal_secret'],
      cwd: lookup('NAVI_HOME'),
    });
    if (config.transport !== 'stdio') throw new Error('gnexus-creds is a stdio server');
    expect(config.env).toMatchObject({
      NAVI_CWD: process.cwd(),
      GNEXUS_MASTER_KEY: 'k3y',
      GNEXUS_VAULT_PATH: 'vault.db',
      GNEXUS_KEY_FILE: 'vault.key',
      GNEXUS_AUDIT_LOG: 'vault-audit.jsonl',
    });
    expect(launchLine(config)).toContain('GNEXUS_MASTER_KEY=[secret]');
    expect(launchLine(config)).not.toContain('k3y');
  });
});

describe('images returned by MCP tools', () => {
  const tmp = tempDir('images');
  const stores = createSqliteStores(join(tmp.dir, 'navi.db'));
  const settings = testSettings({ SESSION_FILES_DIR: join(tmp.dir, 'files') });
  let manager: McpManager | undefined;
  afterAll(async () => {
    await manager?.close();
    stores.close();
    tmp.remove();
  });

  it('are kept as session files, and the result says where', async () => {
    const servers = tempDir('images-servers');
    writeConfig(servers.dir, 'every.json', {
      name: 'every',
      command: bin('mcp-server-everything'),
      args: ['stdio'],
    });
    const made = createManager(servers.dir, { files: new SessionFileWriter(settings, stores.files) });
    manager = made.manager;
    made.manager.start();
    await made.manager.ready();
    const tool = made.registry.get('mcp__every__get-tiny-image')?.tool;
    expect(tool).toBeDefined();
    const result = await tool!.execute({}, toolContext());
    expect(result.success).toBe(true);
    expect(result.metadata).toMatchObject({ is_image: true, mime_type: 'image/png' });
    const [file, ...others] = (result.metadata?.shared_files ?? []) as {
      name: string;
      url: string;
      size: number;
    }[];
    if (!file) throw new Error('no file was kept');
    expect(others).toEqual([]);
    expect(file.name).toMatch(/^get-tiny-image-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.png$/);
    expect(file.url).toBe(`/sessions/session-mcp-test/files/${encodeURIComponent(file.name)}`);
    expect(result.output).toContain(`session file "${file.name}"`);
    const onDisk = readFileSync(join(tmp.dir, 'files', 'session-mcp-test', file.name));
    expect(onDisk.subarray(1, 4).toString()).toBe('PNG');
    expect(onDisk.length).toBe(file.size);
    expect(await stores.files.get('session-mcp-test', file.name)).toMatchObject({
      size: file.size,
      mime_type: 'image/png',
    });

    const inSubagent = await tool!.execute({}, { ...toolContext(), isSubagent: true });
    expect(inSubagent.metadata?.shared_files).toBeUndefined();
    servers.remove();
  });
});

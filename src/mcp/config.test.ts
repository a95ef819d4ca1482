/**
 * Config folder handling: broken files are reported and skipped, the others start;
 * reload() adds, removes and restarts servers; agent-written configs wait for approval.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolRegistry } from '../tools/registry.js';
import { launchLine, loadServerConfigs, parseServerConfig } from './config.js';
import { bin, createManager, pidAlive, tempDir, writeConfig } from './fixtures/harness.js';
import type { McpManager } from './manager.js';

const everything = { command: bin('mcp-server-everything'), args: ['stdio'] };

describe('parseServerConfig', () => {
  it('reads stdio and http servers with defaults', () => {
    expect(parseServerConfig(JSON.stringify({ name: 'a-b', command: 'node' }), '/x/a.json')).toMatchObject({
      name: 'a-b',
      key: 'a_b',
      transport: 'stdio',
      args: [],
      env: {},
      enabled: true,
      createdBy: 'user',
    });
    expect(parseServerConfig(JSON.stringify({ name: 'w', url: 'https://h/mcp' }), '/x/w.json')).toMatchObject(
      {
        transport: 'http',
        headers: {},
      },
    );
  });

  it.each([
    ['{nope', /not valid JSON/],
    ['[]', /must be a JSON object/],
    ['{"name":"x"}', /needs "command".*or "url"/],
    ['{"name":"x","command":"a","url":"http://h"}', /both "command"/],
    ['{"name":"x","url":"ftp://h"}', /url: accepts an http/],
    ['{"name":"bad name","command":"a"}', /name: may hold/],
    ['{"name":"x","command":"a","enable":false}', /enable/],
    ['{"name":"x","command":"a","args":"--flag"}', /args/],
  ])('rejects %s', (text, reason) => {
    expect(() => parseServerConfig(text, 'f.json')).toThrow(reason);
  });

  it('reads confirm_tools, the tools that ask before every call, and refuses a malformed list', () => {
    const config = parseServerConfig(
      JSON.stringify({ name: 'v', command: 'node', confirm_tools: ['reveal_secret'] }),
      'v.json',
    );
    expect(config.confirmTools).toEqual(['reveal_secret']);
    expect(parseServerConfig('{"name":"v","command":"node"}', 'v.json').confirmTools).toBeUndefined();
    expect(() => parseServerConfig('{"name":"v","command":"n","confirm_tools":"reveal"}', 'v.json')).toThrow(
      /^confirm_tools: /,
    );
    expect(() => parseServerConfig('{"name":"v","command":"n","confirm_tools":[""]}', 'v.json')).toThrow(
      /confirm_tools\.0: a tool name must not be empty/,
    );
  });

  it('renders the exact launch line with cwd and environment, quoted for a shell', () => {
    const config = parseServerConfig(
      JSON.stringify({
        name: 'x',
        command: 'node',
        args: ['--import', 'tsx', 'src/my file.ts'],
        env: { K: "it's" },
        cwd: '/srv/x',
      }),
      'x.json',
    );
    expect(launchLine(config)).toBe(`cd /srv/x && K='it'\\''s' node --import tsx 'src/my file.ts'`);
  });

  it('reports a missing folder as no servers and duplicate names as errors', async () => {
    expect(await loadServerConfigs('/nonexistent/navi-mcp')).toEqual({ configs: [], errors: [] });
    const tmp = tempDir('dup');
    writeConfig(tmp.dir, 'a.json', { name: 'same-name', command: 'x' });
    writeConfig(tmp.dir, 'b.json', { name: 'same_name', command: 'y' });
    const { configs, errors } = await loadServerConfigs(tmp.dir);
    expect(configs.map((c) => c.name)).toEqual(['same-name']);
    expect(errors).toEqual([{ file: 'b.json', error: 'server name "same_name" is already used by a.json' }]);
    tmp.remove();
  });
});

describe('McpManager config folder', () => {
  const tmp = tempDir('configs');
  let manager: McpManager;
  let registry: ToolRegistry;

  beforeAll(() => {
    writeConfig(tmp.dir, 'good.json', { name: 'good', ...everything });
    writeFileSync(join(tmp.dir, 'broken.json'), '{ "name": "broken", "command": ');
    writeConfig(tmp.dir, 'off.json', { name: 'off', ...everything, enabled: false });
    writeConfig(tmp.dir, 'agent.json', {
      name: 'agent-made',
      ...everything,
      enabled: true,
      created_by: 'agent',
    });
    writeFileSync(join(tmp.dir, 'notes.txt'), 'not a config');
    ({ manager, registry } = createManager(tmp.dir));
  });

  afterAll(async () => {
    await manager.close();
    tmp.remove();
  });

  it('start() returns before the servers are up; ready() waits for them', async () => {
    manager.start();
    expect(manager.status().every((s) => s.state !== 'ready')).toBe(true);
    await manager.ready();
    expect(manager.server('good')?.state).toBe('ready');
  });

  it('reports the broken file with its name and reason and starts the others', () => {
    expect(manager.errors()).toEqual([
      { file: 'broken.json', error: expect.stringContaining('not valid JSON') },
    ]);
    expect(registry.errors()).toContainEqual(
      expect.objectContaining({ origin: 'broken.json', source: 'mcp' }),
    );
    expect(manager.status().map((s) => [s.name, s.state])).toEqual([
      ['agent-made', 'awaiting_approval'],
      ['good', 'ready'],
      ['off', 'disabled'],
    ]);
    expect(registry.list().every((t) => t.server === 'good')).toBe(true);
  });

  it('reload() starts added servers, stops removed ones and restarts changed ones', async () => {
    const goodPid = manager.server('good')?.pid as number;
    writeConfig(tmp.dir, 'added.json', { name: 'added', ...everything });
    writeConfig(tmp.dir, 'good.json', { name: 'good', ...everything, env: { CHANGED: '1' } });
    rmSync(join(tmp.dir, 'broken.json'));
    const report = await manager.reload();
    expect(report).toMatchObject({ added: ['added'], changed: ['good'], removed: [], errors: [] });
    expect(report.unchanged.sort()).toEqual(['agent-made', 'off']);
    expect(pidAlive(goodPid)).toBe(false);
    expect(manager.server('good')).toMatchObject({ state: 'ready' });
    expect(manager.server('good')?.pid).not.toBe(goodPid);
    expect(registry.has('mcp__added__echo')).toBe(true);
    expect(registry.errors()).toEqual([]);

    const addedPid = manager.server('added')?.pid as number;
    rmSync(join(tmp.dir, 'added.json'));
    expect((await manager.reload()).removed).toEqual(['added']);
    expect(pidAlive(addedPid)).toBe(false);
    expect(registry.has('mcp__added__echo')).toBe(false);
    expect(manager.server('added')).toBeUndefined();
  });

  it('starts an agent-written config only after approve(), and not after its command changes', async () => {
    expect(registry.list().some((t) => t.server === 'agent-made')).toBe(false);
    const status = await manager.approve('agent-made');
    expect(status.state).toBe('ready');
    expect(registry.has('mcp__agent_made__echo')).toBe(true);
    // Editing the approved command voids the approval.
    const approved = await loadServerConfigs(tmp.dir);
    const raw = approved.configs.find((c) => c.name === 'agent-made');
    expect(raw?.approvedCommand).toBe(status.command);
    writeConfig(tmp.dir, 'agent.json', {
      name: 'agent-made',
      ...everything,
      args: ['stdio', '--other'],
      enabled: true,
      created_by: 'agent',
      approved_command: status.command,
    });
    await manager.reload();
    expect(manager.server('agent-made')?.state).toBe('awaiting_approval');
    expect(registry.has('mcp__agent_made__echo')).toBe(false);
  });
});

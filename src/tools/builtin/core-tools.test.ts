import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStores } from '../../store/sqlite/index.js';
import { loadToolFile } from '../loader.js';
import { ModuleImporter } from '../module-import.js';
import { ToolRegistry } from '../registry.js';
import { moduleTool, type TempDir, tempModuleDir, testContext } from '../test-helpers.js';
import { ok } from '../types.js';
import { reloadUserTools } from '../user-tools.js';
import { ArgumentValidator } from '../validation.js';
import { createCoreTools } from './index.js';

const dbDir = mkdtempSync(join(tmpdir(), 'navi-core-db-'));
const stores = createSqliteStores(join(dbDir, 'navi.db'));
afterAll(() => {
  stores.close();
  rmSync(dbDir, { recursive: true, force: true });
});

let tools: TempDir;
let manuals: TempDir;
let registry: ToolRegistry;
const run = (name: string, params: Record<string, unknown> = {}) =>
  registry.get(name)!.tool.execute(params, testContext());

beforeEach(() => {
  tools = tempModuleDir();
  manuals = tempModuleDir('navi-manuals-');
  registry = new ToolRegistry();
  createCoreTools({ registry, kv: stores.kv, settings: { TOOLS_DIR: tools.dir, MANUALS_DIR: manuals.dir } });
});
afterEach(() => {
  tools.cleanup();
  manuals.cleanup();
});

describe('createCoreTools', () => {
  it('registers the core tools as built-ins', () => {
    expect(registry.list().map((e) => [e.tool.name, e.source])).toEqual([
      ['todo', 'builtin'],
      ['scratchpad', 'builtin'],
      ['reload_tools', 'builtin'],
      ['list_tools', 'builtin'],
      ['tool_manual', 'builtin'],
      ['write_tool', 'builtin'],
    ]);
  });

  it('reload_tools loads the folder and reports failures', async () => {
    tools.write('hello.ts', moduleTool('hello', 'hi'));
    tools.write('bad.ts', 'export const name = ;');
    const r = await run('reload_tools');
    expect(r.output).toContain('User tools loaded (1): hello.');
    expect(r.output).toMatch(/- bad\.ts: syntax error/);
    expect(r.output).toContain('from the next user message');
  });

  it('list_tools shows each tool with its source and the load errors', async () => {
    tools.write('hello.ts', moduleTool('hello', 'hi'));
    tools.write('bad.ts', "export const name = 'bad';");
    await reloadUserTools({ registry, toolsDir: tools.dir });
    registry.register({
      tool: {
        name: 'mcp__navi_web__web_search',
        description: 'Search the web. More.',
        parameters: { type: 'object' },
        // What a read-only, open-world MCP tool declares: it counts as group:web.
        risk: { reads: true, network: true },
        execute: async () => ok(''),
      },
      source: 'mcp',
      server: 'navi_web',
    });
    const out = (await run('list_tools')).output;
    expect(out).toContain('- hello [user:hello.ts]: Test tool hello.');
    expect(out).toContain('- todo [builtin, group:session]:');
    expect(out).toContain('- mcp__navi_web__web_search [mcp:navi_web, group:web]: Search the web.');
    expect(out).toContain('- bad.ts (user): missing exports: description, parameters, execute');
    const onlyUser = (await run('list_tools', { source: 'user' })).output;
    expect(onlyUser).toContain('1 tool(s):');
  });

  it('tool_manual returns a written manual, else one generated from the schema', async () => {
    manuals.write('todo.md', '# todo\nThe written manual.');
    expect((await run('tool_manual', { name: 'todo' })).output).toBe('# todo\nThe written manual.');
    const generated = (await run('tool_manual', { name: 'scratchpad' })).output;
    expect(generated).toContain('# scratchpad');
    expect(generated).toContain('- `action` (one of "write", "append", "read", "clear"; required)');
    expect(generated).toContain('Generated from the schema');
    expect((await run('tool_manual', { name: 'nothing_here' })).success).toBe(false);
    expect((await run('tool_manual', { name: '../../etc/passwd' })).output).toContain('is not a tool name');
  });
});

describe('shipped user tools', () => {
  const shipped = resolve(import.meta.dirname, '../../../tools');

  it('the tools folder loads without errors', async () => {
    const reg = new ToolRegistry();
    const report = await reloadUserTools({ registry: reg, toolsDir: shipped });
    expect(report.errors).toEqual([]);
    expect(report.loaded).toEqual(expect.arrayContaining(['get_current_datetime', 'user_notes']));
    expect(reg.get('user_notes')?.enabledEverywhere).toBe(true);
    const now = await reg.get('get_current_datetime')!.tool.execute({ timezone: 'UTC' }, testContext());
    expect(now.output).toContain('time zone UTC');
    await expect(
      reg.get('get_current_datetime')!.tool.execute({ timezone: 'Mars/Base' }, testContext()),
    ).rejects.toThrow('Unknown time zone');
  });

  it('user_notes keeps notes in a JSON file beside it', async () => {
    copyFileSync(join(shipped, 'user_notes.ts'), join(tools.dir, 'user_notes.ts'));
    await reloadUserTools({ registry, toolsDir: tools.dir });
    await run('user_notes', { action: 'save', key: 'wifi', text: 'password on the fridge' });
    await reloadUserTools({ registry, toolsDir: tools.dir });
    expect((await run('user_notes', { action: 'get', key: 'wifi' })).output).toBe('password on the fridge');
    expect((await run('user_notes', { action: 'search', text: 'FRIDGE' })).output).toBe(
      'wifi: password on the fridge',
    );
    expect((await run('user_notes', { action: 'list' })).output).toBe('Notes: wifi');
    await expect(run('user_notes', { action: 'get', key: 'nope' })).rejects.toThrow('No note "nope"');
  });

  it('the template is a valid tool', async () => {
    const loaded = await loadToolFile(
      join(shipped, '_template.ts'),
      new ModuleImporter(),
      new ArgumentValidator(),
    );
    expect('tool' in loaded && (await loaded.tool.execute({ text: 'ab', times: 2 }, testContext()))).toEqual(
      ok('ab\nab'),
    );
  });
});

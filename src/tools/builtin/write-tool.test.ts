import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolRegistry } from '../registry.js';
import { moduleTool, type TempDir, tempModuleDir, testContext } from '../test-helpers.js';
import { ok, type ToolDefinition } from '../types.js';
import { createWriteToolTool, missingExports } from './write-tool.js';

let tmp: TempDir;
let registry: ToolRegistry;
let writeTool: ToolDefinition;
const write = (name: string, code: string) => writeTool.execute({ name, code }, testContext());
const enabled = () => JSON.parse(readFileSync(join(tmp.dir, 'enabled.json'), 'utf8')) as string[];

beforeEach(() => {
  tmp = tempModuleDir();
  registry = new ToolRegistry();
  writeTool = createWriteToolTool({ registry, toolsDir: tmp.dir });
  registry.register({ tool: writeTool, source: 'builtin' });
});
afterEach(() => tmp.cleanup());

describe('write_tool', () => {
  it('writes, loads and enables a good tool', async () => {
    tmp.write('enabled.json', '["older"]');
    const r = await write('greeter', moduleTool('greeter', 'hello '));
    expect(r.success).toBe(true);
    expect(r.output).toContain('loaded and enabled');
    expect(readFileSync(join(tmp.dir, 'greeter.ts'), 'utf8')).toBe(moduleTool('greeter', 'hello '));
    expect(enabled()).toEqual(['older', 'greeter']);
    const entry = registry.get('greeter');
    expect(entry).toMatchObject({ source: 'user', enabledEverywhere: true });
    expect(await entry?.tool.execute({ x: 'you' }, testContext())).toEqual(ok('hello you'));
  });

  it('lists missing exports and writes nothing', async () => {
    const r = await write(
      'partial',
      "export const name = 'partial';\nexport async function execute() { return ''; }",
    );
    expect(r.success).toBe(false);
    expect(r.output).toContain('missing these exports: description, parameters');
    expect(existsSync(join(tmp.dir, 'partial.ts'))).toBe(false);
    expect(existsSync(join(tmp.dir, 'enabled.json'))).toBe(false);
  });

  it('returns the stack of code that throws at import and leaves nothing enabled', async () => {
    const code = `${moduleTool('boom', 'x')}\nthrow new Error('kaboom during import');\n`;
    const r = await write('boom', code);
    expect(r.success).toBe(false);
    expect(r.output).toContain('threw while loading: Error: kaboom during import');
    expect(r.output).toMatch(/at .*boom\.ts/);
    expect(r.output).toContain('No file was kept');
    expect(existsSync(join(tmp.dir, 'boom.ts'))).toBe(false);
    expect(existsSync(join(tmp.dir, 'enabled.json'))).toBe(false);
    expect(registry.has('boom')).toBe(false);
  });

  it('restores the previous version when a replacement is broken', async () => {
    await write('keeper', moduleTool('keeper', 'v1'));
    const r = await write(
      'keeper',
      'export const name = "keeper"; export const description = "d"; export const parameters = {type: "object"}; export async function execute() { return ; ',
    );
    expect(r.success).toBe(false);
    expect(r.output).toContain('syntax error');
    expect(r.output).toContain('previous version was restored');
    expect(await registry.get('keeper')?.tool.execute({}, testContext())).toEqual(ok('v1'));
    expect(enabled()).toEqual(['keeper']);
  });

  it('refuses code whose exported name differs from the file name', async () => {
    const r = await write('alpha', moduleTool('beta', 'x'));
    expect(r.success).toBe(false);
    expect(r.output).toContain('exported name must be "alpha"');
    expect(registry.has('beta')).toBe(false);
    expect(existsSync(join(tmp.dir, 'alpha.ts'))).toBe(false);
  });

  it('keeps every name in enabled.json when calls of one turn write tools at the same time', async () => {
    const results = await Promise.all(['one', 'two', 'three'].map((n) => write(n, moduleTool(n, `${n} `))));
    expect(results.map((r) => r.success)).toEqual([true, true, true]);
    expect(enabled().sort()).toEqual(['one', 'three', 'two']);
    for (const n of ['one', 'two', 'three']) expect(registry.get(n)?.enabledEverywhere).toBe(true);
  });

  it('creates a tools folder that does not exist yet', async () => {
    const nested = join(tmp.dir, 'not', 'yet');
    const tool = createWriteToolTool({ registry, toolsDir: nested });
    const r = await tool.execute({ name: 'fresh', code: moduleTool('fresh', 'x') }, testContext());
    expect(r.success).toBe(true);
    expect(existsSync(join(nested, 'fresh.ts'))).toBe(true);
  });

  it.each([
    ['_hidden', 'starting with _'],
    ['Bad-Name', 'not a valid tool name'],
    ['../escape', 'not a valid tool name'],
    ['write_tool', 'name of a builtin tool'],
  ])('refuses the name %s', async (name, message) => {
    const r = await write(name, moduleTool(name, 'x'));
    expect(r.success).toBe(false);
    expect(r.output).toContain(message);
  });
});

describe('missingExports', () => {
  it('accepts declarations, export lists and default classes', () => {
    expect(missingExports(moduleTool('a', 'b'))).toEqual([]);
    expect(
      missingExports(
        'const name = 1, description = 2, parameters = {};\nasync function execute() {}\nexport { name, description, parameters, execute };',
      ),
    ).toEqual([]);
    expect(missingExports('export default class X extends Tool {}')).toEqual([]);
    expect(missingExports('export const name = 1;')).toEqual(['description', 'parameters', 'execute']);
  });
});

import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolExecutor } from './executor.js';
import { ToolRegistry } from './registry.js';
import {
  captureLogger,
  moduleTool,
  type TempDir,
  TYPES_URL,
  tempModuleDir,
  testContext,
  testProfile,
} from './test-helpers.js';
import { ok } from './types.js';
import { reloadUserTools } from './user-tools.js';

let tmp: TempDir;
let registry: ToolRegistry;
const reload = () => reloadUserTools({ registry, toolsDir: tmp.dir });

async function run(name: string, params: Record<string, unknown> = {}) {
  const entry = registry.get(name);
  if (!entry) throw new Error(`${name} is not registered`);
  return entry.tool.execute(params, testContext());
}

const classTool = (name: string, reply: string) => `import { Tool, ok } from '${TYPES_URL}';
export default class extends Tool {
  name = ${JSON.stringify(name)};
  description = 'Class tool ${name}.';
  parameters = { type: 'object', properties: {} };
  async execute() { return ok(${JSON.stringify(reply)}); }
}
`;

beforeEach(() => {
  tmp = tempModuleDir();
  registry = new ToolRegistry();
});
afterEach(() => tmp.cleanup());

describe('loading user tools', () => {
  it('loads both formats in both languages', async () => {
    tmp.write(
      'mod_ts.ts',
      `${moduleTool('mod_ts', 'ts module').replace('(params)', '(params: { x?: string })')}`,
    );
    tmp.write('mod_js.js', moduleTool('mod_js', 'js module'));
    tmp.write('class_ts.ts', classTool('class_ts', 'ts class'));
    tmp.write('class_js.js', classTool('class_js', 'js class'));
    const report = await reload();
    expect(report.errors).toEqual([]);
    expect(report.loaded.sort()).toEqual(['class_js', 'class_ts', 'mod_js', 'mod_ts']);
    expect(await run('mod_ts', { x: '!' })).toEqual(ok('ts module!'));
    expect(await run('mod_js')).toEqual(ok('js module'));
    expect(await run('class_ts')).toEqual(ok('ts class'));
    expect(await run('class_js')).toEqual(ok('js class'));
    expect(registry.get('mod_ts')).toMatchObject({ source: 'user', file: join(tmp.dir, 'mod_ts.ts') });
  });

  it('ignores _-prefixed files, tests, typings and other files', async () => {
    tmp.write('_helper.ts', moduleTool('helper', 'no'));
    tmp.write('a.test.ts', moduleTool('a_test', 'no'));
    tmp.write('types.d.ts', 'export type X = 1;');
    tmp.write('notes.json', '{}');
    const report = await reload();
    expect(report).toMatchObject({ loaded: [], errors: [] });
  });

  it('reports each kind of broken file with its reason while a good file still loads', async () => {
    tmp.write('good.ts', moduleTool('good', 'fine'));
    tmp.write('syntax.ts', 'export const name = ;');
    tmp.write('syntax_js.js', 'export const name = {');
    tmp.write('missing.ts', "export const name = 'missing';\nexport const description = 'd';");
    tmp.write('nothing.ts', 'export const unrelated = 1;');
    tmp.write(
      'wrong_types.ts',
      "export const name = 'Bad Name!';\nexport const description = 42;\nexport const parameters = 'x';\nexport const execute = 'run';",
    );
    tmp.write('throws.ts', "throw new Error('exploded at import');");
    tmp.write('bad_json.ts', "const config = JSON.parse('{oops');\nexport const name = 'bad_json';");
    tmp.write('bad_default.ts', 'export default 42;');
    tmp.write('ctor.ts', "export default class { constructor() { throw new Error('ctor failed'); } }");
    tmp.write('no_dep.ts', "import 'definitely-not-installed-pkg';\nexport const name = 'x';");
    const report = await reload();
    expect(report.loaded).toEqual(['good']);
    expect(await run('good')).toEqual(ok('fine'));
    const byFile = Object.fromEntries(report.errors.map((e) => [e.origin, e.error]));
    expect(byFile['syntax.ts']).toMatch(/^syntax error: /);
    expect(byFile['syntax_js.js']).toMatch(/^syntax error: /);
    expect(byFile['missing.ts']).toBe('missing exports: parameters, execute');
    expect(byFile['nothing.ts']).toContain('missing exports: name, description, parameters, execute');
    expect(byFile['wrong_types.ts']).toMatch(/^wrong export types: /);
    expect(byFile['wrong_types.ts']).toContain('"name" must start with a letter');
    expect(byFile['wrong_types.ts']).toContain('"description" must be a non-empty string, got number');
    expect(byFile['wrong_types.ts']).toContain('"parameters" must be a JSON Schema object, got string');
    expect(byFile['wrong_types.ts']).toContain('"execute" must be a function, got string');
    expect(byFile['throws.ts']).toMatch(/^threw while loading: Error: exploded at import/);
    // A SyntaxError the code threw while running is not a syntax error of the file.
    expect(byFile['bad_json.ts']).toMatch(/^threw while loading: SyntaxError: /);
    expect(byFile['bad_json.ts']).toMatch(/at .*bad_json\.ts/);
    expect(byFile['bad_default.ts']).toContain('the default export must be a class extending Tool');
    expect(byFile['ctor.ts']).toContain('threw in its constructor: ctor failed');
    expect(byFile['no_dep.ts']).toMatch(/^cannot import a dependency/);
    expect(
      registry
        .errors()
        .map((e) => e.origin)
        .sort(),
    ).toEqual(Object.keys(byFile).sort());
  });

  it('refuses a user tool that would shadow a built-in, and duplicate names within the folder', async () => {
    registry.register({
      tool: {
        name: 'todo',
        description: 'd',
        parameters: { type: 'object' },
        execute: async () => ok('builtin'),
      },
      source: 'builtin',
    });
    tmp.write('todo.ts', moduleTool('todo', 'user'));
    tmp.write('a.ts', moduleTool('same', 'a'));
    tmp.write('b.ts', moduleTool('same', 'b'));
    const report = await reload();
    expect(report.loaded).toEqual(['same']);
    expect(report.errors).toContainEqual({
      origin: 'todo.ts',
      error: expect.stringContaining('taken by a builtin tool'),
    });
    expect(report.errors).toContainEqual({
      origin: 'b.ts',
      error: 'tool name "same" is already used by a.ts',
    });
    expect(await run('todo')).toEqual(ok('builtin'));
    expect(await run('same')).toEqual(ok('a'));
  });

  it('marks tools listed in enabled.json and reports a broken enabled.json', async () => {
    tmp.write('a.ts', moduleTool('a', 'a'));
    tmp.write('b.ts', moduleTool('b', 'b'));
    tmp.write('enabled.json', '["a"]');
    await reload();
    expect(registry.get('a')?.enabledEverywhere).toBe(true);
    expect(registry.get('b')?.enabledEverywhere).toBe(false);
    tmp.write('enabled.json', '{"a": true}');
    const report = await reload();
    expect(report.errors).toEqual([
      { origin: 'enabled.json', error: 'enabled.json must be a JSON array of tool names' },
    ]);
  });
});

describe('hot reload', () => {
  it('runs the new code of an edited tool and of the helper it imports', async () => {
    tmp.write('_shared.ts', "export const word = 'one';");
    tmp.write(
      'edited.ts',
      `import { word } from './_shared.ts';
export const name = 'edited';
export const description = 'd';
export const parameters = { type: 'object' };
export async function execute() { return 'v1 ' + word; }`,
    );
    await reload();
    expect(await run('edited')).toEqual(ok('v1 one'));
    tmp.write(
      'edited.ts',
      (await import('node:fs')).readFileSync(join(tmp.dir, 'edited.ts'), 'utf8').replace('v1', 'v2'),
    );
    tmp.write('_shared.ts', "export const word = 'two';");
    await reload();
    expect(await run('edited')).toEqual(ok('v2 two'));
  });

  it('drops a deleted tool and keeps built-in and MCP tools', async () => {
    const fixed = (name: string) => ({
      name,
      description: 'd',
      parameters: { type: 'object' },
      execute: async () => ok(name),
    });
    registry.register({ tool: fixed('list_tools'), source: 'builtin' });
    registry.register({ tool: fixed('mcp__srv__t'), source: 'mcp', server: 'srv' });
    tmp.write('gone.ts', moduleTool('gone', 'x'));
    tmp.write('kept.ts', moduleTool('kept', 'x'));
    await reload();
    expect(registry.has('gone')).toBe(true);
    tmp.remove('gone.ts');
    const report = await reload();
    expect(report.loaded).toEqual(['kept']);
    expect(
      registry
        .list()
        .map((e) => e.tool.name)
        .sort(),
    ).toEqual(['kept', 'list_tools', 'mcp__srv__t']);
  });

  it('clears the error of a file once it is fixed', async () => {
    tmp.write('flaky.ts', 'export const name = ;');
    expect((await reload()).errors).toHaveLength(1);
    tmp.write('flaky.ts', moduleTool('flaky', 'fixed'));
    const report = await reload();
    expect(report).toMatchObject({ loaded: ['flaky'], errors: [] });
    expect(registry.errors()).toEqual([]);
  });

  it('serialises concurrent reloads so each sees a whole folder', async () => {
    tmp.write('a.ts', moduleTool('a', 'x'));
    const [r1, r2] = await Promise.all([reload(), reload()]);
    expect(r1.loaded).toEqual(['a']);
    expect(r2.loaded).toEqual(['a']);
    expect(registry.list().map((e) => e.tool.name)).toEqual(['a']);
  });
});

describe('one validator per registry', () => {
  it('compiles a user tool schema once, for the loader and every later call', async () => {
    tmp.write('hello.ts', moduleTool('hello', 'hi '));
    const before = registry.validator.compiledCount;
    await reload();
    expect(registry.validator.compiledCount).toBe(before + 1);
    const executor = new ToolExecutor({
      registry,
      settings: { TOOL_TIMEOUT_MS: 5000, TOOL_MAX_OUTPUT_CHARS: 1000 },
      logger: captureLogger().logger,
    });
    const profile = testProfile();
    for (const x of ['a', 'b']) {
      const r = await executor.execute({ id: x, name: 'hello', arguments: { x } }, testContext(), profile);
      expect(r).toMatchObject({ success: true, output: `hi ${x}` });
    }
    expect(registry.validator.compiledCount).toBe(before + 1);
    // The executor compiles with the registry's validator too: a tool it has not seen counts.
    registry.register({
      tool: { name: 'other', description: 'o', parameters: { type: 'object' }, execute: async () => ok('o') },
      source: 'builtin',
    });
    await executor.execute({ id: 'o', name: 'other', arguments: {} }, testContext(), profile);
    expect(registry.validator.compiledCount).toBe(before + 2);
  });
});

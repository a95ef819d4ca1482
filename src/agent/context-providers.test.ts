import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStores } from '../store/sqlite/index.js';
import { createTodoTool } from '../tools/builtin/todo.js';
import { ToolRegistry } from '../tools/registry.js';
import { captureLogger, type TempDir, tempModuleDir, testContext } from '../tools/test-helpers.js';
import { reloadUserTools } from '../tools/user-tools.js';
import { ContextProviders } from './context-providers.js';

const dbDir = mkdtempSync(join(tmpdir(), 'navi-cp-db-'));
const stores = createSqliteStores(join(dbDir, 'navi.db'));
afterAll(() => {
  stores.close();
  rmSync(dbDir, { recursive: true, force: true });
});

let tmp: TempDir;
let providers: ContextProviders;
const provider = (name: string, body: string) =>
  `export const name = ${JSON.stringify(name)};\nexport async function provide(ctx) { ${body} }\n`;
const ctx = { sessionId: 's1', profileId: 'p1' };

beforeEach(() => {
  tmp = tempModuleDir('navi-cp-');
  providers = new ContextProviders({ dir: tmp.dir, kv: stores.kv, timeoutMs: 300 });
});
afterEach(async () => {
  await providers.close();
  tmp.cleanup();
});

describe('context providers', () => {
  it('loads providers and gives each a named section, leaving out empty ones', async () => {
    tmp.write('a.ts', provider('Alpha', "return 'profile ' + ctx.profileId + ', session ' + ctx.sessionId;"));
    tmp.write('b.js', provider('Beta', "return '  ';"));
    tmp.write('_ignored.ts', provider('Hidden', "return 'no';"));
    expect(await providers.load()).toEqual({ loaded: ['Alpha', 'Beta'], errors: [] });
    expect(await providers.sections(ctx)).toEqual([{ name: 'Alpha', content: 'profile p1, session s1' }]);
  });

  it('reports broken providers and keeps the good one', async () => {
    tmp.write('good.ts', provider('Good', "return 'ok';"));
    tmp.write('syntax.ts', 'export const name = ;');
    tmp.write('missing.ts', "export const name = 'Missing';");
    tmp.write('wrong.ts', "export const name = 5;\nexport const provide = 'x';");
    tmp.write('throws.ts', "throw new Error('import failed');");
    const { loaded, errors } = await providers.load();
    expect(loaded).toEqual(['Good']);
    const byFile = Object.fromEntries(errors.map((e) => [e.origin, e.error]));
    expect(byFile['syntax.ts']).toMatch(/^syntax error/);
    expect(byFile['missing.ts']).toBe('missing exports: provide');
    expect(byFile['wrong.ts']).toContain('"provide" must be a function');
    expect(byFile['throws.ts']).toContain('import failed');
    expect(await providers.sections(ctx)).toEqual([{ name: 'Good', content: 'ok' }]);
  });

  it('leaves out a provider that throws, hangs or returns a non-string, and cuts a long one', async () => {
    const { logger, lines } = captureLogger();
    providers = new ContextProviders({ dir: tmp.dir, kv: stores.kv, timeoutMs: 300, maxChars: 10, logger });
    tmp.write('a_throws.ts', provider('Throws', "throw new Error('bad');"));
    tmp.write('b_hangs.ts', provider('Hangs', 'return new Promise(() => {});'));
    tmp.write('c_number.ts', provider('Number', 'return 42;'));
    tmp.write('d_long.ts', provider('Long', "return 'x'.repeat(50);"));
    await providers.load();
    expect(await providers.sections(ctx)).toEqual([{ name: 'Long', content: `${'x'.repeat(10)}…` }]);
    const warnings = lines().map((l) => l.msg);
    expect(warnings).toContain('context provider failed; section left out');
    expect(warnings).toContain('context provider timed out; section left out');
  });

  it("hands each provider the run's stop, and leaves out the ones still running when it comes", async () => {
    // A time limit far beyond the test's own: only the run's stop can end this provider.
    providers = new ContextProviders({ dir: tmp.dir, kv: stores.kv, timeoutMs: 600_000 });
    tmp.write(
      'waits.ts',
      provider(
        'Waits',
        `const seen = () => ctx.kv.set(ctx.sessionId, 'seen', 'stopped');
        if (ctx.signal.aborted) { await seen(); return 'late'; }
        return new Promise((done) => ctx.signal.addEventListener('abort', () => seen().then(() => done('late'))));`,
      ),
    );
    await providers.load();
    const stop = new AbortController();
    const pending = providers.sections({ ...ctx, sessionId: 'stopped-run', signal: stop.signal });
    stop.abort();
    expect(await pending).toEqual([]);
    await expect.poll(() => stores.kv.get('stopped-run', 'seen')).toBe('stopped');
    // A run already stopped runs no provider at all.
    expect(await providers.sections({ ...ctx, sessionId: 'never', signal: stop.signal })).toEqual([]);
    expect(await stores.kv.get('never', 'seen')).toBeUndefined();
  });

  it('runs the new code after a reload through reloadUserTools, and drops deleted providers', async () => {
    const toolsDir = tempModuleDir('navi-cp-tools-');
    try {
      const registry = new ToolRegistry();
      tmp.write('v.ts', provider('Version', "return 'one';"));
      tmp.write('gone.ts', provider('Gone', "return 'here';"));
      await reloadUserTools({ registry, toolsDir: toolsDir.dir, providers });
      expect(await providers.sections(ctx)).toEqual([
        { name: 'Gone', content: 'here' },
        { name: 'Version', content: 'one' },
      ]);
      tmp.write('v.ts', provider('Version', "return 'two';"));
      tmp.remove('gone.ts');
      tmp.write('broken.ts', 'export const name = ;');
      const report = await reloadUserTools({ registry, toolsDir: toolsDir.dir, providers });
      expect(report.providers).toEqual(['Version']);
      expect(report.errors).toEqual([
        { origin: 'broken.ts (context provider)', error: expect.stringMatching(/^syntax error/) },
      ]);
      expect(registry.errors()).toMatchObject([{ origin: 'broken.ts', source: 'context_provider' }]);
      expect(await providers.sections(ctx)).toEqual([{ name: 'Version', content: 'two' }]);
    } finally {
      toolsDir.cleanup();
    }
  });
});

describe('shipped context providers', () => {
  it('give the date and the open todo items of the session', async () => {
    const shipped = new ContextProviders({
      dir: resolve(import.meta.dirname, '../../context_providers'),
      kv: stores.kv,
    });
    try {
      expect(await shipped.load()).toEqual({
        loaded: ['Current date and time', 'Open todo items'],
        errors: [],
      });
      const todo = createTodoTool(stores.kv);
      const c = testContext({ sessionId: 'with-todos' });
      await todo.execute({ action: 'set', tasks: ['first', 'second', 'third'] }, c);
      await todo.execute({ action: 'update', id: 1, status: 'done' }, c);
      const sections = await shipped.sections({ sessionId: 'with-todos', profileId: 'p' });
      expect(sections[0]?.name).toBe('Current date and time');
      expect(sections[0]?.content).toContain(String(new Date().getFullYear()));
      expect(sections[1]).toEqual({
        name: 'Open todo items',
        content:
          '2. second (pending)\n3. third (pending)\n(1 of 3 items closed; update them with the todo tool.)',
      });
      const none = await shipped.sections({ sessionId: 'no-todos', profileId: 'p' });
      expect(none.map((s) => s.name)).toEqual(['Current date and time']);
    } finally {
      await shipped.close();
    }
  });

  it('gives the time in the time zone set now, though it keeps its date formatter between runs', async () => {
    const shipped = new ContextProviders({
      dir: resolve(import.meta.dirname, '../../context_providers'),
      kv: stores.kv,
    });
    const before = process.env.TZ;
    const dateIn = async (tz: string) => {
      process.env.TZ = tz;
      const sections = await shipped.sections({ sessionId: 'tz', profileId: 'p' });
      return sections.find((s) => s.name === 'Current date and time')?.content;
    };
    try {
      await shipped.load();
      expect(await dateIn('UTC')).toMatch(/\(time zone UTC\)\.$/);
      expect(await dateIn('Asia/Tokyo')).toMatch(/\(time zone Asia\/Tokyo\)\.$/);
      expect(await dateIn('UTC')).toMatch(/\(time zone UTC\)\.$/);
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
      await shipped.close();
    }
  });
});

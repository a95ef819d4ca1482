import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStores } from '../../store/sqlite/index.js';
import { testContext, testProfile } from '../test-helpers.js';
import { createScratchpadTool } from './scratchpad.js';
import { createTodoTool, readTodos } from './todo.js';

const dir = mkdtempSync(join(tmpdir(), 'navi-kv-'));
const stores = createSqliteStores(join(dir, 'navi.db'));
afterAll(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('todo', () => {
  const todo = createTodoTool(stores.kv);
  const ctx = testContext({ sessionId: 'todo-session' });

  it('sets, updates and reads the checklist of one session', async () => {
    const set = await todo.execute({ action: 'set', tasks: ['find the file', 'fix it', 'test it'] }, ctx);
    expect(set.output).toContain('1. [ ] find the file (pending)');
    await todo.execute({ action: 'update', id: 1, status: 'done' }, ctx);
    await todo.execute({ action: 'update', id: 2, status: 'in_progress' }, ctx);
    const failed = await todo.execute(
      { action: 'update', id: 3, status: 'failed', note: 'no test runner' },
      ctx,
    );
    expect(failed.output).toContain('3. [!] test it — no test runner (failed)');
    const read = await todo.execute({ action: 'read' }, ctx);
    expect(read.output).toBe(
      '1. [x] find the file (done)\n2. [~] fix it (in_progress)\n3. [!] test it — no test runner (failed)\n1/3 done.',
    );
    expect((await readTodos(stores.kv, 'todo-session')).map((i) => i.status)).toEqual([
      'done',
      'in_progress',
      'failed',
    ]);
    expect((await todo.execute({ action: 'read' }, testContext({ sessionId: 'other' }))).output).toBe(
      'The todo list is empty.',
    );
  });

  it('explains a bad update', async () => {
    const r = await todo.execute({ action: 'update', id: 9, status: 'done' }, ctx);
    expect(r).toMatchObject({ success: false });
    expect(r.output).toContain('There is no item 9');
    expect((await todo.execute({ action: 'update', id: 1 }, ctx)).output).toContain('needs "id"');
    expect((await todo.execute({ action: 'set' }, ctx)).output).toContain('needs "tasks"');
  });
});

describe('scratchpad', () => {
  const pad = createScratchpadTool(stores.kv);
  const ctx = testContext({ sessionId: 'pad-session' });

  it('writes, appends, reads and clears named sections', async () => {
    await pad.execute({ action: 'write', section: 'findings', content: 'disk is full' }, ctx);
    await pad.execute({ action: 'append', section: 'findings', content: 'logs are 40 GB' }, ctx);
    await pad.execute({ action: 'write', section: 'plan', content: 'rotate logs' }, ctx);
    expect((await pad.execute({ action: 'read', section: 'findings' }, ctx)).output).toBe(
      '## findings\ndisk is full\nlogs are 40 GB',
    );
    expect((await pad.execute({ action: 'read' }, ctx)).output).toBe(
      '## findings\ndisk is full\nlogs are 40 GB\n\n## plan\nrotate logs',
    );
    await pad.execute({ action: 'clear', section: 'findings' }, ctx);
    expect((await pad.execute({ action: 'read', section: 'findings' }, ctx)).output).toContain(
      'Section "findings" is empty. Sections with notes: plan',
    );
    await pad.execute({ action: 'clear' }, ctx);
    expect((await pad.execute({ action: 'read' }, ctx)).output).toBe('The scratchpad is empty.');
  });

  it('keeps sessions apart and asks for what is missing', async () => {
    await pad.execute({ action: 'write', section: 'a', content: 'mine' }, ctx);
    expect((await pad.execute({ action: 'read' }, testContext({ sessionId: 'elsewhere' }))).output).toBe(
      'The scratchpad is empty.',
    );
    expect((await pad.execute({ action: 'write', content: 'x' }, ctx)).output).toContain('needs "section"');
    expect((await pad.execute({ action: 'append', section: 'a' }, ctx)).output).toContain('needs "content"');
  });

  it('lists the profile sections in the description offered to the LLM', () => {
    expect(pad.describeFor?.(testProfile({ scratchpad_sections: ['hosts', 'incidents'] }))).toContain(
      'Suggested sections: hosts, incidents.',
    );
    expect(pad.describeFor?.(testProfile())).not.toContain('Suggested');
  });
});

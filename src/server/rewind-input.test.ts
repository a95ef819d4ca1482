/** Which messages regenerate and edit accept, checked against a real SQLite store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../config/logger.js';
import { createSqliteStores, type SqliteStores } from '../store/sqlite/index.js';
import type { BufferedMessage, SessionStore, StoredMessage } from '../store/types.js';
import type { AgentRun } from './agent-run.js';
import { ApiError } from './errors.js';
import type { FormSubmissions } from './form-submissions.js';
import { editInput, regenerateInput, startEdit, startRegenerate } from './rewind-input.js';
import type { RunRegistry } from './run-registry.js';
import { SessionFiles } from './session-files.js';

let dir: string;
let stores: SqliteStores;
let files: SessionFiles;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'navi-rewind-input-'));
  stores = createSqliteStores(join(dir, 'navi.db'));
  files = new SessionFiles({
    root: join(dir, 'files'),
    files: stores.files,
    ttlHours: 1,
    maxBytes: 1024,
    clock: () => new Date(),
    logger: silentLogger(),
  });
  await stores.sessions.create({ id: 's', profile_id: 'plain' });
});

afterEach(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

function msg(id: string, role: StoredMessage['role'], extra: Partial<StoredMessage> = {}): StoredMessage {
  return { id, role, content: `text ${id}`, created_at: '2026-01-01T00:00:00.000Z', ...extra };
}
const both = (m: StoredMessage): BufferedMessage => ({ message: m, display: true, context: true });

const typed = msg('typed', 'user');
const answer = msg('answer', 'assistant');
const form = msg('form', 'user', {
  kind: 'form_submit',
  trigger: 'form',
  form_submit: { form_id: 'f', values: {} },
});
const recall = msg('recall', 'user', {
  trigger: 'recall',
  recall: { recall_id: 'r', scheduled_for: '2026-01-01T00:00:00.000Z' },
});

/** The error code `promise` is refused with (it must be refused with an ApiError). */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err.code;
}

const edit = (messageId: string, content = 'new text') =>
  editInput('s', messageId, { content }, { sessions: stores.sessions, files });

describe('regenerate', () => {
  it('runs the last typed message again, not the form submission after it', async () => {
    await stores.sessions.append('s', [both(typed), both(answer), both(form), both(msg('a2', 'assistant'))]);
    expect(await regenerateInput(stores.sessions, 's')).toEqual({
      content: 'text typed',
      trigger: 'user',
      rewind: { messageId: 'typed', rerun: true },
    });
  });

  it("runs a recall's prompt again, as the person's own run", async () => {
    await stores.sessions.append('s', [
      both(typed),
      both(answer),
      both(recall),
      both(msg('a2', 'assistant')),
    ]);
    expect(await regenerateInput(stores.sessions, 's')).toMatchObject({
      trigger: 'user',
      rewind: { messageId: 'recall', rerun: true },
    });
  });

  it('refuses a session with no message of the person (empty, or only a form submission)', async () => {
    expect(await codeOf(regenerateInput(stores.sessions, 's'))).toBe('NOTHING_TO_REGENERATE');
    await stores.sessions.append('s', [both(form)]);
    expect(await codeOf(regenerateInput(stores.sessions, 's'))).toBe('NOTHING_TO_REGENERATE');
  });

  it('refuses when compression summarised the message away', async () => {
    await stores.sessions.append('s', [both(typed), both(answer)]);
    await stores.sessions.replaceContextPrefix('s', null, msg('sum', 'user', { kind: 'summary' }));
    expect(await codeOf(regenerateInput(stores.sessions, 's'))).toBe('MESSAGE_NOT_EDITABLE');
  });
});

describe('edit', () => {
  beforeEach(async () => {
    await stores.sessions.append('s', [
      both(typed),
      both(answer),
      both(form),
      both(recall),
      { message: msg('failure', 'system', { kind: 'error' }), display: true, context: false },
    ]);
  });

  it('replaces a typed message with the new content', async () => {
    expect(await edit('typed')).toEqual({
      content: 'new text',
      trigger: 'user',
      rewind: { messageId: 'typed', rerun: false },
    });
  });

  it.each([
    ['an answer', 'answer'],
    ['a form submission', 'form'],
    ["a recall's prompt", 'recall'],
    ['an error record', 'failure'],
  ])('refuses %s as MESSAGE_NOT_EDITABLE, saying what it is', async (_what, id) => {
    const err = await edit(id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('MESSAGE_NOT_EDITABLE');
    expect((err as ApiError).message).toMatch(/edit one of your own messages/);
  });

  it('refuses an id the session does not hold as MESSAGE_NOT_FOUND, a hostile one shown cut short', async () => {
    await stores.sessions.create({ id: 'other', profile_id: 'plain' });
    await stores.sessions.append('other', [both(msg('theirs', 'user'))]);
    expect(await codeOf(edit('theirs'))).toBe('MESSAGE_NOT_FOUND');
    const err = (await edit(`x${'<script>'.repeat(50)}`).catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe('MESSAGE_NOT_FOUND');
    expect(err.message.length).toBeLessThan(200);
  });

  it('refuses empty content and files not uploaded to the session, as a new message is refused', async () => {
    expect(await codeOf(edit('typed', '   '))).toBe('BAD_REQUEST');
    const withFile = editInput(
      's',
      'typed',
      { content: 'see file', files: [{ name: 'x.txt', path: '/etc/passwd' }] },
      { sessions: stores.sessions, files },
    );
    expect(await codeOf(withFile)).toBe('FILE_NOT_IN_SESSION');
  });

  it('refuses a typed message compression summarised away', async () => {
    await stores.sessions.replaceContextPrefix('s', 'answer', msg('sum', 'user', { kind: 'summary' }));
    expect(await codeOf(edit('typed'))).toBe('MESSAGE_NOT_EDITABLE');
  });
});

describe('in a long session', () => {
  /**
   * The real store, except that reading a whole buffer fails: regenerate and edit must cost what
   * they touch, not the session's length.
   */
  function pagedOnly(): SessionStore {
    const store: SessionStore = Object.create(stores.sessions);
    store.getMessages = () => Promise.reject(new Error('read the whole display buffer'));
    store.getContext = () => Promise.reject(new Error('read the whole context buffer'));
    return store;
  }
  const answers = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => both(msg(`a${from + i}`, 'assistant')));

  it('regenerate finds the last typed message pages back, reading no whole buffer', async () => {
    await stores.sessions.append('s', [...answers(0, 50), both(typed), both(form), ...answers(50, 450)]);
    expect(await regenerateInput(pagedOnly(), 's')).toEqual({
      content: 'text typed',
      trigger: 'user',
      rewind: { messageId: 'typed', rerun: true },
    });
  });

  it('regenerate refuses a long session with no message of the person', async () => {
    await stores.sessions.append('s', [both(form), ...answers(0, 350)]);
    expect(await codeOf(regenerateInput(pagedOnly(), 's'))).toBe('NOTHING_TO_REGENERATE');
  });

  it('edit takes a typed message far back, and refuses one summarised away, reading no whole buffer', async () => {
    await stores.sessions.append('s', [both(msg('old', 'user')), ...answers(0, 500), both(typed)]);
    const sessions = pagedOnly();
    expect(await editInput('s', 'old', { content: 'again' }, { sessions, files })).toMatchObject({
      rewind: { messageId: 'old', rerun: false },
    });
    await stores.sessions.replaceContextPrefix('s', 'a0', msg('sum', 'user', { kind: 'summary' }));
    expect(await codeOf(editInput('s', 'old', { content: 'again' }, { sessions, files }))).toBe(
      'MESSAGE_NOT_EDITABLE',
    );
    expect(await codeOf(editInput('s', 'gone', { content: 'again' }, { sessions, files }))).toBe(
      'MESSAGE_NOT_FOUND',
    );
  });

  /** What starting a rewind is given: the run started, and the messages searched for forms. */
  function rewindDeps(sessions: SessionStore) {
    const run = {} as AgentRun;
    const start = vi.fn(async (_sessionId: string, _input: unknown) => run);
    const reopenRemoved = vi.fn(
      (_run: AgentRun, _sessionId: string, _messages: readonly StoredMessage[], _log: unknown) => {},
    );
    const deps = {
      runs: { start } as unknown as RunRegistry,
      forms: { reopenRemoved } as unknown as FormSubmissions,
      sessions,
      log: silentLogger(),
      files,
    };
    return { deps, start, reopenRemoved };
  }

  it('starting an edit refuses an id the session lacks with one lookup, paging nothing', async () => {
    await stores.sessions.append('s', [both(typed), ...answers(0, 3000)]);
    const sessions = pagedOnly();
    const getMessagePage = vi.spyOn(sessions, 'getMessagePage');
    const { deps, start } = rewindDeps(sessions);
    expect(await codeOf(startEdit(deps, 's', 'gone', { content: 'again' }))).toBe('MESSAGE_NOT_FOUND');
    expect(await codeOf(startEdit(deps, 's', 'a5', { content: 'again' }))).toBe('MESSAGE_NOT_EDITABLE');
    expect(getMessagePage).not.toHaveBeenCalled();
    expect(start).not.toHaveBeenCalled();
  });

  it('starting an edit or a regenerate hands on the messages from the rewound one to the newest', async () => {
    await stores.sessions.append('s', [
      both(msg('old', 'user')),
      ...answers(0, 250),
      both(form),
      both(typed),
    ]);
    const all = await stores.sessions.getMessages('s');
    const edit = rewindDeps(pagedOnly());
    await startEdit(edit.deps, 's', 'old', { content: 'again' });
    expect(edit.start).toHaveBeenCalledWith(
      's',
      expect.objectContaining({ rewind: { messageId: 'old', rerun: false } }),
    );
    expect(edit.reopenRemoved.mock.calls[0]?.[2]).toEqual(all);
    const regenerate = rewindDeps(pagedOnly());
    await startRegenerate(regenerate.deps, 's');
    expect(regenerate.reopenRemoved.mock.calls[0]?.[2]).toEqual([typed]);
  });
});

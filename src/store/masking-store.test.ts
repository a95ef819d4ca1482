/** The transcript's last line of defence: what reaches the SQLite file passes the masker. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretMasker } from '../util/secret-masker.js';
import { maskingSessionStore } from './masking-store.js';
import { createSqliteStores, type SqliteStores } from './sqlite/index.js';
import type { StoredMessage } from './types.js';

const VALUE = 'revealed-4c2f9e1b7a-VALUE';
const at = '2026-01-01T00:00:00.000Z';

describe('maskingSessionStore', () => {
  let dir: string;
  let stores: SqliteStores;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'navi-masking-'));
    stores = createSqliteStores(join(dir, 'navi.db'));
  });
  afterEach(() => {
    stores.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('masks appended messages, streamed patches and summaries once a value is known', async () => {
    const secrets = new SecretMasker();
    const sessions = maskingSessionStore(stores.sessions, secrets);
    await sessions.create({ id: 's', profile_id: 'p' });
    const before: StoredMessage = { id: 'm0', role: 'user', content: `before ${VALUE}`, created_at: at };
    await sessions.append('s', [{ message: before, display: true, context: true }]);
    // Not registered yet: stored as given (it is not known to be a secret).
    expect((await sessions.getMessages('s'))[0]?.content).toBe(`before ${VALUE}`);

    secrets.add('Mail.password', VALUE, 4);
    const tool: StoredMessage = {
      id: 'm1',
      role: 'tool',
      content: `password: ${VALUE}`,
      tool_call_id: 'c1',
      created_at: at,
    };
    await sessions.append('s', [{ message: tool, display: true, context: true }]);
    await sessions.append('s', [
      { message: { id: 'm2', role: 'assistant', content: '', created_at: at }, display: true, context: true },
    ]);
    await sessions.updateMessage('s', 'm2', { content: `It is ${VALUE}.`, thinking: `say ${VALUE}` });
    await sessions.replaceContextPrefix('s', 'm2', {
      id: 'sum',
      role: 'assistant',
      content: `Summary: the password is ${VALUE}`,
      created_at: at,
    });

    const shown = await sessions.getMessages('s');
    expect(shown.map((m) => m.content)).toEqual([
      `before ${VALUE}`,
      'password: [secret hidden: Mail.password]',
      'It is [secret hidden: Mail.password].',
    ]);
    expect(shown[2]?.thinking).toBe('say [secret hidden: Mail.password]');
    const context = await sessions.getContext('s');
    expect(context[0]?.content).toBe('Summary: the password is [secret hidden: Mail.password]');
    // The caller's objects are left as they were: the run goes on with what it had.
    expect(tool.content).toBe(`password: ${VALUE}`);
  });

  it('passes messages through untouched while no secret is known', async () => {
    const sessions = maskingSessionStore(stores.sessions, new SecretMasker());
    await sessions.create({ id: 's', profile_id: 'p' });
    await sessions.append('s', [
      { message: { id: 'm', role: 'user', content: 'hello', created_at: at }, display: true, context: true },
    ]);
    expect((await sessions.getMessages('s'))[0]?.content).toBe('hello');
    stores.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(join(dir, 'navi.db')).includes('hello')).toBe(true);
  });
});

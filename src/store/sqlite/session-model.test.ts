/**
 * The session's model override in the SQLite store: set, kept by other patches, cleared, listed,
 * kept across a reopen, and passed through by the masking store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretMasker } from '../../util/secret-masker.js';
import { maskingSessionStore } from '../masking-store.js';
import { createSqliteStores, type SqliteStores } from './index.js';

let dir: string;
let stores: SqliteStores;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-session-model-'));
  stores = createSqliteStores(join(dir, 'navi.db'));
});

afterEach(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the session model override', () => {
  it('is absent on a new session, and set, kept and cleared by patches', async () => {
    const created = await stores.sessions.create({ id: 'a', profile_id: 'secretary' });
    expect(created).not.toHaveProperty('model_override');
    const set = await stores.sessions.update('a', { model_override: { backend: 'openai', model: 'gpt-x' } });
    expect(set?.model_override).toEqual({ backend: 'openai', model: 'gpt-x' });
    // A patch that does not name it leaves it alone.
    const renamed = await stores.sessions.update('a', { title: 'Renamed', context_token_count: 12 });
    expect(renamed).toMatchObject({
      title: 'Renamed',
      model_override: { backend: 'openai', model: 'gpt-x' },
    });
    const cleared = await stores.sessions.update('a', { model_override: null });
    expect(cleared).not.toHaveProperty('model_override');
    expect(cleared?.title).toBe('Renamed');
  });

  it('is carried by list and get, and survives a reopen of the database', async () => {
    await stores.sessions.create({ id: 'a', profile_id: 'secretary' });
    await stores.sessions.create({ id: 'b', profile_id: 'secretary' });
    await stores.sessions.update('b', { model_override: { backend: 'ollama', model: 'qwen3:4b' } });
    stores.close();
    stores = createSqliteStores(join(dir, 'navi.db'));
    const list = await stores.sessions.list();
    expect(list.find((s) => s.id === 'b')?.model_override).toEqual({ backend: 'ollama', model: 'qwen3:4b' });
    expect(list.find((s) => s.id === 'a')).not.toHaveProperty('model_override');
    expect((await stores.sessions.get('b'))?.model_override?.model).toBe('qwen3:4b');
  });

  it('passes through the masking store', async () => {
    const masked = maskingSessionStore(
      stores.sessions,
      new SecretMasker([{ name: 'K', value: 'a-secret-value' }]),
    );
    await masked.create({ id: 'a', profile_id: 'secretary' });
    const set = await masked.update('a', { model_override: { backend: 'openai', model: 'm' } });
    expect(set?.model_override).toEqual({ backend: 'openai', model: 'm' });
    expect((await masked.list())[0]?.model_override).toEqual({ backend: 'openai', model: 'm' });
  });

  it('refuses a value that is not JSON at the database level', () => {
    stores.close();
    const db = new BetterSqlite3(join(dir, 'navi.db'));
    try {
      db.prepare(
        "INSERT INTO sessions (id, profile_id, created_at, last_active) VALUES ('x', 'p', 't', 't')",
      ).run();
      expect(() =>
        db.prepare("UPDATE sessions SET model_override = 'not json' WHERE id = 'x'").run(),
      ).toThrow(/CHECK constraint failed/);
    } finally {
      db.close();
      stores = createSqliteStores(join(dir, 'navi.db'));
    }
  });
});

/**
 * The vault's own SQLite file: schema and queries. Navi and the gnexus-creds server open it at
 * the same time, so the schema is created inside `BEGIN IMMEDIATE` with `IF NOT EXISTS` and
 * every write is one immediate transaction that waits (busy_timeout) for the other's.
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import type { SecretStatus, SecretType } from './types.js';

const SCHEMA_VERSION = 1;

/** The `vault_meta` key of the data key, wrapped under the master key. */
export const DATA_KEY = 'data_key';

/** Longer than any write of the vault takes, including a rotation's scrypt outside it. */
const BUSY_TIMEOUT_MS = 10_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS vault_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS secrets (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  tags TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS secrets_updated ON secrets (updated_at);
CREATE TABLE IF NOT EXISTS secret_fields (
  secret_id TEXT NOT NULL REFERENCES secrets (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  secret INTEGER NOT NULL,
  plain TEXT,
  sealed BLOB,
  PRIMARY KEY (secret_id, name)
);
`;

export interface SecretRow {
  id: string;
  name: string;
  type: SecretType;
  /** JSON array of strings. */
  tags: string;
  status: SecretStatus;
  created_at: string;
  updated_at: string;
}

export interface FieldRow {
  secret_id: string;
  position: number;
  name: string;
  secret: 0 | 1;
  plain: string | null;
  sealed: Buffer | null;
}

/**
 * Opens (creating it, mode 0600, and its folder) the vault database and its schema. SQLite
 * gives the -wal and -shm files the database file's mode. Throws an Error saying why it
 * cannot, including a vault written by a newer Navi.
 */
export function openVaultDatabase(path: string): Database {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const info = statSync(path);
  if ((info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) chmodSync(path, 0o600);
  const db = new BetterSqlite3(path);
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Switching a new file to WAL needs a lock SQLite does not wait for even with a busy
    // timeout, so two processes creating the vault together retry here.
    const mode = whileBusy(() => db.pragma('journal_mode = WAL', { simple: true }));
    if (mode !== 'wal') throw new Error(`journal_mode is ${String(mode)}, not wal`);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    const version = whileBusy(() =>
      db
        .transaction(() => {
          db.exec(SCHEMA);
          db.prepare("INSERT OR IGNORE INTO vault_meta (key, value) VALUES ('schema_version', ?)").run(
            String(SCHEMA_VERSION),
          );
          const row = db.prepare("SELECT value FROM vault_meta WHERE key = 'schema_version'").get() as
            | { value: string }
            | undefined;
          return Number(row?.value);
        })
        .immediate(),
    );
    if (!(version <= SCHEMA_VERSION))
      throw new Error(`it was written by a newer Navi (schema ${version}, this one knows ${SCHEMA_VERSION})`);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Runs `fn` again while SQLite answers SQLITE_BUSY, for at most the busy timeout. */
function whileBusy<T>(fn: () => T): T {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      return fn();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      const busy = typeof code === 'string' && code.startsWith('SQLITE_BUSY');
      if (!busy || Date.now() > deadline) throw err;
      // The vault is synchronous throughout; a short blocking pause is the only kind it has.
      Atomics.wait(pause, 0, 0, 10 + Math.random() * 20);
    }
  }
}

function statements(db: Database) {
  const p = (sql: string) => db.prepare(sql);
  return {
    getMeta: p('SELECT value FROM vault_meta WHERE key = ?'),
    insertMeta: p('INSERT OR IGNORE INTO vault_meta (key, value) VALUES (?, ?)'),
    setMeta: p(
      'INSERT INTO vault_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    getSecret: p('SELECT * FROM secrets WHERE id = ?'),
    listSecrets: p('SELECT * FROM secrets ORDER BY updated_at DESC, rowid DESC'),
    fields: p('SELECT * FROM secret_fields WHERE secret_id = ? ORDER BY position'),
    field: p('SELECT * FROM secret_fields WHERE secret_id = ? AND name = ?'),
    insertSecret: p(
      'INSERT INTO secrets (id, name, type, tags, status, created_at, updated_at) VALUES (@id, @name, @type, @tags, @status, @created_at, @updated_at)',
    ),
    updateSecret: p(
      'UPDATE secrets SET name = @name, type = @type, tags = @tags, status = @status, created_at = @created_at, updated_at = @updated_at WHERE id = @id',
    ),
    deleteFields: p('DELETE FROM secret_fields WHERE secret_id = ?'),
    insertField: p(
      'INSERT INTO secret_fields (secret_id, position, name, secret, plain, sealed) VALUES (@secret_id, @position, @name, @secret, @plain, @sealed)',
    ),
  };
}

/** The prepared statements of the vault, on one open database. */
export class VaultDb {
  private readonly s: ReturnType<typeof statements>;

  constructor(readonly db: Database) {
    this.s = statements(db);
  }

  meta(key: string): string | undefined {
    return (this.s.getMeta.get(key) as { value: string } | undefined)?.value;
  }

  insertMetaIfAbsent(key: string, value: string): void {
    this.s.insertMeta.run(key, value);
  }

  setMeta(key: string, value: string): void {
    this.s.setMeta.run(key, value);
  }

  secret(id: string): SecretRow | undefined {
    return this.s.getSecret.get(id) as SecretRow | undefined;
  }

  /** Every secret, newest change first. */
  secrets(): SecretRow[] {
    return this.s.listSecrets.all() as SecretRow[];
  }

  fields(secretId: string): FieldRow[] {
    return this.s.fields.all(secretId) as FieldRow[];
  }

  field(secretId: string, name: string): FieldRow | undefined {
    return this.s.field.get(secretId, name) as FieldRow | undefined;
  }

  insertSecret(row: SecretRow): void {
    this.s.insertSecret.run(row);
  }

  updateSecret(row: SecretRow): void {
    this.s.updateSecret.run(row);
  }

  /** Replaces all of a secret's fields, in the order given. */
  replaceFields(secretId: string, fields: Omit<FieldRow, 'secret_id' | 'position'>[]): void {
    this.s.deleteFields.run(secretId);
    fields.forEach((f, position) => {
      this.s.insertField.run({ ...f, secret_id: secretId, position });
    });
  }

  /** Runs `fn` in a `BEGIN IMMEDIATE` transaction: the write lock first, so two writers queue. */
  write<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  close(): void {
    this.db.close();
  }
}

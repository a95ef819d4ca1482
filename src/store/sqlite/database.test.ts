import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkIntegrity, type Database, openDatabase } from './database.js';
import { hasTable, migrate, recordedSchemaVersion, SchemaTooNewError, schemaVersion } from './migrate.js';
import { type Migration, migrations } from './migrations/index.js';

let dir: string;
const opened: Database[] = [];

function open(file: string, list?: readonly Migration[]): Database {
  const db = openDatabase(file, list);
  opened.push(db);
  return db;
}

function tables(db: Database): string[] {
  return db
    .prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .pluck()
    .all();
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-db-'));
});

afterEach(() => {
  for (const db of opened.splice(0)) if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('openDatabase', () => {
  it('creates the parent folder, the schema and the migration record on a fresh file', () => {
    const db = open(join(dir, 'nested', 'deeper', 'navi.db'));
    expect(tables(db)).toEqual(
      expect.arrayContaining([
        'context_messages',
        'messages',
        'schema_migrations',
        'session_files',
        'session_kv',
        'sessions',
      ]),
    );
    const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
    expect(rows).toEqual(migrations.map((m) => ({ version: m.version, name: m.name })));
  });

  it('sets WAL, NORMAL sync, foreign keys and a busy timeout', () => {
    const db = open(join(dir, 'navi.db'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
  });

  it('is idempotent on reopen and keeps the data', () => {
    const file = join(dir, 'navi.db');
    const first = open(file);
    first
      .prepare(
        "INSERT INTO sessions (id, profile_id, created_at, last_active) VALUES ('s1', 'p', 'now', 'now')",
      )
      .run();
    first.close();
    const second = open(file);
    expect(second.prepare('SELECT count(*) FROM schema_migrations').pluck().get()).toBe(migrations.length);
    expect(second.prepare('SELECT id FROM sessions').pluck().all()).toEqual(['s1']);
    expect(migrate(second, migrations).applied).toEqual([]);
  });

  it('applies a migration appended later, and only that one', () => {
    const file = join(dir, 'navi.db');
    open(file).close();
    const extra: Migration = {
      version: migrations.at(-1)!.version + 1,
      name: 'extra',
      up: (db) => db.exec('CREATE TABLE extra (x INTEGER)'),
    };
    const db = open(file, [...migrations, extra]);
    expect(tables(db)).toContain('extra');
    expect(schemaVersion(db)).toBe(extra.version);
  });

  it('rolls back a failing migration as a whole and records nothing', () => {
    const file = join(dir, 'navi.db');
    open(file).close();
    const broken: Migration = {
      version: 99,
      name: 'broken',
      up: (db) => {
        db.exec('CREATE TABLE half_done (x INTEGER)');
        throw new Error('boom');
      },
    };
    expect(() => open(file, [...migrations, broken])).toThrow(/boom/);
    const db = open(file);
    expect(tables(db)).not.toContain('half_done');
    expect(schemaVersion(db)).toBe(migrations.at(-1)!.version);
  });

  it('refuses a database newer than the code, naming the file and the versions', () => {
    const file = join(dir, 'navi.db');
    const db = open(file);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 'x')").run();
    db.close();
    let caught: unknown;
    try {
      open(file);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(Error);
    expect((caught as Error).message).toMatch(/navi\.db.*schema version 999.*Upgrade Navi/s);
    expect((caught as Error).cause).toBeInstanceOf(SchemaTooNewError);
  });

  it('reads the recorded version of a file without migrating it, and null for one Navi never wrote', () => {
    const navi = open(join(dir, 'navi.db'));
    expect(recordedSchemaVersion(navi)).toBe(migrations.at(-1)!.version);
    expect(hasTable(navi, 'sessions')).toBe(true);
    const other = new BetterSqlite3(join(dir, 'other.db'));
    opened.push(other);
    other.exec('CREATE TABLE notes (x TEXT)');
    expect(recordedSchemaVersion(other)).toBeNull();
    expect(hasTable(other, 'notes')).toBe(true);
    expect(hasTable(other, 'sessions')).toBe(false);
    other.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY)');
    expect(recordedSchemaVersion(other)).toBeNull();
  });

  it('rejects a migration list that is not strictly increasing', () => {
    const bad: Migration[] = [
      { version: 2, name: 'b', up: () => {} },
      { version: 1, name: 'a', up: () => {} },
    ];
    expect(() => open(join(dir, 'navi.db'), bad)).toThrow(/increasing/);
  });

  it('explains a file that is not a database: which file and what to do', () => {
    const file = join(dir, 'garbage.db');
    writeFileSync(file, 'this is not sqlite, just text that is long enough to have a header'.repeat(100));
    expect(() => open(file)).toThrow(/garbage\.db.*not a database.*DB_PATH/s);
  });

  it('explains a path it cannot open', () => {
    // A directory where the file should be.
    expect(() => open(dir)).toThrow(/Cannot open the database/);
  });

  it('accepts :memory: and reports a healthy file as such', () => {
    const db = open(':memory:');
    expect(tables(db)).toContain('sessions');
    expect(checkIntegrity(db)).toEqual([]);
  });
});

/**
 * `navi backup` and `navi restore` with DATABASE_URL set, as real child processes: the database
 * is PostgreSQL's to back up, so the backup holds the files and the vault and says to use
 * pg_dump; a restore puts those back, and leaves a SQLite backup's database where it is with the
 * command that copies it into PostgreSQL. Neither needs the server.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteStores } from '../../src/store/sqlite/index.js';
import { tempDir } from '../support/navi.js';
import { runNavi } from '../support/navi-process.js';

const URL = 'postgres://navi:hunter2@127.0.0.1:1/navi';

function dataEnv(dir: string): NodeJS.ProcessEnv {
  return {
    NAVI_DATA_DIR: join(dir, 'data'),
    DB_PATH: join(dir, 'data', 'navi.db'),
    SESSION_FILES_DIR: join(dir, 'data', 'files'),
    NAVI_PORT: '0',
  };
}

describe('navi backup and restore with the database in PostgreSQL', () => {
  it('backs up everything but the database, says to use pg_dump, and restores the rest', async () => {
    const dir = tempDir('navi-backup-pg-');
    const env = { ...dataEnv(dir), DATABASE_URL: URL };
    mkdirSync(join(dir, 'data', 'files', 's1'), { recursive: true });
    writeFileSync(join(dir, 'data', 'files', 's1', 'a.txt'), 'first');
    const dest = join(dir, 'backup');
    const backup = await runNavi(['backup', dest], env, dir);
    expect(backup.stdout).toContain('The database is in PostgreSQL (DATABASE_URL)');
    expect(backup.stdout).toContain('pg_dump --format=custom');
    expect(backup.stdout).not.toContain('hunter2');
    expect(backup.code).toBe(0);
    expect(existsSync(join(dest, 'navi.db'))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(dest, 'manifest.json'), 'utf8')) as {
      database: { engine?: string };
      items: { item: string }[];
    };
    expect(manifest.database.engine).toBe('postgres');
    expect(manifest.items.map((i) => i.item)).toContain('session_files');

    writeFileSync(join(dir, 'data', 'files', 's1', 'a.txt'), 'changed since');
    const restore = await runNavi(['restore', dest], env, dir);
    expect(restore.stdout).toContain('restored session_files');
    expect(restore.stdout).toContain('the backup holds no database (it was made while Navi used PostgreSQL)');
    expect(restore.code).toBe(0);
    expect(readFileSync(join(dir, 'data', 'files', 's1', 'a.txt'), 'utf8')).toBe('first');
  });

  it("leaves a SQLite backup's database out when DATABASE_URL is set, and names the copy command", async () => {
    const dir = tempDir('navi-restore-pg-');
    const env = dataEnv(dir);
    createSqliteStores(env.DB_PATH as string).close();
    const dest = join(dir, 'backup');
    expect((await runNavi(['backup', dest], env, dir)).code).toBe(0);
    const restore = await runNavi(['restore', dest], { ...env, DATABASE_URL: URL }, dir);
    expect(restore.stdout).toContain(`the backup's SQLite database ${join(dest, 'navi.db')} was left out`);
    expect(restore.stdout).toContain(`npx navi db copy --from ${join(dest, 'navi.db')} --to "$DATABASE_URL"`);
    expect(restore.stdout).not.toMatch(/restored database/);
    expect(restore.code).toBe(0);
  });
});

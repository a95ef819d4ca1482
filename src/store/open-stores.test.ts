import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStores } from './open-stores.js';

describe('openStores', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const dbPath = () => {
    const dir = mkdtempSync(join(tmpdir(), 'navi-open-stores-'));
    dirs.push(dir);
    return join(dir, 'navi.db');
  };

  it.each(['mysql://navi@localhost/navi', 'navi.db', 'http://localhost:5432/navi'])(
    'refuses a DATABASE_URL that is not postgres:// (%s), saying what it takes',
    async (url) => {
      await expect(openStores({ DB_PATH: dbPath(), DATABASE_URL: url })).rejects.toThrow(
        /DATABASE_URL must start with postgres:\/\/ or postgresql:\/\/.*unset it to use the SQLite file/,
      );
    },
  );

  it('keeps the SQLite file when DATABASE_URL is empty or only spaces', async () => {
    const stores = await openStores({ DB_PATH: dbPath(), DATABASE_URL: '  ' });
    try {
      expect(stores.engine).toBe('sqlite');
      const report = await stores.report();
      expect(report).toMatchObject({ engine: 'sqlite', migration: expect.any(Number) });
      expect(report.migration).toBeGreaterThan(0);
    } finally {
      await stores.close();
    }
  });
});

/** Shared set-up for the memory tests: a real SQLite file in a temporary folder. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStores, type SqliteStores } from '../store/sqlite/index.js';

export interface TempStores extends SqliteStores {
  dir: string;
  dispose(): void;
}

export function tempStores(): TempStores {
  const dir = mkdtempSync(join(tmpdir(), 'navi-memory-'));
  const stores = createSqliteStores(join(dir, 'navi.db'));
  return {
    ...stores,
    dir,
    dispose() {
      stores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

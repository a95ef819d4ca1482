/** The memory store on whichever engine the other stores opened (`openStores`). */
import type { OpenedStores } from '../store/open-stores.js';
import { SqliteMemoryStore } from './memory-store.js';
import { PgMemoryStore } from './postgres-memory-store.js';

export function openMemoryStore(
  stores: OpenedStores,
  options: { now?: () => Date } = {},
): SqliteMemoryStore | PgMemoryStore {
  return stores.engine === 'sqlite'
    ? new SqliteMemoryStore(stores.db, options)
    : new PgMemoryStore(stores.pg, options);
}

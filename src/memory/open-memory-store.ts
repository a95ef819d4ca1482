/** The memory store on whichever engine the other stores opened (`openStores`). */
import type { OpenedStores } from '../store/open-stores.js';
import { SqliteMemoryStore } from './memory-store.js';
import { PgMemoryStore } from './postgres-memory-store.js';
import type { MemoryStore } from './types.js';

export function openMemoryStore(stores: OpenedStores): MemoryStore {
  return stores.engine === 'sqlite' ? new SqliteMemoryStore(stores.db) : new PgMemoryStore(stores.pg);
}

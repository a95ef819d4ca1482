/** The PostgreSQL schema's numbered migrations, in order. A released migration never changes. */
import { coreMigration } from './001-core.js';
import { memoryMigration } from './002-memory.js';
import { recallsMigration } from './003-recalls.js';
import { searchMigration } from './004-search.js';
import { clusterMigration } from './005-cluster.js';
import type { PgMigration } from './types.js';

export type { PgMigration } from './types.js';

export const migrations: readonly PgMigration[] = [
  coreMigration,
  memoryMigration,
  recallsMigration,
  searchMigration,
  clusterMigration,
];

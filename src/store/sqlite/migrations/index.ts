/**
 * Every schema migration, oldest first. To change the schema, add a file `NNN-name.ts` and
 * append its migration here; never edit or reorder one that has shipped.
 */
import { coreMigration } from './001-core.js';
import { memoryMigration } from './002-memory.js';
import { consentMigration } from './003-consent.js';
import { typedMessagesMigration } from './004-typed-messages.js';
import { recallsMigration } from './005-recalls.js';
import { sessionModelMigration } from './006-session-model.js';
import { searchMigration } from './007-search.js';
import { memoryVectorCodesMigration } from './008-memory-vector-codes.js';
import { memoryFtsPrefixMigration } from './009-memory-fts-prefix.js';
import type { Migration } from './types.js';

export type { Migration } from './types.js';

export const migrations: readonly Migration[] = [
  coreMigration,
  memoryMigration,
  consentMigration,
  typedMessagesMigration,
  recallsMigration,
  sessionModelMigration,
  searchMigration,
  memoryVectorCodesMigration,
  memoryFtsPrefixMigration,
];

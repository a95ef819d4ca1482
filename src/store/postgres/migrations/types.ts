import type { PgClient } from '../database.js';

/** One numbered step of the PostgreSQL schema; it runs inside the migration transaction. */
export interface PgMigration {
  version: number;
  name: string;
  up(client: PgClient): Promise<void>;
}

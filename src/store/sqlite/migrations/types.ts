import type { Database } from 'better-sqlite3';

/**
 * One schema step. `up` runs inside a transaction opened by the runner, so it must not open
 * its own, and it cannot change `PRAGMA foreign_keys` (SQLite ignores that inside a transaction).
 */
export interface Migration {
  /** Positive integer, strictly increasing along the migrations array. Never reused. */
  version: number;
  /** Short kebab-case name, recorded beside the version for people reading the database. */
  name: string;
  up(db: Database): void;
}

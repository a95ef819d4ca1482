/**
 * The person's consent credential: pairing codes (short, single-use, expiring) and the browsers
 * paired with them. Only SHA-256 hashes of codes and cookie values are kept, so a copy of the
 * database does not hold anything a client could present.
 */
import type { Migration } from './types.js';

export const consentMigration: Migration = {
  version: 3,
  name: 'consent',
  up(db) {
    db.exec(`
      CREATE TABLE pairing_codes (
        code_hash TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        -- Canonical ISO-8601 UTC, so text order is time order.
        expires_at TEXT NOT NULL,
        -- Kept after use until expiry, so a second attempt can be told it was already used.
        used_at TEXT
      );

      CREATE TABLE paired_clients (
        id INTEGER PRIMARY KEY,
        secret_hash TEXT NOT NULL UNIQUE,
        user_agent TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        last_used_at TEXT NOT NULL
      );
    `);
  },
};

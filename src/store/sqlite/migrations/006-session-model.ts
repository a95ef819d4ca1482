/**
 * The model a session uses instead of its profile's (`PATCH /sessions/{id}` `{model}`): one JSON
 * column, `{"backend": …, "model": …}`, NULL when the session follows its profile.
 */
import type { Migration } from './types.js';

export const sessionModelMigration: Migration = {
  version: 6,
  name: 'session-model',
  up(db) {
    db.exec(`
      ALTER TABLE sessions ADD COLUMN model_override TEXT
        CHECK (model_override IS NULL OR json_valid(model_override));
    `);
  },
};

/**
 * What several `navi serve` processes on one database share about runs (docs/postgres.md#several-navi-processes-on-one-database):
 * which session is answering, on which process and under which run id (`active_runs`), and the
 * stamped events of recent runs (`run_events`), from which a process replays a run that another
 * one executes to its own clients, and the key their notices to each other are sealed with
 * (`cluster_secret`: LISTEN and NOTIFY are open to any role that may connect, these tables are
 * not).
 *
 * None of them is copied by `navi db copy` nor has a SQLite counterpart: the first two describe
 * runs in progress, which end with the processes that execute them; the key is made by the
 * first process that needs it.
 */
import type { PgMigration } from './types.js';

export const clusterMigration: PgMigration = {
  version: 5,
  name: 'cluster',
  async up(client) {
    await client.query(`
      CREATE TABLE active_runs (
        -- No foreign key: a session deleted during its run keeps its row until the run ends.
        session_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        -- The process id of the navi serve that executes the run (its connections carry it in
        -- application_name, which is how the others tell whether it is still alive).
        owner TEXT NOT NULL,
        started_at TEXT COLLATE "C" NOT NULL
      );
      CREATE TABLE run_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        session_id TEXT NOT NULL,
        -- json, not jsonb: the text is kept as it was sent, so another process relays it to its
        -- clients byte for byte without parsing it again.
        event JSON NOT NULL,
        created_at TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (run_id, seq)
      );
      -- The sweep removes the events of runs that ended a few minutes ago.
      CREATE INDEX run_events_by_time ON run_events (created_at);
      -- One row, filled with random bytes by the first process that joins.
      CREATE TABLE cluster_secret (
        id BOOLEAN PRIMARY KEY DEFAULT true CHECK (id),
        secret BYTEA NOT NULL
      );
    `);
  },
};

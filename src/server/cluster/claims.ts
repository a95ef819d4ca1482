/**
 * The sessions this process has claimed for its runs: taken on its lock connection (with the
 * row in `active_runs` that names the run), released once each, and taken again when that
 * connection comes back after a drop (the server released its locks when it ended).
 */
import type { Logger } from 'pino';
import type { DedicatedConnection } from '../../store/postgres/run-connection.js';
import type { PgRunTables } from '../../store/postgres/run-tables.js';

export interface ClaimsOptions {
  tables: PgRunTables;
  /** The connection that holds the locks. */
  lock: () => DedicatedConnection;
  member: string;
  log: Logger;
  /** Whether the cluster is closing: a release failing then is expected. */
  closing: () => boolean;
  /** A claim could not be taken again: its run must stop. */
  lost: (sessionId: string, runId: string) => void;
}

/** How long a claim waits for a session being freed by the process whose run just ended. */
const FREEING_ATTEMPTS = 40;
const FREEING_WAIT_MS = 25;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class Claims {
  /** Run ids per session, to take again when the lock connection comes back. */
  private readonly held = new Map<string, Set<string>>();

  constructor(private readonly options: ClaimsOptions) {}

  /** Claims the session for `runId`; false when another process runs something there. */
  async take(sessionId: string, runId: string): Promise<boolean> {
    const { tables, lock, member } = this.options;
    for (let attempt = 1; ; attempt++) {
      const result = await tables.claim(lock(), sessionId, runId, member);
      if (result.ok) break;
      // Held with a row: a run is active. Held without one: being taken or just freed; the
      // process whose run ended releases the lock right after removing the row.
      if (result.holder || attempt >= FREEING_ATTEMPTS) return false;
      await sleep(FREEING_WAIT_MS);
    }
    let runs = this.held.get(sessionId);
    if (!runs) {
      runs = new Set();
      this.held.set(sessionId, runs);
    }
    runs.add(runId);
    return true;
  }

  /** Frees the session of `runId` (its row and one hold of its lock). Never rejects. */
  async release(sessionId: string, runId: string): Promise<void> {
    const { tables, lock, log } = this.options;
    const runs = this.held.get(sessionId);
    runs?.delete(runId);
    if (runs?.size === 0) this.held.delete(sessionId);
    try {
      await tables.release(lock(), sessionId, runId);
    } catch (err) {
      if (this.options.closing()) return;
      log.warn({ err, session_id: sessionId }, 'releasing a session failed; removing its row');
      // The lock went with the connection (or is freed when it goes); the row must not go on
      // naming a run that is over.
      await tables
        .forget(sessionId, runId)
        .catch((again: unknown) =>
          log.warn({ err: again, session_id: sessionId }, 'removing the row failed'),
        );
    }
  }

  /** After the lock connection came back: the locks it held are gone; take them again. */
  async takeAgain(): Promise<void> {
    const { tables, lock, member, log } = this.options;
    for (const [sessionId, runs] of [...this.held]) {
      for (const runId of [...runs]) {
        // Released while the claims before it were taken again: its run is over.
        if (!this.held.get(sessionId)?.has(runId)) continue;
        const result = await tables
          .claim(lock(), sessionId, runId, member)
          .catch(() => ({ ok: false as const, holder: undefined }));
        if (result.ok) continue;
        log.error(
          { session_id: sessionId, run_id: runId },
          'claim lost while reconnecting; stopping the run',
        );
        this.options.lost(sessionId, runId);
      }
    }
  }
}

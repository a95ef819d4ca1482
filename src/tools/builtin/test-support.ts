/**
 * Helpers shared by the machine tools' tests: a plain ToolContext, an in-memory FileStore and
 * a liveness check that does not count zombies (PID 1 of a container may never reap them).
 */
import { processGone } from '../../../test/support/processes.js';
import type { FileStore, SessionFileRecord } from '../../store/types.js';
import { testContext } from '../test-helpers.js';
import type { ToolContext } from '../types.js';

/** `testContext` with the ids and profile the machine tools' tests were written against. */
export function makeCtx(overrides: Partial<ToolContext> = {}): ToolContext {
  return testContext({
    sessionId: 'sess1',
    runId: 'run1',
    callId: 'call1',
    profileId: 'secretary',
    ...overrides,
  });
}

/** A FileStore kept in a Map, for tests that do not need SQLite. */
export function memoryFileStore(): FileStore & { records: Map<string, SessionFileRecord> } {
  const records = new Map<string, SessionFileRecord>();
  const key = (s: string, n: string) => `${s}\u0000${n}`;
  return {
    records,
    async add(record) {
      records.set(key(record.session_id, record.name), record);
    },
    async get(sessionId, name) {
      return records.get(key(sessionId, name));
    },
    async list(sessionId) {
      return [...records.values()].filter((r) => r.session_id === sessionId);
    },
    async remove(sessionId, name) {
      return records.delete(key(sessionId, name));
    },
    async expired(now) {
      return [...records.values()].filter((r) => Date.parse(r.expires_at) <= now.getTime());
    },
  };
}

/** True when `pid` is a live process (zombies count as dead). */
export function isAlive(pid: number): boolean {
  return !processGone(pid);
}

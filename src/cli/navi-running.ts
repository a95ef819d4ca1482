/**
 * Whether a Navi is using the data right now, for the commands that replace or move it
 * (`navi restore`, `navi data move`): doing that under a running server would lose what it
 * writes next, or tear its database out from under it.
 *
 * Two checks, because each misses a case: the configured port answering `/health` as Navi does
 * (a server whose database is on a file system without working locks), and SQLite's own locks on
 * the database files (a server started on another port, or a gnexus-creds server still holding
 * the vault). In WAL mode every open connection keeps a shared lock on its database file, so a
 * connection of ours that cannot take an exclusive lock at once knows another one is open.
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import type { Settings } from '../config/settings.js';

/** How long the port probe waits for an answer; a Navi on the machine answers in milliseconds. */
const PROBE_TIMEOUT_MS = 2000;

/** The address to reach a server listening on `host`: a wildcard address means this machine. */
export function probeHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** True when `http://host:port/health` answers as Navi does. */
export async function naviAnswersOn(host: string, port: number): Promise<boolean> {
  if (port === 0) return false;
  try {
    const res = await fetch(`http://${probeHost(host)}:${port}/health`, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    if (!res.ok) return false;
    const body = (await res.json()) as unknown;
    return typeof body === 'object' && body !== null && (body as { status?: unknown }).status === 'ok';
  } catch {
    return false;
  }
}

/**
 * True when another connection has the SQLite database `file` open. A missing file, or one
 * SQLite cannot read, is held by nobody. Never waits: a busy lock is the answer, not something
 * to wait out.
 */
export function databaseInUse(file: string): boolean {
  if (!existsSync(file)) return false;
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(file, { fileMustExist: true, timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('ROLLBACK');
    return false;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // A damaged file is no one's open database; it is what a restore is for.
    return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
  } finally {
    db?.close();
  }
}

/**
 * Why the data of `settings` must not be touched now (a sentence naming what holds it and what
 * to do), or undefined when no Navi uses it.
 */
export async function naviUsingData(
  settings: Pick<Settings, 'NAVI_HOST' | 'NAVI_PORT' | 'DB_PATH' | 'GNEXUS_VAULT_PATH'>,
): Promise<string | undefined> {
  if (await naviAnswersOn(settings.NAVI_HOST, settings.NAVI_PORT))
    return `a Navi is serving on ${settings.NAVI_HOST}:${settings.NAVI_PORT}; stop it first (Ctrl-C, or systemctl --user stop navi)`;
  for (const file of [settings.DB_PATH, settings.GNEXUS_VAULT_PATH]) {
    if (databaseInUse(file))
      return `${file} is open in another process (a Navi on another port, or its gnexus-creds server); stop it first`;
  }
  return undefined;
}

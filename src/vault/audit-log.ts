/**
 * The vault's audit log: one JSON line per action, appended and flushed to disk before the
 * action takes effect. A line never holds a value. Navi and the gnexus-creds server append to
 * the same file; each line is one `write` on a descriptor opened for appending, so their lines
 * never interleave.
 */
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditAction, AuditContext, AuditEntry } from './types.js';
import { VaultError } from './types.js';

/** Enough for any reason a person or the agent gives; longer text is cut. */
const MAX_TEXT = 500;
const CHUNK_BYTES = 64 * 1024;

function cut(text: string | undefined): string | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

/** What an entry records besides who asked. */
export interface AuditEvent {
  action: AuditAction;
  secret_id?: string;
  secret_name?: string;
  field?: string;
  detail?: string;
}

export function auditEntry(event: AuditEvent, context: AuditContext, at = new Date()): AuditEntry {
  const entry: AuditEntry = { at: at.toISOString(), action: event.action, actor: context.actor };
  const optional = {
    secret_id: event.secret_id,
    secret_name: cut(event.secret_name),
    field: event.field,
    session_id: cut(context.session_id),
    tool: cut(context.tool),
    reason: cut(context.reason),
    detail: cut(event.detail),
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (entry as unknown as Record<string, string>)[key] = value;
  }
  return entry;
}

export class AuditLog {
  constructor(readonly path: string) {}

  /**
   * Appends `entry` and waits until it is on disk. Throws `VaultError('audit_failed')` when it
   * cannot, so the caller reveals or changes nothing.
   */
  append(entry: AuditEntry): void {
    const line = Buffer.from(`${JSON.stringify(entry)}\n`, 'utf8');
    let fd: number | undefined;
    try {
      fd = this.openForAppend();
      let written = 0;
      while (written < line.length) written += writeSync(fd, line, written);
      fsyncSync(fd);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new VaultError(
        'audit_failed',
        `cannot write the vault audit log ${this.path} (${e.code ?? e.message}), so nothing was done: ` +
          'make the file and its folder writable by Navi, or set GNEXUS_AUDIT_LOG to a writable path, then try again',
      );
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** The folder is made only when the file cannot be opened for lack of it, not on every entry. */
  private openForAppend(): number {
    try {
      return openSync(this.path, 'a', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      return openSync(this.path, 'a', 0o600);
    }
  }

  /**
   * The newest `limit` entries (for one secret when `secretId` is given), newest first. Reads
   * the file backwards in chunks, so a long log costs only as much as the entries asked for.
   * Lines that are not JSON (a torn last line after a crash) are skipped.
   */
  read(limit: number, secretId?: string): AuditEntry[] {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      const e = err as NodeJS.ErrnoException;
      throw new VaultError(
        'io',
        `cannot read the vault audit log ${this.path} (${e.code ?? e.message}); make it readable by Navi`,
      );
    }
    const out: AuditEntry[] = [];
    try {
      let position = fstatSync(fd).size;
      let rest = Buffer.alloc(0);
      const take = (raw: Buffer) => {
        const text = raw.toString('utf8').trim();
        if (text === '') return;
        try {
          const entry = JSON.parse(text) as AuditEntry;
          if (typeof entry !== 'object' || entry === null || typeof entry.action !== 'string') return;
          if (secretId === undefined || entry.secret_id === secretId) out.push(entry);
        } catch {
          // A torn line; the others still count.
        }
      };
      while (position > 0 && out.length < limit) {
        const size = Math.min(CHUNK_BYTES, position);
        position -= size;
        const chunk = Buffer.alloc(size);
        readSync(fd, chunk, 0, size, position);
        let buffer = Buffer.concat([chunk, rest]);
        // Every complete line after the first newline; the part before it may continue in the
        // previous chunk.
        let end = buffer.length;
        for (let i = buffer.length - 1; i >= 0 && out.length < limit; i--) {
          if (buffer[i] === 0x0a) {
            take(buffer.subarray(i + 1, end));
            end = i;
          }
        }
        buffer = buffer.subarray(0, end);
        rest = Buffer.from(buffer);
      }
      if (position === 0 && out.length < limit) take(rest);
    } finally {
      closeSync(fd);
    }
    return out.slice(0, limit);
  }
}

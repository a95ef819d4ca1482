/**
 * Files uploaded to (or shared in) a session: stored under SESSION_FILES_DIR/<session_id>/,
 * recorded in the FileStore, and removed when they expire or their session is deleted.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, mkdir, rm, stat, unlink } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import type { FileStore, SessionFileRecord } from '../store/types.js';
import { ApiError } from './errors.js';
import { contentTypeFor, numberedName, sanitiseFileName } from './file-names.js';

export type Clock = () => Date;

export interface SessionFilesOptions {
  root: string;
  files: FileStore;
  ttlHours: number;
  maxBytes: number;
  clock: Clock;
  logger: Logger;
}

/** A stream that reports whether it was cut at the size limit (as @fastify/multipart does). */
export interface UploadStream extends Readable {
  truncated?: boolean;
}

export class SessionFiles {
  readonly root: string;

  constructor(private readonly options: SessionFilesOptions) {
    this.root = resolve(options.root);
  }

  get maxBytes(): number {
    return this.options.maxBytes;
  }

  sessionDir(sessionId: string): string {
    return join(this.root, sessionId);
  }

  /** True when `path` resolves to a file directly inside the session's folder. */
  isInside(sessionId: string, path: string): boolean {
    const rel = relative(this.sessionDir(sessionId), resolve(path));
    return (
      rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) && !rel.includes('/') && !rel.includes('\\')
    );
  }

  /**
   * Streams an upload to disk under a safe, unused name and records it. Throws
   * `FILE_TOO_LARGE` (leaving nothing behind) when the stream was cut at the limit.
   */
  async save(
    sessionId: string,
    rawName: string,
    content: UploadStream,
    claimedType?: string,
  ): Promise<SessionFileRecord> {
    const safe = sanitiseFileName(rawName);
    if (!safe) {
      content.resume();
      throw new ApiError('INVALID_FILE_NAME');
    }
    const dir = this.sessionDir(sessionId);
    await mkdir(dir, { recursive: true });
    // The temporary name starts with a dot, which sanitised names never do: no collision.
    const temp = join(dir, `.upload-${randomUUID()}.part`);
    try {
      await pipeline(content, createWriteStream(temp, { flags: 'wx' }));
      if (content.truncated) throw new ApiError('FILE_TOO_LARGE', `the limit is ${this.limitText()}`);
      const { name, path } = await this.claimName(dir, safe, temp);
      const size = (await stat(path)).size;
      const now = this.options.clock();
      const record: SessionFileRecord = {
        session_id: sessionId,
        name,
        path,
        size,
        mime_type: contentTypeFor(name, claimedType),
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + this.options.ttlHours * 3_600_000).toISOString(),
      };
      await this.options.files.add(record);
      return record;
    } finally {
      await unlink(temp).catch(() => {});
    }
  }

  /** The record of a live (not expired) file whose path is still inside the session folder. */
  async find(sessionId: string, name: string): Promise<SessionFileRecord | undefined> {
    const record = await this.options.files.get(sessionId, name);
    if (!record) return undefined;
    if (new Date(record.expires_at).getTime() <= this.options.clock().getTime()) return undefined;
    if (!this.isInside(sessionId, record.path)) return undefined;
    return record;
  }

  /** Removes a deleted session's folder and everything in it. */
  async removeSession(sessionId: string): Promise<void> {
    await rm(this.sessionDir(sessionId), { recursive: true, force: true });
  }

  /** Deletes expired files and their records; returns how many went. */
  async sweep(): Promise<number> {
    const expired = await this.options.files.expired(this.options.clock());
    for (const record of expired) {
      // Records are trusted store data, but a path outside the folder is never deleted.
      if (this.isInside(record.session_id, record.path)) await rm(record.path, { force: true });
      await this.options.files.remove(record.session_id, record.name);
    }
    if (expired.length > 0)
      this.options.logger.info({ count: expired.length }, 'expired session files removed');
    return expired.length;
  }

  private limitText(): string {
    return `${Math.round(this.options.maxBytes / (1024 * 1024))} MB`;
  }

  /** Hard-links the temp file under the first free name: `link` fails atomically if taken. */
  private async claimName(dir: string, safe: string, temp: string): Promise<{ name: string; path: string }> {
    for (let n = 0; n < 1000; n++) {
      const name = numberedName(safe, n);
      const path = join(dir, name);
      try {
        await link(temp, path);
        return { name, path };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    throw new ApiError('INVALID_FILE_NAME', 'too many files with this name');
  }
}

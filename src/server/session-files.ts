/**
 * Files uploaded to (or shared in) a session: stored under SESSION_FILES_DIR/<session_id>/,
 * recorded in the FileStore, and removed when they expire or their session is deleted. Every
 * file is reached below the opened session folder (src/machine/fs/beneath.ts), never by path: the
 * folder may lie inside the agent's allowed folders, and a link swapped in must not redirect
 * an upload, a download or a delete elsewhere.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from 'pino';
import {
  closeQuietly,
  codeOf,
  linkAt,
  mkdirAt,
  openDirAt,
  openFileAt,
  PathRefusedError,
  unlinkAt,
} from '../machine/fs/beneath.js';
import { FixedDir } from '../machine/fs/fixed-dir.js';
import { removeTree } from '../machine/fs/tree-ops.js';
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
  private readonly fixed: FixedDir;

  constructor(private readonly options: SessionFilesOptions) {
    this.root = resolve(options.root);
    this.fixed = new FixedDir(this.root);
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
    let dir: FileHandle;
    try {
      dir = await this.openSessionDir(sessionId, true);
    } catch (err) {
      content.resume();
      throw err;
    }
    // The temporary name starts with a dot, which sanitised names never do: no collision.
    const temp = `.upload-${randomUUID()}.part`;
    try {
      const out = await openFileAt(dir, temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
      const sink = out.createWriteStream();
      try {
        await pipeline(content, sink);
      } finally {
        // The stream closes the handle when it ends; this covers a stream that never started.
        await closeQuietly(out);
      }
      const size = sink.bytesWritten;
      if (content.truncated) throw new ApiError('FILE_TOO_LARGE', `the limit is ${this.limitText()}`);
      const name = await this.claimName(dir, safe, temp);
      const now = this.options.clock();
      const record: SessionFileRecord = {
        session_id: sessionId,
        name,
        path: join(this.sessionDir(sessionId), name),
        size,
        mime_type: contentTypeFor(name, claimedType),
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + this.options.ttlHours * 3_600_000).toISOString(),
      };
      await this.options.files.add(record);
      return record;
    } finally {
      await unlinkAt(dir, temp).catch(() => {});
      await dir.close();
    }
  }

  /**
   * Opens a live session file for reading, below the opened session folder and without
   * following a link; undefined when it is missing or not a regular file. The caller closes it.
   */
  async open(record: SessionFileRecord): Promise<{ handle: FileHandle; size: number } | undefined> {
    if (!this.isInside(record.session_id, record.path)) return undefined;
    let dir: FileHandle;
    try {
      dir = await this.openSessionDir(record.session_id, false);
    } catch {
      return undefined;
    }
    try {
      const handle = await openFileAt(dir, basename(record.path), constants.O_RDONLY).catch(() => undefined);
      if (!handle) return undefined;
      const info = await handle.stat();
      if (!info.isFile()) {
        await handle.close();
        return undefined;
      }
      return { handle, size: info.size };
    } finally {
      await dir.close();
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
    const root = await this.fixed.open({ create: false }).catch((err: unknown) => {
      if (codeOf(err) === 'ENOENT') return undefined;
      throw err;
    });
    if (!root) return;
    try {
      await removeTree(root, sessionId);
    } finally {
      await root.close();
    }
  }

  /** Deletes expired files and their records; returns how many went. */
  async sweep(): Promise<number> {
    const expired = await this.options.files.expired(this.options.clock());
    for (const record of expired) {
      // Records are trusted store data, but a path outside the folder is never deleted.
      if (this.isInside(record.session_id, record.path)) await this.unlink(record);
      await this.options.files.remove(record.session_id, record.name);
    }
    if (expired.length > 0)
      this.options.logger.info({ count: expired.length }, 'expired session files removed');
    return expired.length;
  }

  private limitText(): string {
    return `${Math.round(this.options.maxBytes / (1024 * 1024))} MB`;
  }

  /** The session's folder, opened below SESSION_FILES_DIR without following a link. */
  private async openSessionDir(sessionId: string, create: boolean): Promise<FileHandle> {
    const root = await this.fixed.open({ create });
    try {
      if (create) {
        await mkdirAt(root, sessionId).catch((err: unknown) => {
          if (codeOf(err) !== 'EEXIST') throw err;
        });
      }
      return await openDirAt(root, sessionId).catch((err: unknown) => {
        if (codeOf(err) === 'ENOTDIR' || codeOf(err) === 'ELOOP')
          throw new PathRefusedError(`The folder of session ${sessionId} is not a plain folder.`);
        throw err;
      });
    } finally {
      await root.close();
    }
  }

  private async unlink(record: SessionFileRecord): Promise<void> {
    const dir = await this.openSessionDir(record.session_id, false).catch(() => undefined);
    if (!dir) return;
    try {
      await unlinkAt(dir, basename(record.path)).catch(() => {});
    } finally {
      await closeQuietly(dir);
    }
  }

  /** Hard-links the temp file under the first free name: `link` fails atomically if taken. */
  private async claimName(dir: FileHandle, safe: string, temp: string): Promise<string> {
    for (let n = 0; n < 1000; n++) {
      const name = numberedName(safe, n);
      try {
        await linkAt(dir, temp, dir, name);
        return name;
      } catch (err) {
        if (codeOf(err) !== 'EEXIST') throw err;
      }
    }
    throw new ApiError('INVALID_FILE_NAME', 'too many files with this name');
  }
}

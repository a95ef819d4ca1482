/**
 * Writes a file into a session's files (SESSION_FILES_DIR/<session>/), the way `share_file`
 * and MCP tools that return images (a `web_view` screenshot) give the user something to
 * download. The session folder is walked without following links, the name is the first free
 * `name (n).ext`, and the file is recorded with its expiry.
 */
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import type { Settings } from '../config/settings.js';
import { codeOf, mkdirAt, openDirAt, openFileAt, unlinkAt } from '../machine/fs/beneath.js';
import { FixedDir } from '../machine/fs/fixed-dir.js';
import { mimeTypeOf } from '../machine/fs/mime.js';
import { PathRefusedError } from '../machine/fs/path-guard.js';
import type { SessionFile } from '../protocol/rest.js';
import type { FileStore, SessionFileRecord } from '../store/types.js';

export interface SavedSessionFile {
  name: string;
  url: string;
  size: number;
  mime_type: string;
  expires_at: string;
}

/** A saved file as a tool result's metadata names it (`shared_file`, `shared_files`). */
export function sharedFileOf(saved: SavedSessionFile): SessionFile {
  return { name: saved.name, url: saved.url, size: saved.size, mime_type: saved.mime_type };
}

/** Download path of a session file, as the REST API serves it. */
export function sessionFileUrl(sessionId: string, name: string): string {
  return `/sessions/${encodeURIComponent(sessionId)}/files/${encodeURIComponent(name)}`;
}

/** `report.pdf` → `report (1).pdf`; the same numbering the upload route uses. */
function numbered(name: string, n: number): string {
  if (n === 0) return name;
  const ext = extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  return `${stem} (${n})${ext}`;
}

export class SessionFileWriter {
  private readonly dir: FixedDir;

  constructor(
    private readonly settings: Pick<
      Settings,
      'SESSION_FILES_DIR' | 'SESSION_FILES_MAX_SIZE_MB' | 'SESSION_FILES_TTL_HOURS'
    >,
    private readonly files: FileStore,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.dir = new FixedDir(settings.SESSION_FILES_DIR);
  }

  get maxBytes(): number {
    return this.settings.SESSION_FILES_MAX_SIZE_MB * 1024 * 1024;
  }

  /**
   * Stores `data` as `safeName` (already a safe file name) or its first free numbered variant
   * and records it. Throws PathRefusedError when the file is too large or no name is free.
   */
  async save(
    sessionId: string,
    safeName: string,
    data: Buffer,
    signal?: AbortSignal,
  ): Promise<SavedSessionFile> {
    if (data.length > this.maxBytes) {
      throw new PathRefusedError(
        `The file is ${data.length} bytes, over the session file limit of ` +
          `${this.settings.SESSION_FILES_MAX_SIZE_MB} MB (SESSION_FILES_MAX_SIZE_MB).`,
      );
    }
    const name = await this.write(sessionId, safeName, data, signal);
    const created = this.now();
    const record: SessionFileRecord = {
      session_id: sessionId,
      name,
      path: join(resolve(this.settings.SESSION_FILES_DIR), sessionId, name),
      size: data.length,
      mime_type: mimeTypeOf(name),
      created_at: created.toISOString(),
      expires_at: new Date(
        created.getTime() + this.settings.SESSION_FILES_TTL_HOURS * 3_600_000,
      ).toISOString(),
    };
    await this.files.add(record);
    return {
      name,
      url: sessionFileUrl(sessionId, name),
      size: data.length,
      mime_type: record.mime_type,
      expires_at: record.expires_at,
    };
  }

  private async write(sessionId: string, safe: string, data: Buffer, signal?: AbortSignal): Promise<string> {
    const root = await this.dir.open({ create: true, ...(signal ? { signal } : {}) });
    let dir: FileHandle;
    try {
      await mkdirAt(root, sessionId).catch((err: unknown) => {
        if (codeOf(err) !== 'EEXIST') throw err;
      });
      dir = await openDirAt(root, sessionId);
    } finally {
      await root.close();
    }
    try {
      for (let n = 0; n < 1000; n++) {
        const name = numbered(safe, n);
        const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
        const out = await openFileAt(dir, name, flags).catch((err: unknown) => {
          if (codeOf(err) === 'EEXIST') return undefined;
          throw err;
        });
        if (!out) continue;
        try {
          await out.writeFile(data);
        } catch (err) {
          await out.close();
          await unlinkAt(dir, name).catch(() => {});
          throw err;
        }
        await out.close();
        return name;
      }
      throw new PathRefusedError(
        `The session already has 1000 files named like "${safe}"; pass another "name".`,
      );
    } finally {
      await dir.close();
    }
  }
}

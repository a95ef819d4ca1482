/**
 * `share_file`: copies a local file into the session's files so the user can download it from
 * `/sessions/{id}/files/{name}`. The source must lie inside FS_ALLOWED_PATHS or in a live
 * `code_exec` working folder; it is opened through the path guard's walk (no link followed
 * implicitly), and the copy is written below the opened session folder, so swapping a folder
 * for a link during the call reads or writes nothing outside.
 */
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
import { codeOf, mkdirAt, openDirAt, openFileAt, unlinkAt } from '../../machine/fs/beneath.js';
import { FixedDir } from '../../machine/fs/fixed-dir.js';
import { mimeTypeOf, safeFileName } from '../../machine/fs/mime.js';
import { PathGuard, PathRefusedError } from '../../machine/fs/path-guard.js';
import type { ScratchDirs } from '../../machine/sandbox/scratch-dirs.js';
import type { FileStore, SessionFileRecord } from '../../store/types.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

export interface ShareFileToolDeps {
  settings: Pick<
    Settings,
    'FS_ALLOWED_PATHS' | 'SESSION_FILES_DIR' | 'SESSION_FILES_MAX_SIZE_MB' | 'SESSION_FILES_TTL_HOURS'
  >;
  files: FileStore;
  /** code_exec's working folders: files there may be shared although outside the roots. */
  scratch?: ScratchDirs;
  /** Every path goes through it; the composition root passes the one guard all file tools share. */
  guard: PathGuard;
  now?: () => Date;
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

const parameters = z.strictObject({
  path: z.string().describe('Local file to share.'),
  name: z.string().optional().describe('File name the user sees (default: the file name).'),
});

export function createShareFileTool(deps: ShareFileToolDeps): TypedTool<typeof parameters> {
  const { guard } = deps;
  const maxBytes = deps.settings.SESSION_FILES_MAX_SIZE_MB * 1024 * 1024;
  const now = deps.now ?? (() => new Date());
  const filesDir = new FixedDir(deps.settings.SESSION_FILES_DIR);

  /** The live code_exec folder holding `input`, if any: the outermost ancestor it contains. */
  function scratchRoot(input: string): string | undefined {
    if (!deps.scratch || !input.startsWith('/')) return undefined;
    let found: string | undefined;
    for (let p = resolve(input); deps.scratch.contains(p); p = dirname(p)) {
      found = p;
      if (dirname(p) === p) break;
    }
    return found;
  }

  /** Opens the source for reading through a guard's walk, or throws PathRefusedError. */
  async function openSource(
    input: string,
    signal: AbortSignal,
  ): Promise<{ handle: FileHandle; path: string }> {
    // A code_exec output is addressed by its absolute path; it is outside the roots by design,
    // so its own folder is the one root of the walk.
    const scratch = scratchRoot(input);
    const from = scratch ? new PathGuard({ roots: [scratch] }) : guard;
    const { handle, path } = await from.openFile(input, constants.O_RDONLY, { signal });
    return { handle, path };
  }

  /** Writes `data` under the first free numbered name in the session's folder, walked without links. */
  async function store(sessionId: string, safe: string, data: Buffer, signal: AbortSignal): Promise<string> {
    const root = await filesDir.open({ create: true, signal });
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

  return defineTool({
    name: 'share_file',
    group: 'session',
    risk: { reads: true, writes: true },
    description:
      'Give the user a file: copies a local file (inside the allowed folders, or one that code_exec ' +
      'wrote) into this session and returns its download link.',
    parameters,
    async execute(params, ctx) {
      const input = params.path.trim();
      if (input === '') return fail('Parameter "path" must name a local file.');
      let source: { handle: FileHandle; path: string };
      try {
        source = await openSource(input, ctx.signal);
      } catch (err) {
        if (err instanceof PathRefusedError) return fail(err.message);
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'ENOENT') return fail(`No such file: ${input}.`);
        return fail(`Could not open ${input}: ${e.message}`);
      }
      const { handle } = source;
      try {
        const info = await handle.stat();
        if (!info.isFile()) return fail(`${source.path} is not a regular file; only files can be shared.`);
        if (info.size > maxBytes) {
          return fail(
            `${source.path} is ${info.size} bytes, over the session file limit of ` +
              `${deps.settings.SESSION_FILES_MAX_SIZE_MB} MB (SESSION_FILES_MAX_SIZE_MB).`,
          );
        }
        const wanted = params.name?.trim() ? params.name : basename(source.path);
        const safe = safeFileName(wanted);
        if (!safe) return fail(`"${wanted}" cannot be used as a file name; pass another "name".`);
        const data = await handle.readFile();
        let name: string;
        try {
          name = await store(ctx.sessionId, safe, data, ctx.signal);
        } catch (err) {
          if (err instanceof PathRefusedError) return fail(err.message);
          throw err;
        }
        const target = join(resolve(deps.settings.SESSION_FILES_DIR), ctx.sessionId, name);
        const created = now();
        const record: SessionFileRecord = {
          session_id: ctx.sessionId,
          name,
          path: target,
          size: data.length,
          mime_type: mimeTypeOf(name),
          created_at: created.toISOString(),
          expires_at: new Date(
            created.getTime() + deps.settings.SESSION_FILES_TTL_HOURS * 3_600_000,
          ).toISOString(),
        };
        await deps.files.add(record);
        const url = sessionFileUrl(ctx.sessionId, name);
        return ok(
          `Shared ${source.path} as "${name}" (${data.length} bytes). Download link: ${url} ` +
            `(kept until ${record.expires_at}). Use content_publish with name "${name}" to show it inline.`,
          { shared_file: { name, url, size: data.length, mime_type: record.mime_type } },
        );
      } finally {
        await handle.close();
      }
    },
  });
}

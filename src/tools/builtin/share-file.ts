/**
 * `share_file` (DESIGN §9): copies a local file into the session's files so the user can
 * download it from `/sessions/{id}/files/{name}` (DESIGN §5). The source must lie inside
 * FS_ALLOWED_PATHS or in a live `code_exec` working folder; it is opened through the path
 * guard (no symbolic link followed at the last step, the opened descriptor checked again), so
 * swapping the file for a link after the check copies nothing from outside.
 */
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, realpath, unlink } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import type { Settings } from '../../config/settings.js';
import type { FileStore, SessionFileRecord } from '../../store/types.js';
import { mimeTypeOf, safeFileName } from '../fs/mime.js';
import { PathGuard, PathRefusedError } from '../fs/path-guard.js';
import type { ScratchDirs } from '../sandbox/scratch-dirs.js';
import { fail, ok, type ToolDefinition, type ToolResult } from '../types.js';

export interface ShareFileToolDeps {
  settings: Pick<
    Settings,
    'FS_ALLOWED_PATHS' | 'SESSION_FILES_DIR' | 'SESSION_FILES_MAX_SIZE_MB' | 'SESSION_FILES_TTL_HOURS'
  >;
  files: FileStore;
  /** code_exec's working folders: files there may be shared although outside the roots. */
  scratch?: ScratchDirs;
  guard?: PathGuard;
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

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

export function createShareFileTool(deps: ShareFileToolDeps): ToolDefinition {
  const guard = deps.guard ?? new PathGuard({ roots: deps.settings.FS_ALLOWED_PATHS });
  const maxBytes = deps.settings.SESSION_FILES_MAX_SIZE_MB * 1024 * 1024;
  const now = deps.now ?? (() => new Date());

  /** Opens the source for reading, or throws PathRefusedError. */
  async function openSource(input: string): Promise<{ handle: FileHandle; path: string }> {
    // A code_exec output is addressed by its absolute path; it is outside the roots by design.
    if (deps.scratch && input.startsWith('/')) {
      const real = await realpath(resolve(input)).catch(() => undefined);
      if (real && deps.scratch.contains(real)) {
        const handle = await open(real, constants.O_RDONLY | O_NOFOLLOW).catch(
          (err: NodeJS.ErrnoException) => {
            if (err.code === 'ELOOP')
              throw new PathRefusedError(`Access denied: ${real} became a symbolic link.`);
            throw err;
          },
        );
        const opened = await realpath(`/proc/self/fd/${handle.fd}`).catch(() => real);
        if (!deps.scratch.contains(opened)) {
          await handle.close();
          throw new PathRefusedError(`Access denied: ${real} now leads to ${opened}.`);
        }
        return { handle, path: real };
      }
    }
    const path = await guard.resolve(input);
    return { handle: await guard.open(path, constants.O_RDONLY), path };
  }

  return {
    name: 'share_file',
    group: 'session',
    description:
      'Give the user a file: copies a local file (inside the allowed folders, or one that code_exec ' +
      'wrote) into this session and returns its download link.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Local file to share.' },
        name: { type: 'string', description: 'File name the user sees (default: the file name).' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    async execute(params, ctx): Promise<ToolResult> {
      const input = typeof params.path === 'string' ? params.path.trim() : '';
      if (input === '') return fail('Parameter "path" must name a local file.');
      let source: { handle: FileHandle; path: string };
      try {
        source = await openSource(input);
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
        const wanted =
          typeof params.name === 'string' && params.name.trim() !== '' ? params.name : basename(source.path);
        const safe = safeFileName(wanted);
        if (!safe) return fail(`"${wanted}" cannot be used as a file name; pass another "name".`);
        const dir = join(resolve(deps.settings.SESSION_FILES_DIR), ctx.sessionId);
        await mkdir(dir, { recursive: true });
        const data = await handle.readFile();
        let name = safe;
        let target = '';
        for (let n = 0; ; n++) {
          name = numbered(safe, n);
          target = join(dir, name);
          const out = await open(
            target,
            constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW,
            0o644,
          ).catch((err: NodeJS.ErrnoException) => {
            if (err.code === 'EEXIST' && n < 1000) return undefined;
            throw err;
          });
          if (!out) continue;
          try {
            await out.writeFile(data);
          } catch (err) {
            await out.close();
            await unlink(target).catch(() => {});
            throw err;
          }
          await out.close();
          break;
        }
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
  };
}

/**
 * `share_file`: copies a local file into the session's files so the user can download it from
 * `/sessions/{id}/files/{name}`. The source must lie inside FS_ALLOWED_PATHS or in a live
 * `code_exec` working folder; it is opened through the path guard's walk (no link followed
 * implicitly), and the copy is written below the opened session folder, so swapping a folder
 * for a link during the call reads or writes nothing outside.
 */
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
import { safeFileName } from '../../machine/fs/mime.js';
import { PathGuard, PathRefusedError } from '../../machine/fs/path-guard.js';
import type { ScratchDirs } from '../../machine/sandbox/scratch-dirs.js';
import type { FileStore } from '../../store/types.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { type SavedSessionFile, SessionFileWriter, sharedFileOf } from '../session-file-writer.js';
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

export { sessionFileUrl } from '../session-file-writer.js';

const parameters = z.strictObject({
  path: z.string().describe('Local file to share.'),
  name: z.string().optional().describe('File name the user sees (default: the file name).'),
});

export function createShareFileTool(deps: ShareFileToolDeps): TypedTool<typeof parameters> {
  const { guard } = deps;
  const writer = new SessionFileWriter(deps.settings, deps.files, deps.now);

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
        if (info.size > writer.maxBytes) {
          return fail(
            `${source.path} is ${info.size} bytes, over the session file limit of ` +
              `${deps.settings.SESSION_FILES_MAX_SIZE_MB} MB (SESSION_FILES_MAX_SIZE_MB).`,
          );
        }
        const wanted = params.name?.trim() ? params.name : basename(source.path);
        const safe = safeFileName(wanted);
        if (!safe) return fail(`"${wanted}" cannot be used as a file name; pass another "name".`);
        const data = await handle.readFile();
        let saved: SavedSessionFile;
        try {
          saved = await writer.save(ctx.sessionId, safe, data, ctx.signal);
        } catch (err) {
          if (err instanceof PathRefusedError) return fail(err.message);
          throw err;
        }
        return ok(
          `Shared ${source.path} as "${saved.name}" (${data.length} bytes). Download link: ${saved.url} ` +
            `(kept until ${saved.expires_at}). Use content_publish with name "${saved.name}" to show it inline.`,
          { shared_file: sharedFileOf(saved) },
        );
      } finally {
        await handle.close();
      }
    },
  });
}

/**
 * The files an MCP tool returns (a `web_view` screenshot, navi-3d's STL model and rendered
 * views) are kept as session files, so the user can open or download them and the agent can
 * publish them or hand them to the next tool; the model still sees the images themselves. Each
 * image and each binary resource of a successful result becomes one file, named by the block's
 * `_meta["navi/file_name"]`, else by the resource's address, else after the tool and the time.
 * Any configured server can answer this way, so one result leaves at most MAX_RESULT_FILES files
 * (their bytes are bounded by the server's `max_message_bytes`, each by SESSION_FILES_MAX_SIZE_MB).
 */
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { extension } from 'mime-types';
import { safeFileName } from '../machine/fs/mime.js';
import { FILE_NAME_META_KEY } from '../protocol/mcp-meta.js';
import type { SessionFile } from '../protocol/rest.js';
import { type SessionFileWriter, sharedFileOf } from '../tools/session-file-writer.js';
import type { ToolContext, ToolResult } from '../tools/types.js';

/**
 * Files kept from one result: navi-3d returns a model and up to three views, web_view one. A
 * server answering with thousands of tiny blocks would otherwise leave thousands of files and
 * as many lines of notes and `shared_files` entries on the stored message.
 */
export const MAX_RESULT_FILES = 8;

function stamp(date: Date): string {
  return date.toISOString().replace(/\..*$/, '').replace(/:/g, '-');
}

/** The safe name a block asks its file to be saved under, when it names one. */
export function blockFileName(block: ContentBlock): string | undefined {
  const named = block._meta?.[FILE_NAME_META_KEY];
  if (typeof named === 'string') return safeFileName(named);
  if (block.type !== 'resource') return undefined;
  const last = block.resource.uri.split(/[/\\]/).pop() ?? '';
  try {
    return safeFileName(decodeURIComponent(last));
  } catch {
    return safeFileName(last);
  }
}

interface ReturnedFile {
  name: string;
  data: string;
}

/** The name of a file its block does not name; a server's tool name can hold anything. */
function fallbackName(tool: string, mimeType: string | undefined, now: Date): string {
  const ext = (mimeType && extension(mimeType)) || 'bin';
  return safeFileName(`${tool}-${stamp(now)}.${ext}`) ?? `file-${stamp(now)}.${ext}`;
}

/** The file a block carries: an image, or an embedded resource with a `blob`. */
function fileOf(block: ContentBlock, tool: string, now: Date): ReturnedFile | undefined {
  if (block.type === 'image')
    return { name: blockFileName(block) ?? fallbackName(tool, block.mimeType, now), data: block.data };
  if (block.type !== 'resource' || !('blob' in block.resource) || typeof block.resource.blob !== 'string')
    return undefined;
  const name = blockFileName(block) ?? fallbackName(tool, block.resource.mimeType, now);
  return { name, data: block.resource.blob };
}

/** The first MAX_RESULT_FILES files of the result, and how many more it holds. */
function returnedFiles(
  result: CallToolResult,
  tool: string,
  now: Date,
): { files: ReturnedFile[]; more: number } {
  const files: ReturnedFile[] = [];
  let more = 0;
  for (const block of result.content ?? []) {
    const file = fileOf(block, tool, now);
    if (!file) continue;
    if (files.length < MAX_RESULT_FILES) files.push(file);
    else more++;
  }
  return { files, more };
}

/**
 * Saves the files of a successful result and says where each went, at the start of its output
 * and in `metadata.shared_files`. A file that cannot be saved is a note, never a failed call.
 */
export async function keepResultFiles(
  converted: ToolResult,
  raw: CallToolResult,
  tool: string,
  writer: SessionFileWriter,
  ctx: Pick<ToolContext, 'sessionId' | 'signal' | 'isSubagent'>,
  now: Date = new Date(),
): Promise<ToolResult> {
  // A subagent's session lives in memory only: a file there would be unreachable.
  if (!converted.success || ctx.isSubagent) return converted;
  const { files, more } = returnedFiles(raw, tool, now);
  if (files.length === 0) return converted;
  const shared: SessionFile[] = [];
  const notes: string[] = [];
  for (const file of files) {
    try {
      const saved = await writer.save(ctx.sessionId, file.name, Buffer.from(file.data, 'base64'), ctx.signal);
      shared.push(sharedFileOf(saved));
      notes.push(`[Saved "${file.name}" as the session file "${saved.name}" (${saved.url}).]`);
    } catch (err) {
      notes.push(
        `["${file.name}" could not be saved as a session file: ${err instanceof Error ? err.message : String(err)}]`,
      );
    }
  }
  if (more > 0)
    notes.push(
      `[${more} more file(s) of the result were not saved: at most ${MAX_RESULT_FILES} are kept from one call]`,
    );
  if (shared.length > 0) notes.push("[content_publish with a session file's name shows it to the user.]");
  // First, so the executor's truncation, which keeps the head of a long text, never cuts them.
  return {
    ...converted,
    output: converted.output ? `${notes.join('\n')}\n${converted.output}` : notes.join('\n'),
    ...(shared.length > 0 ? { metadata: { ...converted.metadata, shared_files: shared } } : {}),
  };
}

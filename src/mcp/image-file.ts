/**
 * An image an MCP tool returns (a `web_view` screenshot) is kept as a session file, so the user
 * can open or download it and the agent can publish it; the model still sees the image itself.
 */
import { extension } from 'mime-types';
import type { SessionFileWriter } from '../tools/session-file-writer.js';
import type { ToolContext, ToolResult } from '../tools/types.js';

function stamp(date: Date): string {
  return date.toISOString().replace(/\..*$/, '').replace(/:/g, '-');
}

/** Saves the result's image, when it has one, and says where in the result. Never fails the call. */
export async function keepImageAsFile(
  result: ToolResult,
  tool: string,
  writer: SessionFileWriter,
  ctx: Pick<ToolContext, 'sessionId' | 'signal' | 'isSubagent'>,
): Promise<ToolResult> {
  const meta = result.metadata;
  // A subagent's session lives in memory only: a file there would be unreachable.
  if (!result.success || ctx.isSubagent || meta?.is_image !== true || typeof meta.base64 !== 'string')
    return result;
  const mime = typeof meta.mime_type === 'string' ? meta.mime_type : 'image/png';
  const ext = extension(mime) || 'bin';
  try {
    const saved = await writer.save(
      ctx.sessionId,
      `${tool}-${stamp(new Date())}.${ext}`,
      Buffer.from(meta.base64, 'base64'),
      ctx.signal,
    );
    return {
      ...result,
      output: `${result.output}\n[The image is saved as the session file "${saved.name}" (${saved.url}); content_publish with that name shows it to the user.]`,
      metadata: {
        ...meta,
        shared_file: { name: saved.name, url: saved.url, size: saved.size, mime_type: saved.mime_type },
      },
    };
  } catch (err) {
    return {
      ...result,
      output: `${result.output}\n[The image could not be saved as a session file: ${err instanceof Error ? err.message : String(err)}]`,
    };
  }
}

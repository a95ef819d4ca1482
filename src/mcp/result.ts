/**
 * MCP `tools/call` results → Navi `ToolResult`. Text is capped while it is joined, so a server
 * answering with a huge result never becomes a huge string; only the first image is passed on
 * (as `metadata.is_image`), and one larger than the image limit is dropped with a note.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../tools/types.js';

export interface ConvertOptions {
  /** Most characters of text kept (TOOL_MAX_OUTPUT_CHARS × 2: the executor cuts the rest). */
  maxChars: number;
  /** Largest base64 image passed on. */
  maxImageChars: number;
  /** Unwrap the navi-ui `{output, metadata: {ui_component}}` envelope. */
  naviUi: boolean;
}

/** 8 M base64 characters: an image of about 6 MB. */
export const DEFAULT_MAX_IMAGE_CHARS = 8_000_000;

class CappedText {
  private readonly parts: string[] = [];
  private length = 0;
  dropped = 0;

  constructor(private readonly max: number) {}

  add(text: string): void {
    const room = this.max - this.length;
    if (room <= 0) {
      this.dropped += text.length;
      return;
    }
    const kept = text.length > room ? text.slice(0, room) : text;
    this.dropped += text.length - kept.length;
    this.parts.push(kept);
    this.length += kept.length + 1;
  }

  toString(): string {
    const text = this.parts.join('\n');
    return this.dropped > 0
      ? `${text}\n[${this.dropped} more characters of the MCP result were dropped]`
      : text;
  }
}

export function convertCallResult(result: CallToolResult, options: ConvertOptions): ToolResult {
  const text = new CappedText(options.maxChars);
  const metadata: Record<string, unknown> = {};
  let imageTaken = false;
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        text.add(block.text);
        break;
      case 'image':
        if (imageTaken) {
          text.add(`[another image (${block.mimeType}) was left out: only the first image is passed on]`);
        } else if (block.data.length > options.maxImageChars) {
          text.add(
            `[image (${block.mimeType}, ${block.data.length} base64 characters) dropped: over the ${options.maxImageChars}-character limit]`,
          );
        } else {
          imageTaken = true;
          Object.assign(metadata, { is_image: true, base64: block.data, mime_type: block.mimeType });
          text.add(`[image: ${block.mimeType}, ${Math.round((block.data.length * 3) / 4)} bytes]`);
        }
        break;
      case 'audio':
        text.add(`[audio (${block.mimeType}) left out: audio is not passed to the model]`);
        break;
      case 'resource_link':
        text.add(`[resource: ${block.uri}${block.name ? ` (${block.name})` : ''}]`);
        break;
      case 'resource': {
        const r = block.resource;
        if ('text' in r && typeof r.text === 'string') text.add(`[resource ${r.uri}]\n${r.text}`);
        else text.add(`[binary resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''} left out]`);
        break;
      }
    }
  }
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    if (json.length <= options.maxChars) metadata.structured_content = result.structuredContent;
    else text.add(`[structured content of ${json.length} characters left out]`);
    if ((result.content ?? []).length === 0) text.add(json.slice(0, options.maxChars));
  }
  let output = text.toString();
  let success = result.isError !== true;
  if (options.naviUi) {
    const envelope = parseEnvelope(output);
    if (envelope) {
      output = envelope.output;
      if (envelope.uiComponent !== undefined) metadata.ui_component = envelope.uiComponent;
      if (output.startsWith('Error:')) success = false;
    }
  }
  const meta = Object.keys(metadata).length > 0 ? metadata : undefined;
  if (success) return meta ? { success, output, metadata: meta } : { success, output };
  const message = output || 'the MCP tool reported an error without a message';
  return meta
    ? { success, output: message, error: message, metadata: meta }
    : { success, output: message, error: message };
}

function parseEnvelope(text: string): { output: string; uiComponent: unknown } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || !('output' in parsed)) return undefined;
  const { output, metadata } = parsed as { output: unknown; metadata?: unknown };
  if (typeof output !== 'string') return undefined;
  const uiComponent =
    typeof metadata === 'object' && metadata !== null && 'ui_component' in metadata
      ? (metadata as { ui_component: unknown }).ui_component
      : undefined;
  return { output, uiComponent };
}

/**
 * MCP `tools/call` results → Navi `ToolResult`. Text is capped while it is joined, so a server
 * answering with a huge result never becomes a huge string. The model is shown up to
 * MAX_MODEL_IMAGES images (the first as `metadata.is_image` + `base64`, the others in
 * `metadata.more_images`) within one size budget; images over it, and images that are not a
 * picture an LLM API takes, are dropped with a note. Binary resources are named in the text;
 * result-files.ts saves them and the images as session files.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../tools/types.js';
import { blockFileName } from './result-files.js';
import { type Envelope, parseEnvelope } from './ui-envelope.js';

export interface ConvertOptions {
  /** Most characters of text kept (TOOL_MAX_OUTPUT_CHARS × 2: the executor cuts the rest). */
  maxChars: number;
  /** Most base64 characters of images passed on, all images of the result together. */
  maxImageChars: number;
  /** Unwrap the navi-ui `{output, metadata: {ui_component}}` envelope. */
  naviUi: boolean;
}

/** 8 M base64 characters: images of about 6 MB in all. */
export const DEFAULT_MAX_IMAGE_CHARS = 8_000_000;
/** Images of one result the model is shown: enough for a few views of one thing. */
export const MAX_MODEL_IMAGES = 4;

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
  const images: string[] = [];
  let imageChars = 0;
  let envelope: Envelope | undefined;
  (result.content ?? []).forEach((block, index) => {
    switch (block.type) {
      case 'text':
        // navi-ui's envelope is read whole, before any cap: its component is not text for the model.
        if (index === 0 && options.naviUi) envelope = parseEnvelope(block.text);
        text.add(envelope && index === 0 ? envelope.output : block.text);
        break;
      case 'image': {
        // The type the bytes show, not the one the server claims (it is kept on the message).
        const mimeType = pictureType(block.data);
        if (!mimeType) {
          text.add(
            `[image (${block.mimeType.slice(0, 100)}) not shown to the model: it is not a PNG, JPEG, GIF or WebP picture]`,
          );
        } else if (images.length >= MAX_MODEL_IMAGES) {
          text.add(`[image (${mimeType}) not shown to the model: at most ${MAX_MODEL_IMAGES} images are]`);
        } else if (imageChars + block.data.length > options.maxImageChars) {
          text.add(
            `[image (${mimeType}, ${block.data.length} base64 characters) dropped: over the ${options.maxImageChars}-character limit for the images of one result]`,
          );
        } else {
          if (images.length === 0)
            Object.assign(metadata, { is_image: true, base64: block.data, mime_type: mimeType });
          images.push(block.data);
          imageChars += block.data.length;
          const name = blockFileName(block);
          text.add(
            `[image${name ? ` "${name}"` : ''}: ${mimeType}, ${Math.round((block.data.length * 3) / 4)} bytes]`,
          );
        }
        break;
      }
      case 'audio':
        text.add(`[audio (${block.mimeType}) left out: audio is not passed to the model]`);
        break;
      case 'resource_link':
        text.add(`[resource: ${block.uri}${block.name ? ` (${block.name})` : ''}]`);
        break;
      case 'resource': {
        const r = block.resource;
        if ('text' in r && typeof r.text === 'string') text.add(`[resource ${r.uri}]\n${r.text}`);
        else if ('blob' in r && typeof r.blob === 'string') {
          const kind = r.mimeType ? `${r.mimeType}, ` : '';
          text.add(
            `[file "${blockFileName(block) ?? r.uri}" (${kind}${Math.round((r.blob.length * 3) / 4)} bytes)]`,
          );
        } else text.add(`[resource ${r.uri} without content left out]`);
        break;
      }
    }
  });
  if (images.length > 1) metadata.more_images = images.slice(1);
  if (result.structuredContent !== undefined) {
    const json = jsonOf(result.structuredContent);
    if (json === undefined) text.add('[structured content left out: it is nested too deeply to keep]');
    else {
      if (json.length <= options.maxChars) metadata.structured_content = result.structuredContent;
      else text.add(`[structured content of ${json.length} characters left out]`);
      if ((result.content ?? []).length === 0) text.add(json.slice(0, options.maxChars));
    }
  }
  let success = result.isError !== true;
  if (envelope) {
    if (envelope.component) metadata.ui_component = envelope.component;
    if (envelope.note) text.add(envelope.note);
    if (envelope.output.startsWith('Error:')) success = false;
  }
  const output = text.toString();
  const meta = Object.keys(metadata).length > 0 ? metadata : undefined;
  if (success) return meta ? { success, output, metadata: meta } : { success, output };
  const message = output || 'the MCP tool reported an error without a message';
  return meta
    ? { success, output: message, error: message, metadata: meta }
    : { success, output: message, error: message };
}

/** JSON of a parsed value, or undefined when it nests deeper than JSON.stringify's stack. */
function jsonOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The type of a picture every LLM API takes (PNG, JPEG, GIF, WebP), read from its first bytes
 * whatever the block's MIME type claims; undefined for anything else (an SVG, text, garbage),
 * which would fail the LLM request and, staying in the session's context, every later one.
 */
function pictureType(base64: string): string | undefined {
  const head = Buffer.from(base64.slice(0, 16), 'base64');
  const ascii = (from: number, to: number) => head.subarray(from, to).toString('latin1');
  if (head.subarray(0, 8).equals(PNG_SIGNATURE)) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'image/gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

/**
 * Turning a name chosen by a client into a safe file name inside a session's folder, and the
 * headers a download is served with. Uploaded content is never trusted to be what it claims:
 * anything a browser could run (HTML, SVG, XML, scripts) is served as an attachment, inside a
 * CSP sandbox, with sniffing off, so an upload can never script the web client.
 */
import { extname } from 'node:path';
import { mimeTypeOf } from '../machine/fs/mime.js';

const MAX_NAME_LENGTH = 200;

/**
 * The last path segment of `raw` with control and reserved characters replaced, a leading dot
 * replaced (no hidden files), and its length capped. Undefined when nothing usable is left
 * (an empty name, `.` or `..`).
 */
export function sanitiseFileName(raw: string): string | undefined {
  const lastSegment = raw.split(/[/\\]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we remove
  let name = lastSegment.replace(/[\u0000-\u001f\u007f<>:"|?*]/g, '_').trim();
  if (name === '' || /^\.+$/.test(name)) return undefined;
  if (name.startsWith('.')) name = `_${name.slice(1)}`;
  if (name.length > MAX_NAME_LENGTH) {
    const ext = extname(name).slice(0, 20);
    name = name.slice(0, MAX_NAME_LENGTH - ext.length) + ext;
  }
  return name;
}

/** `report.pdf` → `report (1).pdf`, `report (2).pdf`… for collisions. */
export function numberedName(name: string, n: number): string {
  if (n === 0) return name;
  const ext = extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  return `${stem} (${n})${ext === name ? '' : ext}`;
}

/**
 * The content type by extension, from the same table as files the agent shares; the client's
 * claim only when the extension is unknown, and never trusted further than that.
 */
export function contentTypeFor(name: string, claimed?: string): string {
  const known = mimeTypeOf(name);
  if (known !== 'application/octet-stream') return known;
  if (claimed && /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/i.test(claimed)) return claimed.toLowerCase();
  return 'application/octet-stream';
}

/** Types a browser shows without running anything; everything else is downloaded. */
const inlineTypes = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain',
  'text/markdown',
  'text/csv',
  'text/yaml',
  'application/json',
  'audio/mpeg',
  'audio/wav',
  'audio/ogg',
  'video/mp4',
  'video/webm',
]);

export interface DownloadHeaders {
  'content-type': string;
  'content-disposition': string;
  'x-content-type-options': 'nosniff';
  'content-security-policy': string;
  'cache-control': string;
}

export function downloadHeaders(name: string, mimeType: string): DownloadHeaders {
  const inline = inlineTypes.has(mimeType);
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const disposition = `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
  const textual = mimeType.startsWith('text/') || mimeType === 'application/json';
  return {
    'content-type': textual ? `${mimeType}; charset=utf-8` : mimeType,
    'content-disposition': disposition,
    'x-content-type-options': 'nosniff',
    'content-security-policy':
      "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'",
    'cache-control': 'private, no-cache',
  };
}

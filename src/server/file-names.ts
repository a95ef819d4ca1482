/**
 * Turning a name chosen by a client into a safe file name inside a session's folder, and the
 * headers a download is served with. Uploaded content is never trusted to be what it claims:
 * anything a browser could run (HTML, SVG, XML, scripts) is served as an attachment, inside a
 * CSP sandbox, with sniffing off, so an upload can never script the web client.
 */
import { extname } from 'node:path';

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

const typesByExtension: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xml': 'application/xml',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.stl': 'model/stl',
  '.scad': 'text/plain',
  '.py': 'text/plain',
  '.ts': 'text/plain',
  '.log': 'text/plain',
  '.yaml': 'text/plain',
  '.yml': 'text/plain',
};

/** The content type by extension; the client's claim only as a fallback, never trusted further. */
export function contentTypeFor(name: string, claimed?: string): string {
  const known = typesByExtension[extname(name).toLowerCase()];
  if (known) return known;
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

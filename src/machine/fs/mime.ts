/**
 * The one table of MIME types by file name, used for uploads and for files the agent shares,
 * and the safe file names session files are stored under. The table is mime-db (through
 * mime-types); the few corrections below are source files it misnames or does not know.
 */
import { extname } from 'node:path';
import mime from 'mime-types';

/**
 * Where mime-db is wrong for a personal agent: `.ts` is TypeScript far more often than an MPEG
 * transport stream, `.rs` is Rust rather than an XML service list, and common source files it
 * does not list would otherwise become opaque downloads. All of them are plain text to show.
 */
const CORRECTIONS: Record<string, string> = {
  '.ts': 'text/plain',
  '.mts': 'text/plain',
  '.cts': 'text/plain',
  '.tsx': 'text/plain',
  '.rs': 'text/plain',
  '.py': 'text/plain',
  '.go': 'text/plain',
  '.rb': 'text/plain',
  '.scad': 'text/plain',
};

const UNKNOWN = 'application/octet-stream';

/** The MIME type for a file name by its extension; `application/octet-stream` when unknown. */
export function mimeTypeOf(name: string): string {
  const ext = extname(name).toLowerCase();
  if (ext === '') return UNKNOWN;
  return CORRECTIONS[ext] ?? (mime.lookup(ext) || UNKNOWN);
}

/** Non-`text/` types whose content is text that is safe to show as plain text. */
const TEXT_APPLICATION_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/yaml',
  'application/toml',
  'application/sql',
  'application/x-sh',
  'application/javascript',
]);

/** MIME types of text that is safe to show as plain text even without a known extension. */
export function isTextMime(type: string): boolean {
  return type.startsWith('text/') || TEXT_APPLICATION_TYPES.has(type);
}

export const MAX_FILE_NAME_LENGTH = 120;

/**
 * A file name that is safe as one path component and in a URL: no separators, no control
 * characters or lone surrogates, no leading dots, at most MAX_FILE_NAME_LENGTH characters and
 * few enough bytes for any file system (extension kept).
 * Returns undefined when nothing usable is left.
 */
export function safeFileName(raw: string): string | undefined {
  let name = raw
    .normalize('NFC')
    .replace(/[/\\]/g, '_')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f"<>|:*?#%&{}$!'`@=+^~;]/g, '_')
    // A lone surrogate (the u flag leaves pairs alone) has no UTF-8 and breaks encodeURIComponent.
    .replace(/[\uD800-\uDFFF]/gu, '_')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[.\s_-]+/, '');
  name = fitted(name);
  return name.length > 0 && name !== '.' && name !== '..' ? name : undefined;
}

/**
 * Bytes of a name that leave room for a ` (999)` numbering within the file system's 255-byte
 * limit: 120 characters of CJK text are 360 bytes, and would fail with ENAMETOOLONG.
 */
const MAX_FILE_NAME_BYTES = 240;

/** `name` cut to MAX_FILE_NAME_LENGTH characters and MAX_FILE_NAME_BYTES bytes, extension kept. */
function fitted(name: string): string {
  if (name.length <= MAX_FILE_NAME_LENGTH && Buffer.byteLength(name) <= MAX_FILE_NAME_BYTES) return name;
  const full = extname(name);
  const ext = [...full].slice(0, 16).join('');
  let stem = '';
  let bytes = Buffer.byteLength(ext);
  // By code point, so a surrogate pair is never split.
  for (const ch of name.slice(0, name.length - full.length)) {
    bytes += Buffer.byteLength(ch);
    if (stem.length + ch.length + ext.length > MAX_FILE_NAME_LENGTH || bytes > MAX_FILE_NAME_BYTES) break;
    stem += ch;
  }
  return stem + ext;
}

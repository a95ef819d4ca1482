/**
 * MIME types by file extension and the safe file names session files are stored under.
 */
import { extname } from 'node:path';

const types: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.avif': 'image/avif',
  '.bmp': 'image/bmp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.toml': 'application/toml',
  '.js': 'text/javascript',
  '.ts': 'text/plain',
  '.py': 'text/x-python',
  '.sh': 'text/x-shellscript',
  '.css': 'text/css',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.stl': 'model/stl',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
};

export function mimeTypeOf(name: string): string {
  return types[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/** MIME types of text that is safe to show as plain text even without a known extension. */
export function isTextMime(mime: string): boolean {
  return (
    mime.startsWith('text/') ||
    ['application/json', 'application/xml', 'application/yaml', 'application/toml'].includes(mime)
  );
}

export const MAX_FILE_NAME_LENGTH = 120;

/**
 * A file name that is safe as one path component and in a URL: no separators, no control
 * characters, no leading dots, at most MAX_FILE_NAME_LENGTH characters (extension kept).
 * Returns undefined when nothing usable is left.
 */
export function safeFileName(raw: string): string | undefined {
  let name = raw
    .normalize('NFC')
    .replace(/[/\\]/g, '_')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f"<>|:*?#%&{}$!'`@=+^~;]/g, '_')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[.\s_-]+/, '');
  if (name.length > MAX_FILE_NAME_LENGTH) {
    const ext = extname(name).slice(0, 16);
    name = name.slice(0, MAX_FILE_NAME_LENGTH - ext.length) + ext;
  }
  return name.length > 0 && name !== '.' && name !== '..' ? name : undefined;
}

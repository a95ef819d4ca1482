/**
 * Files a tool saved among the session's files, as its result's metadata names them
 * (`shared_file` from share_file, `shared_files` from MCP tools such as navi-3d), and what the
 * chat does with each: a 3D model goes to the viewer, an image is shown, anything else is a
 * download link. Also the check that bytes are an STL before the viewer parses them.
 */

// Relative rather than `@protocol`, as in vault.ts; types only.
import type { SessionFile } from '../../../src/protocol/rest.js';

/** One saved file, as the metadata names it. */
export type SharedFile = SessionFile;

export type SharedFileKind = 'model' | 'image' | 'other';

/**
 * Only this server's session files are fetched or shown: a tool's metadata must not make the
 * page load something from another origin (a tracking pixel, a credentialed fetch elsewhere).
 */
export function isSessionFileUrl(url: unknown): url is string {
  if (typeof url !== 'string') return false;
  const parts = /^\/sessions\/([^/?#\\\s]+)\/files\/([^/?#\\\s]+)$/.exec(url);
  // The browser resolves a "." or ".." segment (also written %2e) before it fetches:
  // "/sessions/../files/a" would ask for "/files/a", "/sessions/x/files/.." for a folder.
  return parts !== null && !parts.slice(1).some((part) => /^(\.|%2e){1,2}$/i.test(part));
}

function readFile(value: unknown): SharedFile | null {
  if (!value || typeof value !== 'object') return null;
  const o = value as Record<string, unknown>;
  if (typeof o.name !== 'string' || o.name === '' || !isSessionFileUrl(o.url)) return null;
  return {
    name: o.name,
    url: o.url,
    size: typeof o.size === 'number' && Number.isFinite(o.size) ? o.size : 0,
    mime_type: typeof o.mime_type === 'string' ? o.mime_type.toLowerCase() : 'application/octet-stream',
  };
}

/** Every well-formed file of `shared_file` and `shared_files`, each url once, in order. */
export function sharedFilesOf(metadata: Record<string, unknown>): SharedFile[] {
  const raw = [metadata.shared_file, ...(Array.isArray(metadata.shared_files) ? metadata.shared_files : [])];
  const seen = new Set<string>();
  const files: SharedFile[] = [];
  for (const item of raw) {
    const file = readFile(item);
    if (!file || seen.has(file.url)) continue;
    seen.add(file.url);
    files.push(file);
  }
  return files;
}

const STL_TYPES = new Set(['model/stl', 'model/x.stl-binary', 'model/x.stl-ascii', 'application/sla']);
// SVG is left out on purpose: as an image it is harmless, but it is a document that can script.
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif']);

export function fileKind(file: Pick<SharedFile, 'name' | 'mime_type'>): SharedFileKind {
  if (file.name.toLowerCase().endsWith('.stl') || STL_TYPES.has(file.mime_type)) return 'model';
  if (IMAGE_TYPES.has(file.mime_type)) return 'image';
  return 'other';
}

/** "12.3 KB": a size for a download link. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** The largest model the viewer draws; beyond it the page would stall, so it offers the download. */
export const MAX_STL_BYTES = 64 * 1024 * 1024;

function tooLarge(size: number | null, max = MAX_STL_BYTES): string {
  const what = size === null ? 'larger than' : `${formatSize(size)}, more than`;
  return `the model is ${what} the ${formatSize(max)} this view draws`;
}

/**
 * The body of a model's download, or why the viewer will not hold it: a file announced (by its
 * Content-Length) or found while reading to be over `max` bytes is dropped there, so a huge
 * file never sits whole in the page's memory before the size check.
 */
export async function readModelBytes(
  response: Response,
  max = MAX_STL_BYTES,
): Promise<{ bytes: ArrayBuffer } | { problem: string }> {
  const announced = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(announced) && announced > max) {
    await response.body?.cancel();
    return { problem: tooLarge(announced, max) };
  }
  if (!response.body) return { bytes: await response.arrayBuffer() };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      return { problem: tooLarge(null, max) };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { bytes: bytes.buffer };
}

/**
 * Why `bytes` are not an STL the viewer can draw, or null when they are one. A binary STL is an
 * 80-byte header, a triangle count and 50 bytes per triangle, exactly; a text STL begins with
 * `solid` and lists facets. Anything else (an HTML error page, a PNG) is refused before parsing.
 */
export function stlProblem(bytes: ArrayBuffer): string | null {
  if (bytes.byteLength > MAX_STL_BYTES) return tooLarge(bytes.byteLength);
  if (bytes.byteLength >= 84) {
    const triangles = new DataView(bytes).getUint32(80, true);
    if (84 + triangles * 50 === bytes.byteLength)
      return triangles === 0 ? 'the model has no triangles' : null;
  }
  const head = new TextDecoder().decode(bytes.slice(0, 1024)).trimStart();
  if (/^solid\b/i.test(head)) {
    const text = new TextDecoder().decode(bytes);
    return /\bfacet\s+normal\b/i.test(text) && /\bvertex\b/i.test(text) ? null : 'the model has no triangles';
  }
  return 'the file is not an STL model (neither binary nor text STL)';
}

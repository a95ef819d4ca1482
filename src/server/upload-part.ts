/**
 * The one file of a multipart upload, as a stream that ends only once the whole body has been
 * parsed. A body that is cut short or malformed (no closing boundary, broken part headers,
 * garbage, a client that goes away) makes the stream fail instead of ending, so whoever writes
 * it to disk never keeps a file from an upload that did not arrive whole.
 */
import { PassThrough } from 'node:stream';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import type { UploadStream } from './session-files.js';

export interface UploadPart {
  fieldname: string;
  filename: string;
  mimetype: string;
  /** Ends after the body's closing boundary; fails with the refusal when the body is bad. */
  content: UploadStream;
}

/**
 * Reads the body up to its first file part (fields before it are skipped); undefined when the
 * body holds no file. Rejects, and the returned stream fails, with `MALFORMED_UPLOAD` for a
 * body that is not well-formed multipart, or with the parser's own limit errors (mapped by
 * `toApiError`). The caller must consume or `resume()` the returned stream.
 */
export async function readUploadPart(
  request: FastifyRequest,
  maxBytes: number,
): Promise<UploadPart | undefined> {
  const parts = request.parts({ limits: { fileSize: maxBytes, files: 1 } });
  for (;;) {
    const next = await parts.next().catch((err: unknown) => Promise.reject(uploadError(err)));
    if (next.done) return undefined;
    const part = next.value;
    if (part.type === 'file') {
      const { fieldname, filename, mimetype } = part;
      return { fieldname, filename, mimetype, content: checkedContent(part, parts) };
    }
  }
}

/** Passes the file's bytes on, and ends only when the rest of the body parses cleanly. */
function checkedContent(part: MultipartFile, rest: AsyncIterator<Multipart>): UploadStream {
  const file = part.file as UploadStream;
  const content: PassThrough & UploadStream = new PassThrough();
  // The body may fail before the consumer has attached to `content`; a later pipeline() still
  // sees the stored error, so this listener only keeps it from being thrown unhandled.
  content.on('error', () => {});
  const fail = (err: unknown): void => {
    content.destroy(uploadError(err));
  };
  file.once('error', fail);
  file.once('end', () => {
    drain(rest).then(() => {
      content.truncated = file.truncated;
      content.end();
    }, fail);
  });
  // A consumer that gives up (a disk error, a refused name) stops the parser too.
  content.once('close', () => {
    if (!file.readableEnded) file.destroy();
  });
  file.pipe(content, { end: false });
  return content;
}

/** Reads the parts after the file to the end of the body; fails if the body is malformed. */
async function drain(rest: AsyncIterator<Multipart>): Promise<void> {
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    if (next.value.type === 'file') next.value.file.resume();
  }
}

/**
 * The parser's limit and disconnect errors carry a code that `toApiError` maps (a second file
 * is named here, as "too large" would mislead); anything else it raises (busboy's plain
 * errors) means the body is not well-formed multipart.
 */
function uploadError(err: unknown): Error {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'FST_FILES_LIMIT') return new ApiError('BAD_REQUEST', 'send one file per upload');
  if (err instanceof Error && typeof code === 'string' && code.startsWith('FST_')) return err;
  return new ApiError('MALFORMED_UPLOAD');
}

/**
 * Downloads one model file into the models folder. Bytes go to `<name>.partial` and are hashed
 * as they arrive; only a file that is a GGUF and has the expected SHA-256 is renamed to its
 * final name, so the backend never sees half a model or a swapped one.
 *
 * A `.partial` left by a cut connection, a stop (Ctrl-C, cancel) or a crash is resumed with an
 * HTTP `Range` request: its bytes are hashed again first, so the checksum still covers the
 * whole file. A cut connection is retried a few times the same way before the download fails.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, rename, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';

const GGUF_MAGIC = 'GGUF';
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 8;

export interface DownloadProgress {
  bytes: number;
  /** Null while the server has not said how large the file is. */
  total: number | null;
}

export interface DownloadJob {
  url: string;
  /** The file's final name in `dir` (already checked to be a safe `.gguf` name). */
  fileName: string;
  dir: string;
  /** The SHA-256 the file must have; without one, the server's `x-linked-etag` is used. */
  sha256?: string;
  /** Stops the download; the `.partial` stays for a later resume. */
  signal?: AbortSignal;
  /** Called as bytes arrive (often: throttle what you show). */
  onProgress?(progress: DownloadProgress): void;
  /** Called before a retry: what went wrong, the retry's number and how many there may be. */
  onRetry?(problem: string, retry: number, retries: number): void;
}

export interface DownloadResult {
  path: string;
  bytes: number;
  /** The file's SHA-256; null when it was already in the folder and nothing was fetched. */
  sha256: string | null;
  /** The file was already in the folder. */
  alreadyPresent: boolean;
  /** Where the checksum the file was checked against came from; `none`: it was not checked. */
  verifiedWith: 'given' | 'server' | 'none';
}

export interface DownloaderOptions {
  /** Longest wait for the server's answer (headers), per try. Default 30 s. */
  connectTimeoutMs?: number;
  /** Longest silence in the middle of the body before the try counts as cut. Default 60 s. */
  idleTimeoutMs?: number;
  /** Tries after the first when the connection is cut or the server fails (5xx). Default 4. */
  retries?: number;
  /** Wait before a retry, times the retry's number. Default 2 s. */
  retryDelayMs?: number;
  /** Free bytes on the folder's disk, null when unknown. Default: the file system's answer. */
  freeBytes?(dir: string): Promise<number | null>;
}

/** A download that did not finish. `cancelled`: it was stopped, and its `.partial` kept. */
export class DownloadError extends Error {
  constructor(
    message: string,
    readonly cancelled = false,
  ) {
    super(message);
    this.name = 'DownloadError';
  }
}

/** A failed try worth another one (cut connection, timeout, server error). */
class RetryableError extends Error {}

async function defaultFreeBytes(dir: string): Promise<number | null> {
  try {
    const s = await statfs(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

/** `"<64 hex>"` (HF's `x-linked-etag` for a Git LFS file) as a checksum; anything else: undefined. */
export function sha256FromEtag(value: string | null): string | undefined {
  if (value === null) return undefined;
  const bare = value
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1')
    .toLowerCase();
  return /^[0-9a-f]{64}$/.test(bare) ? bare : undefined;
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(bytes < 10_000_000 ? 1 : 0)} MB`;
}

/** Everything one download carries from try to try. */
interface State {
  job: DownloadJob;
  partial: string;
  have: number;
  total: number | null;
  hash: Hash;
  expected: string | undefined;
  expectedFrom: DownloadResult['verifiedWith'];
}

export class ModelDownloader {
  private readonly connectTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly freeBytes: (dir: string) => Promise<number | null>;

  constructor(options: DownloaderOptions = {}) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
    this.retries = options.retries ?? 4;
    this.retryDelayMs = options.retryDelayMs ?? 2000;
    this.freeBytes = options.freeBytes ?? defaultFreeBytes;
  }

  /** Downloads, verifies and installs the file; rejects with a `DownloadError` saying why not. */
  async download(job: DownloadJob): Promise<DownloadResult> {
    const path = join(job.dir, job.fileName);
    await mkdir(job.dir, { recursive: true });
    const existing = await stat(path).catch(() => undefined);
    if (existing?.isFile())
      return { path, bytes: existing.size, sha256: null, alreadyPresent: true, verifiedWith: 'none' };

    const partial = `${path}.partial`;
    const state: State = {
      job,
      partial,
      have: 0,
      total: null,
      hash: createHash('sha256'),
      expected: job.sha256?.toLowerCase(),
      expectedFrom: job.sha256 ? 'given' : 'none',
    };
    await this.rehashPartial(state);

    for (let attempt = 0; ; attempt++) {
      try {
        await this.tryOnce(state);
        break;
      } catch (err) {
        if (job.signal?.aborted) throw this.stopped(state);
        if (!(err instanceof RetryableError)) throw err;
        if (attempt >= this.retries)
          throw new DownloadError(
            `the download failed after ${attempt + 1} tries: ${err.message}. ` +
              `${megabytes(state.have)} are kept in ${partial}; pull the same model again to resume`,
          );
        job.onRetry?.(err.message, attempt + 1, this.retries);
        await sleep(this.retryDelayMs * (attempt + 1), job.signal).catch(() => {
          throw this.stopped(state);
        });
      }
    }
    return this.install(state, path);
  }

  /** A resumed download hashes the bytes it already has, so the checksum covers the whole file. */
  private async rehashPartial(state: State): Promise<void> {
    const size = (await stat(state.partial).catch(() => undefined))?.size ?? 0;
    if (size === 0) return;
    const stream = createReadStream(state.partial, {
      ...(state.job.signal ? { signal: state.job.signal } : {}),
    });
    try {
      for await (const chunk of stream) state.hash.update(chunk as Buffer);
    } catch (err) {
      if (state.job.signal?.aborted) throw this.stopped(state);
      throw new DownloadError(`cannot read ${state.partial} to resume it: ${(err as Error).message}`);
    }
    state.have = size;
    state.job.onProgress?.({ bytes: size, total: null });
  }

  private stopped(state: State): DownloadError {
    return new DownloadError(
      state.have > 0
        ? `the download was stopped; ${megabytes(state.have)} are kept in ${state.partial} and pulling the same model again resumes it`
        : 'the download was stopped before any byte arrived',
      true,
    );
  }

  /** One HTTP exchange: resolves when the body is complete; rejects Retryable or final errors. */
  private async tryOnce(state: State): Promise<void> {
    const { job } = state;
    const controller = new AbortController();
    let cause: 'caller' | 'connect' | 'idle' | undefined;
    const abort = (why: 'caller' | 'connect' | 'idle') => {
      cause ??= why;
      controller.abort();
    };
    const onCallerAbort = () => abort('caller');
    job.signal?.addEventListener('abort', onCallerAbort, { once: true });
    if (job.signal?.aborted) abort('caller');
    let timer = setTimeout(() => abort('connect'), this.connectTimeoutMs);
    let file: FileHandle | undefined;
    try {
      const response = await this.open(state, controller.signal);
      clearTimeout(timer);
      const done = await this.start(state, response);
      if (done) return;
      const restart = response.status === 200;
      file = await open(state.partial, restart ? 'w' : 'a');
      // The first bytes of a new file must be the GGUF magic: an HTML error page or a login
      // form is refused before it fills the disk.
      let head: Buffer | undefined = state.have === 0 ? Buffer.alloc(0) : undefined;
      timer = setTimeout(() => abort('idle'), this.idleTimeoutMs);
      for await (const value of response.body as unknown as AsyncIterable<Uint8Array>) {
        timer.refresh();
        let chunk: Buffer = Buffer.from(value);
        if (head !== undefined) {
          head = Buffer.concat([head, chunk]);
          if (head.length < GGUF_MAGIC.length) continue;
          if (head.subarray(0, 4).toString('latin1') !== GGUF_MAGIC) {
            await file.close();
            file = undefined;
            await rm(state.partial, { force: true });
            throw new DownloadError(notGguf(job.url, head));
          }
          chunk = head;
          head = undefined;
        }
        if (state.total !== null && state.have + chunk.length > state.total)
          throw new DownloadError(
            `the server sent more than the ${state.total} bytes it announced; the file is not what it claims to be`,
          );
        await file.write(chunk);
        state.hash.update(chunk);
        state.have += chunk.length;
        job.onProgress?.({ bytes: state.have, total: state.total });
      }
      if (head !== undefined && head.length > 0) throw new DownloadError(notGguf(job.url, head));
      if (state.total !== null && state.have < state.total)
        throw new RetryableError(`the connection ended after ${state.have} of ${state.total} bytes`);
    } catch (err) {
      if (err instanceof DownloadError || err instanceof RetryableError) throw err;
      if (cause === 'caller') throw this.stopped(state);
      if (cause === 'connect')
        throw new RetryableError(`the server did not answer within ${this.connectTimeoutMs / 1000} s`);
      if (cause === 'idle') throw new RetryableError(`no data arrived for ${this.idleTimeoutMs / 1000} s`);
      throw new RetryableError(`the connection failed (${describe(err)})`);
    } finally {
      clearTimeout(timer);
      job.signal?.removeEventListener('abort', onCallerAbort);
      // Whatever ended the try, a body not read to its end is not left holding the connection.
      controller.abort();
      await file?.close();
    }
  }

  /** Sends the request, following redirects itself to read HF's checksum header on the way. */
  private async open(state: State, signal: AbortSignal): Promise<Response> {
    let url = state.job.url;
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = { 'accept-encoding': 'identity', 'user-agent': 'navi' };
      if (state.have > 0) headers.range = `bytes=${state.have}-`;
      const response = await fetch(url, { headers, redirect: 'manual', signal });
      this.takeServerChecksum(state, response.headers.get('x-linked-etag'));
      if (!REDIRECTS.has(response.status)) return response;
      await response.body?.cancel();
      const location = response.headers.get('location');
      if (location === null || hop >= MAX_REDIRECTS)
        throw new DownloadError(`the server at ${state.job.url} redirected without end or without a target`);
      const next = new URL(location, url);
      if (next.protocol !== 'https:' && new URL(url).protocol === 'https:')
        throw new DownloadError(
          `the server redirected to a plain ${next.protocol}// address, which Navi refuses`,
        );
      url = next.href;
    }
  }

  private takeServerChecksum(state: State, header: string | null): void {
    const sum = sha256FromEtag(header);
    if (sum === undefined) return;
    if (state.expected === undefined) {
      state.expected = sum;
      state.expectedFrom = 'server';
    } else if (state.expected !== sum) {
      throw new DownloadError(
        `the server's file has SHA-256 ${sum}, but ${state.expected} was expected: the file changed on the ` +
          'server or the checksum is wrong. Nothing was downloaded; give the right checksum with --sha256 if you trust the new file',
      );
    }
  }

  /** Reads the status; true when there is nothing left to fetch. */
  private async start(state: State, response: Response): Promise<boolean> {
    const status = response.status;
    const url = state.job.url;
    if (status === 416 && state.have > 0) {
      // Asked for bytes past the end: the partial already holds the whole file.
      await response.body?.cancel();
      return true;
    }
    if (status === 200 || status === 206) {
      if (status === 206) {
        const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
        if (!range || Number(range[1]) !== state.have) {
          await response.body?.cancel();
          throw new DownloadError(
            `the server answered a resume with the wrong part of the file (${response.headers.get('content-range') ?? 'no Content-Range'}); ` +
              `delete ${state.partial} and pull again`,
          );
        }
        state.total = range[2] === '*' ? null : Number(range[2]);
      } else {
        // The whole file again: the server does not resume, so the partial starts over.
        if (state.have > 0) {
          state.have = 0;
          state.hash = createHash('sha256');
        }
        const length = response.headers.get('content-length');
        state.total = length !== null && /^\d+$/.test(length) ? Number(length) : null;
      }
      if (state.total !== null) await this.checkSpace(state);
      return false;
    }
    await response.body?.cancel();
    if (status === 404)
      throw new DownloadError(
        `there is no file at ${url} (404); check the source's spelling and its repository`,
      );
    if (status === 401 || status === 403)
      throw new DownloadError(
        `the server refused the download (${status}): the model may need a login or its licence accepted on its page. ` +
          `Download it in a browser and put the .gguf file into ${state.job.dir}`,
      );
    if (status === 429 || status >= 500)
      throw new RetryableError(`the server answered ${status} ${response.statusText}`.trim());
    throw new DownloadError(`the server answered ${status} ${response.statusText} for ${url}`);
  }

  private async checkSpace(state: State): Promise<void> {
    if (state.total === null) return;
    const needed = state.total - state.have;
    const free = await this.freeBytes(state.job.dir);
    if (free !== null && free < needed)
      throw new DownloadError(
        `the model needs ${megabytes(needed)} more, but the disk of ${state.job.dir} has only ${megabytes(free)} free; ` +
          'free some space (or set NAVI_MODELS_DIR to a folder on a larger disk) and pull again',
      );
  }

  /** Checks the complete partial (GGUF magic, checksum) and gives it its final name. */
  private async install(state: State, path: string): Promise<DownloadResult> {
    const got = state.hash.digest('hex');
    const head = await readHead(state.partial);
    if (head.toString('latin1') !== GGUF_MAGIC) {
      await rm(state.partial, { force: true });
      throw new DownloadError(notGguf(state.job.url, head));
    }
    if (state.expected !== undefined && got !== state.expected) {
      await rm(state.partial, { force: true });
      throw new DownloadError(
        `the downloaded file's SHA-256 is ${got}, but ${state.expected} was expected; ` +
          'the file was deleted. Pull again; if it keeps happening, the source is not the file the checksum is for',
      );
    }
    await rename(state.partial, path);
    return { path, bytes: state.have, sha256: got, alreadyPresent: false, verifiedWith: state.expectedFrom };
  }
}

async function readHead(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(4);
    const { bytesRead } = await file.read(buffer, 0, 4, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

function notGguf(url: string, head: Buffer): string {
  const start = head
    .subarray(0, 16)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
  return `${url} is not a GGUF model file (it starts with ${JSON.stringify(start)}, not "GGUF"); give the link to the .gguf file itself`;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? `: ${cause.message}` : '';
  return `${err.message}${inner}`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

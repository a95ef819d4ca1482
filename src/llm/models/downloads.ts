/**
 * The model downloads the server runs for its clients (`POST /llm/downloads`): started, polled
 * and cancelled by id. At most `maxRunning` fetch at once (the rest wait their turn, shown as
 * running with no bytes yet); finished ones are kept a while so a client polling late still
 * learns how its download ended. Closing cancels what still runs and keeps its `.partial`.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelDownload } from '../../protocol/llm.js';
import { DownloadError, type ModelDownloader } from './downloader.js';
import type { SourceResolver } from './source.js';

export interface ModelDownloadsOptions {
  dir: string;
  resolver: SourceResolver;
  downloader: ModelDownloader;
  /** Downloads fetching at the same time. Default 2. */
  maxRunning?: number;
  /** How long a finished download stays listed (ms). Default 30 minutes. */
  keepFinishedMs?: number;
  /** Time source for `keepFinishedMs` (tests move it instead of waiting). */
  now?: () => number;
  /** Told about downloads that fail (the server logs them). */
  onFailure?(download: ModelDownload): void;
}

/** Why a download cannot start; the server maps `kind` onto its error codes. */
export class DownloadsError extends Error {
  constructor(
    readonly kind: 'invalid' | 'active',
    message: string,
  ) {
    super(message);
    this.name = 'DownloadsError';
  }
}

interface Entry {
  view: ModelDownload;
  controller: AbortController;
  /** Settles when the download has ended, whatever the outcome. */
  ended: Promise<void>;
  start?: () => void;
  finishedAt?: number;
}

/** Finished downloads kept at most, however recent. */
const MAX_FINISHED = 50;

export class ModelDownloads {
  private readonly entries = new Map<string, Entry>();
  private readonly waiting: Entry[] = [];
  private running = 0;
  private closed = false;
  private readonly maxRunning: number;
  private readonly keepFinishedMs: number;
  private readonly now: () => number;

  constructor(private readonly options: ModelDownloadsOptions) {
    this.maxRunning = options.maxRunning ?? 2;
    this.keepFinishedMs = options.keepFinishedMs ?? 30 * 60_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Starts a download; resolves its first view at once. A model already in the folder is `done`
   * straight away. Throws `invalid` for a bad source or checksum, `active` when the same file
   * is already being downloaded.
   */
  start(request: { source: string; sha256?: string }): ModelDownload {
    if (this.closed) throw new DownloadsError('invalid', 'the server is shutting down');
    let resolved: ReturnType<SourceResolver['resolve']>;
    try {
      resolved = this.options.resolver.resolve(request.source, request.sha256);
    } catch (err) {
      throw new DownloadsError('invalid', (err as Error).message);
    }
    this.prune();
    const busy = [...this.entries.values()].find(
      (e) => e.view.state === 'running' && e.view.file_name === resolved.fileName,
    );
    if (busy)
      throw new DownloadsError(
        'active',
        `${resolved.fileName} is being downloaded already (download ${busy.view.id}); follow that one or cancel it first`,
      );

    const view: ModelDownload = {
      id: randomUUID(),
      source: resolved.source,
      file_name: resolved.fileName,
      state: 'running',
      bytes: 0,
      total_bytes: resolved.model?.sizeBytes ?? null,
    };
    const path = join(this.options.dir, resolved.fileName);
    if (existsSync(path)) {
      const size = statSync(path).size;
      const entry: Entry = {
        view: { ...view, state: 'done', bytes: size, total_bytes: size },
        controller: new AbortController(),
        ended: Promise.resolve(),
        finishedAt: this.now(),
      };
      this.entries.set(view.id, entry);
      return { ...entry.view };
    }

    const controller = new AbortController();
    let begin!: () => void;
    const turn = new Promise<void>((resolve) => {
      begin = resolve;
    });
    const entry: Entry = { view, controller, ended: Promise.resolve(), start: begin };
    entry.ended = turn.then(() => this.run(entry, resolved));
    this.entries.set(view.id, entry);
    this.waiting.push(entry);
    this.pump();
    return { ...view };
  }

  /** A download by id, as it is now. */
  get(id: string): ModelDownload | undefined {
    this.prune();
    const entry = this.entries.get(id);
    return entry ? { ...entry.view } : undefined;
  }

  /** Every download still listed: running ones first, then the most recent. */
  list(): ModelDownload[] {
    this.prune();
    const all = [...this.entries.values()];
    const running = all.filter((e) => e.view.state === 'running');
    const finished = all
      .filter((e) => e.view.state !== 'running')
      .sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0));
    return [...running, ...finished].map((e) => ({ ...e.view }));
  }

  /** Whether a file is being downloaded now (removing it must wait). */
  isDownloading(fileName: string): boolean {
    return [...this.entries.values()].some(
      (e) => e.view.state === 'running' && e.view.file_name === fileName,
    );
  }

  /**
   * Stops a running download (its `.partial` stays, so a new start resumes it); resolves once
   * it has stopped. A finished one is answered as it is. Undefined for an unknown id.
   */
  async cancel(id: string): Promise<ModelDownload | undefined> {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.view.state === 'running') {
      const queued = this.waiting.indexOf(entry);
      if (queued >= 0) this.waiting.splice(queued, 1);
      entry.controller.abort();
      if (queued >= 0) {
        // It never started: ended, and its turn given so that `ended` settles.
        this.finish(entry, 'cancelled');
        entry.start?.();
      }
      await entry.ended;
    }
    return { ...entry.view };
  }

  /** Cancels every download and waits for them to stop. */
  async close(): Promise<void> {
    this.closed = true;
    const ids = [...this.entries.keys()];
    await Promise.all(ids.map((id) => this.cancel(id)));
  }

  private pump(): void {
    while (this.running < this.maxRunning && this.waiting.length > 0) {
      const next = this.waiting.shift() as Entry;
      this.running++;
      next.start?.();
    }
  }

  private async run(entry: Entry, resolved: ReturnType<SourceResolver['resolve']>): Promise<void> {
    if (entry.view.state !== 'running') return;
    try {
      const result = await this.options.downloader.download({
        url: resolved.url,
        fileName: resolved.fileName,
        dir: this.options.dir,
        ...(resolved.sha256 ? { sha256: resolved.sha256 } : {}),
        signal: entry.controller.signal,
        onProgress: ({ bytes, total }) => {
          entry.view.bytes = bytes;
          if (total !== null) entry.view.total_bytes = total;
        },
      });
      entry.view.bytes = result.bytes;
      entry.view.total_bytes = result.bytes;
      this.finish(entry, 'done');
    } catch (err) {
      if (err instanceof DownloadError && err.cancelled) this.finish(entry, 'cancelled');
      else {
        this.finish(entry, 'failed', err instanceof Error ? err.message : String(err));
        this.options.onFailure?.({ ...entry.view });
      }
    } finally {
      this.running--;
      this.pump();
    }
  }

  private finish(entry: Entry, state: ModelDownload['state'], error?: string): void {
    if (entry.view.state !== 'running') return;
    entry.view.state = state;
    if (error !== undefined) entry.view.error = error;
    entry.finishedAt = this.now();
  }

  /** Forgets finished downloads older than `keepFinishedMs`, and the oldest beyond a cap. */
  private prune(): void {
    const finished = [...this.entries.values()]
      .filter((e) => e.finishedAt !== undefined)
      .sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0));
    const cutoff = this.now() - this.keepFinishedMs;
    finished.forEach((e, i) => {
      if (i >= MAX_FINISHED || (e.finishedAt ?? 0) < cutoff) this.entries.delete(e.view.id);
    });
  }
}

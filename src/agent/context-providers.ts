/**
 * Context providers: files in CONTEXT_PROVIDERS_DIR that each add a short named section to the
 * system prompt of every run (the date, the open todo items…). A provider exports
 * `name` (the section's title) and `async function provide(ctx)` returning the section's text,
 * or an empty string to leave it out.
 *
 * They are loaded, error-isolated and hot-reloaded like user tools. Because a run waits for
 * them before its first LLM call, each one is time-limited and size-limited, stops with the run,
 * and a provider that throws or hangs only loses its own section.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { KvStore } from '../store/types.js';
import { type FileError, listSourceFiles } from '../tools/loader.js';
import { describeImportError, ModuleImporter } from '../tools/module-import.js';
import type { ReloadableFolder } from '../tools/user-tools.js';

export interface ProviderContext {
  sessionId: string;
  profileId: string;
  kv: KvStore;
  /** Aborted when the provider's time is up or the run it works for is stopped. */
  signal: AbortSignal;
}

/** What a caller of `sections` knows of the run; without `signal`, only the time limit stops it. */
export interface SectionsRequest {
  sessionId: string;
  profileId: string;
  kv?: KvStore;
  /** The run's stop: aborting it ends every provider still running and leaves its section out. */
  signal?: AbortSignal;
}

export interface ContextSection {
  name: string;
  content: string;
}

export interface ContextProvidersDeps {
  dir: string;
  kv: KvStore;
  logger?: Logger;
  /** Time each provider gets per run. Default 2000 ms. */
  timeoutMs?: number;
  /** Characters kept per section. Default 4000. */
  maxChars?: number;
}

type Provide = (ctx: ProviderContext) => unknown;

interface LoadedProvider {
  name: string;
  file: string;
  provide: Provide;
}

const SECTION_NAME = /^[^\n]{1,80}$/;

export class ContextProviders implements ReloadableFolder {
  private providers: LoadedProvider[] = [];
  private lastErrors: FileError[] = [];
  private readonly importer = new ModuleImporter();

  constructor(private readonly deps: ContextProvidersDeps) {}

  /** (Re)loads the folder; the previous set stays in use until the new one is complete. */
  async load(): Promise<{ loaded: string[]; errors: FileError[] }> {
    await this.importer.refresh();
    const loaded: LoadedProvider[] = [];
    const errors: FileError[] = [];
    for (const file of listSourceFiles(this.deps.dir)) {
      const result = await this.loadFile(join(this.deps.dir, file));
      if (typeof result === 'string') errors.push({ origin: file, error: result });
      else if (loaded.some((p) => p.name === result.name)) {
        errors.push({
          origin: file,
          error: `section name "${result.name}" is already used by ${loaded.find((p) => p.name === result.name)?.file}`,
        });
      } else loaded.push({ ...result, file });
    }
    this.providers = loaded;
    this.lastErrors = errors;
    for (const e of errors)
      this.deps.logger?.warn({ origin: e.origin, error: e.error }, 'context provider failed to load');
    return { loaded: loaded.map((p) => p.name), errors };
  }

  names(): string[] {
    return this.providers.map((p) => p.name);
  }

  errors(): readonly FileError[] {
    return this.lastErrors;
  }

  /**
   * The sections for one run's system prompt, in file order; failing, slow and empty providers
   * are left out, and so is every provider still running when `ctx.signal` aborts.
   */
  async sections(ctx: SectionsRequest): Promise<ContextSection[]> {
    if (ctx.signal?.aborted) return [];
    const results = await Promise.all(this.providers.map((p) => this.run(p, ctx)));
    return results.filter((s): s is ContextSection => s !== undefined);
  }

  async close(): Promise<void> {
    await this.importer.close();
  }

  private async loadFile(path: string): Promise<Omit<LoadedProvider, 'file'> | string> {
    let mod: Record<string, unknown>;
    try {
      mod = await this.importer.import(path);
    } catch (err) {
      return describeImportError(err);
    }
    const missing = ['name', 'provide'].filter((k) => mod[k] === undefined);
    if (missing.length > 0) return `missing exports: ${missing.join(', ')}`;
    const problems: string[] = [];
    if (typeof mod.name !== 'string' || !SECTION_NAME.test(mod.name)) {
      problems.push('"name" must be a one-line string of 1 to 80 characters');
    }
    if (typeof mod.provide !== 'function')
      problems.push(`"provide" must be a function, got ${typeof mod.provide}`);
    if (problems.length > 0) return `wrong export types: ${problems.join('; ')}`;
    return { name: mod.name as string, provide: mod.provide as Provide };
  }

  private async run(p: LoadedProvider, ctx: SectionsRequest): Promise<ContextSection | undefined> {
    const timeoutMs = this.deps.timeoutMs ?? 2000;
    const max = this.deps.maxChars ?? 4000;
    const limit = new AbortController();
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, limit.signal]) : limit.signal;
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    const cut = new Promise<'timeout' | 'stopped'>((resolve) => {
      timer = setTimeout(() => {
        limit.abort();
        resolve('timeout');
      }, timeoutMs);
      onStop = () => resolve('stopped');
      ctx.signal?.addEventListener('abort', onStop, { once: true });
    });
    try {
      const call = Promise.resolve().then(() =>
        p.provide({
          sessionId: ctx.sessionId,
          profileId: ctx.profileId,
          kv: ctx.kv ?? this.deps.kv,
          signal,
        }),
      );
      const out = await Promise.race([call, cut]);
      if (out === 'stopped') {
        call.catch(() => {});
        return undefined;
      }
      if (out === 'timeout') {
        call.catch(() => {});
        this.deps.logger?.warn(
          { provider: p.name, timeout_ms: timeoutMs },
          'context provider timed out; section left out',
        );
        return undefined;
      }
      if (typeof out !== 'string') {
        if (out !== undefined && out !== null)
          this.deps.logger?.warn({ provider: p.name }, 'context provider returned a non-string');
        return undefined;
      }
      const content = out.trim();
      if (content === '') return undefined;
      return { name: p.name, content: content.length > max ? `${content.slice(0, max)}…` : content };
    } catch (err) {
      this.deps.logger?.warn({ provider: p.name, err }, 'context provider failed; section left out');
      return undefined;
    } finally {
      clearTimeout(timer);
      if (onStop) ctx.signal?.removeEventListener('abort', onStop);
    }
  }
}

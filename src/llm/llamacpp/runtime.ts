/**
 * The llama.cpp runtime (node-llama-cpp) of one LLAMACPP_RUNTIME_DIR: found there and imported on
 * first use only (starting Navi never loads it), installed on demand, and its state for
 * `GET /llm/runtime` and `navi llamacpp status`. One per Navi process: every llamacpp backend
 * shares its module and its `Llama` instances.
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import type { LlamacppRuntimeStatus } from '../../protocol/llm.js';
import type { Llama, LlamaLogLevel, NodeLlamaCpp } from './binding-types.js';
import { type InstallOptions, type InstallResult, installRuntime, RuntimeInstallError } from './install.js';
import { RUNTIME_PACKAGE, runtimeEntry } from './runtime-files.js';

/** The runtime is not installed (or not loadable): the message says how to install it. */
export class RuntimeMissingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RuntimeMissingError';
  }
}

/** An install is already running. */
export class RuntimeBusyError extends Error {
  constructor() {
    super('the llama.cpp runtime is already being installed; wait for that install to end');
    this.name = 'RuntimeBusyError';
  }
}

export type GpuSetting = 'auto' | 'off';

const KEPT_LOG_LINES = 20;

export class LlamacppRuntime {
  private module: Promise<NodeLlamaCpp> | undefined;
  private readonly llamas = new Map<GpuSetting, Promise<Llama>>();
  private installing: { controller: AbortController; done: Promise<unknown> } | undefined;
  private log: string[] = [];
  private lastError: string | null = null;

  constructor(
    /** LLAMACPP_RUNTIME_DIR. */
    readonly dir: string,
    private readonly logger?: Logger,
  ) {}

  /** The installed node-llama-cpp version, or null. */
  version(): string | null {
    return runtimeEntry(this.dir)?.version ?? null;
  }

  /** Whether an install runs now (no file read, unlike `status()`). */
  isInstalling(): boolean {
    return this.installing !== undefined;
  }

  status(): LlamacppRuntimeStatus {
    const version = this.version();
    return {
      installed: version !== null,
      version,
      installing: this.isInstalling(),
      log: [...this.log],
      error: this.lastError,
    };
  }

  /** The module, imported once; rejects with `RuntimeMissingError` saying how to install it. */
  load(): Promise<NodeLlamaCpp> {
    this.module ??= this.importModule().catch((err: unknown) => {
      // Not cached: once the runtime is installed, the next call finds it.
      this.module = undefined;
      throw err;
    });
    return this.module;
  }

  /** The `Llama` (the native library, with or without a GPU), made once per GPU setting. */
  llama(gpu: GpuSetting): Promise<Llama> {
    let found = this.llamas.get(gpu);
    if (!found) {
      found = this.makeLlama(gpu).catch((err: unknown) => {
        this.llamas.delete(gpu);
        throw err;
      });
      this.llamas.set(gpu, found);
    }
    return found;
  }

  /**
   * Installs (or reinstalls) the runtime and waits for the end; throws `RuntimeBusyError` when
   * an install already runs, `RuntimeInstallError` when it fails. The status follows it.
   */
  async install(options: Omit<InstallOptions, 'signal'> = {}): Promise<InstallResult> {
    if (this.installing) throw new RuntimeBusyError();
    const controller = new AbortController();
    this.log = [];
    this.lastError = null;
    const run = installRuntime(this.dir, {
      ...options,
      signal: controller.signal,
      onLine: (line) => {
        this.log.push(line);
        if (this.log.length > KEPT_LOG_LINES) this.log.shift();
        options.onLine?.(line);
      },
    });
    this.installing = { controller, done: run.catch(() => undefined) };
    try {
      const result = await run;
      this.logger?.info({ dir: result.dir, version: result.version }, 'llama.cpp runtime installed');
      return result;
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      throw err;
    } finally {
      this.installing = undefined;
    }
  }

  /** Starts an install in the background (`POST /llm/runtime`); its outcome shows in `status()`. */
  startInstall(options: Omit<InstallOptions, 'signal' | 'onLine'> = {}): LlamacppRuntimeStatus {
    this.install(options).catch((err: unknown) => {
      if (err instanceof RuntimeBusyError) return;
      this.logger?.warn(
        { err: err instanceof RuntimeInstallError ? err.message : err },
        'llama.cpp runtime install failed',
      );
    });
    return this.status();
  }

  /** Stops an install that runs and frees the native library (Navi is closing). */
  async close(): Promise<void> {
    if (this.installing) {
      this.installing.controller.abort();
      await this.installing.done;
    }
    const llamas = [...this.llamas.values()];
    this.llamas.clear();
    for (const llama of llamas) {
      await llama.then((l) => l.dispose()).catch(() => undefined);
    }
  }

  private async importModule(): Promise<NodeLlamaCpp> {
    const entry = runtimeEntry(this.dir);
    if (!entry) {
      throw new RuntimeMissingError(
        `The llama.cpp runtime is not installed in ${this.dir} (LLAMACPP_RUNTIME_DIR). ` +
          'Run npx navi llamacpp install (about 85 MB; --gpu adds the GPU binaries), or install it from the setup screen.',
      );
    }
    let loaded: unknown;
    try {
      loaded = await import(pathToFileURL(entry.path).href);
    } catch (err) {
      throw new RuntimeMissingError(
        `The llama.cpp runtime in ${this.dir} could not be loaded (${(err as Error).message}). ` +
          'Reinstall it with npx navi llamacpp install.',
      );
    }
    const mod = loaded as Partial<NodeLlamaCpp>;
    if (typeof mod.getLlama !== 'function' || typeof mod.LlamaChat !== 'function') {
      throw new RuntimeMissingError(
        `${RUNTIME_PACKAGE} ${entry.version} in ${this.dir} is not a version Navi can use. Reinstall it with npx navi llamacpp install.`,
      );
    }
    return mod as NodeLlamaCpp;
  }

  private async makeLlama(gpu: GpuSetting): Promise<Llama> {
    const mod = await this.load();
    const options = {
      build: 'never',
      skipDownload: true,
      progressLogs: false,
      // node-llama-cpp's default is at least 4 threads; on a machine with fewer cores they wait
      // on each other (an answer of the test model took 50 times longer on 2 cores).
      maxThreads: Math.max(1, availableParallelism()),
      logLevel: 'warn',
      logger: (level: LlamaLogLevel, message: string) => this.nativeLog(level, message),
    } as const;
    if (gpu === 'off') return mod.getLlama({ ...options, gpu: false });
    try {
      return await mod.getLlama({ ...options, gpu: 'auto' });
    } catch (err) {
      // A GPU was found but its binaries are not installed (the lean install has CPU ones only).
      this.logger?.info({ err: (err as Error).message }, 'llama.cpp: no usable GPU binaries; using the CPU');
      return mod.getLlama({ ...options, gpu: false });
    }
  }

  private nativeLog(level: LlamaLogLevel, message: string): void {
    const text = message.trim();
    if (!text || !this.logger) return;
    if (level === 'error' || level === 'fatal') this.logger.error(`llama.cpp: ${text}`);
    else if (level === 'warn') this.logger.warn(`llama.cpp: ${text}`);
    else this.logger.debug(`llama.cpp: ${text}`);
  }
}

/**
 * `navi model pull | list | rm | help`: the model files of the embedded llamacpp backend, in
 * NAVI_MODELS_DIR. Exit codes: 0 done, 1 failed (network, checksum, no such model), 2 the
 * command line is wrong.
 */
import type { Settings } from '../config/settings.js';
import { CATALOG } from '../llm/models/catalog.js';
import {
  DownloadError,
  type DownloadProgress,
  ModelDownloader,
  megabytes,
} from '../llm/models/downloader.js';
import { ModelStore, ModelStoreError } from '../llm/models/model-store.js';
import { SourceError, SourceResolver } from '../llm/models/source.js';
import type { CliIo } from './cli-io.js';

export function modelUsage(dir: string): string {
  return `Usage: navi model <command>

Commands:
  pull <model> [--sha256 <hex>]
               download a model: a recommended model's name (see navi model list),
               hf:org/repo/file.gguf (a file on Hugging Face) or an https:// URL of a .gguf
               file. --sha256 gives the checksum the file must have. A download that was
               stopped or cut resumes where it stopped.
  list         the models downloaded, and the recommended ones with what they are good at
  rm <name>    remove a downloaded model (its file name, or a recommended model's name)
  help         this text

Models are kept in ${dir} (NAVI_MODELS_DIR).`;
}

/** What tests replace: where `hf:` sources are fetched from, and the downloader's limits. */
export interface ModelCliDeps {
  resolver?: SourceResolver;
  downloader?: ModelDownloader;
}

class UsageError extends Error {}

/** Runs one `navi model` command; resolves to its exit code. */
export async function runModel(
  settings: Settings,
  args: string[],
  io: CliIo,
  deps: ModelCliDeps = {},
): Promise<number> {
  const [command, ...rest] = args;
  const dir = settings.NAVI_MODELS_DIR;
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const store = new ModelStore(dir);
  try {
    switch (command) {
      case undefined:
        io.stderr.write(`${modelUsage(dir)}\n`);
        return 2;
      case 'help':
      case '--help':
      case '-h':
        say(modelUsage(dir));
        return 0;
      case 'pull':
        return await pull(settings, rest, io, deps);
      case 'list':
      case 'ls':
        if (rest.length > 0) throw new UsageError('navi model list takes no arguments');
        await list(store, say);
        return 0;
      case 'rm':
      case 'remove': {
        if (rest.length !== 1 || (rest[0] as string).startsWith('-'))
          throw new UsageError('navi model rm takes one model name (see navi model list)');
        const name = await store.remove(rest[0] as string);
        say(`Removed ${name} from ${dir}.`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}; run navi model help`);
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`navi model: ${message}\n`);
    const usage =
      err instanceof UsageError ||
      err instanceof SourceError ||
      (err instanceof ModelStoreError && err.kind === 'invalid');
    return usage ? 2 : 1;
  }
}

function parsePull(args: string[]): { source: string; sha256?: string } {
  let source: string | undefined;
  let sha256: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--sha256') {
      const value = args[++i];
      if (value === undefined) throw new UsageError('--sha256 needs the checksum after it');
      sha256 = value;
    } else if (arg.startsWith('--sha256=')) {
      sha256 = arg.slice('--sha256='.length);
    } else if (arg.startsWith('-')) {
      throw new UsageError(`unknown option ${JSON.stringify(arg)}; navi model pull knows --sha256 only`);
    } else if (source === undefined) {
      source = arg;
    } else {
      throw new UsageError('navi model pull takes one model; pull them one after the other');
    }
  }
  if (source === undefined)
    throw new UsageError(
      'name the model to pull: a recommended model (navi model list), hf:org/repo/file.gguf or an https:// URL',
    );
  return { source, ...(sha256 !== undefined ? { sha256 } : {}) };
}

async function pull(settings: Settings, args: string[], io: CliIo, deps: ModelCliDeps): Promise<number> {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const { source, sha256 } = parsePull(args);
  const resolved = (deps.resolver ?? new SourceResolver()).resolve(source, sha256);
  const dir = settings.NAVI_MODELS_DIR;
  say(`Pulling ${resolved.fileName} from ${resolved.url}`);
  if (!resolved.sha256) say("No checksum is known for this file: the server's is used when it gives one.");

  // Ctrl-C stops the download and keeps what arrived, for the next pull to resume.
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  if (io.signal) io.signal.addEventListener('abort', onSigint, { once: true });
  else process.once('SIGINT', onSigint);
  const progress = progressLine(io.stdout);
  try {
    const result = await (deps.downloader ?? new ModelDownloader()).download({
      url: resolved.url,
      fileName: resolved.fileName,
      dir,
      ...(resolved.sha256 ? { sha256: resolved.sha256 } : {}),
      signal: stop.signal,
      onProgress: progress.update,
      onRetry: (problem, retry, retries) => {
        progress.end();
        say(`${problem}; trying again (${retry} of ${retries})…`);
      },
    });
    progress.end();
    if (result.alreadyPresent) {
      say(
        `${resolved.fileName} is in ${dir} already (${megabytes(result.bytes)}); nothing to do. ` +
          `navi model rm ${resolved.fileName} removes it.`,
      );
      return 0;
    }
    say(`Saved ${result.path} (${megabytes(result.bytes)}).`);
    say(
      result.verifiedWith === 'none'
        ? 'Its checksum could not be checked: none was known. Give one with --sha256 to be sure of the file.'
        : `Its SHA-256 ${result.sha256} matches the one ${result.verifiedWith === 'given' ? 'expected' : 'the server gave'}.`,
    );
    say(
      `To think with it: DEFAULT_LLM_BACKEND=llamacpp, and LLAMACPP_MODEL_PATH=${resolved.fileName} ` +
        '(or empty, for the first model of the folder).',
    );
    return 0;
  } catch (err) {
    progress.end();
    if (err instanceof DownloadError) {
      io.stderr.write(`navi model: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    io.signal?.removeEventListener('abort', onSigint);
    process.off('SIGINT', onSigint);
  }
}

/**
 * Progress for people: on a terminal one line rewritten in place (percent, MB, speed); piped
 * or logged, a plain line every tenth of the file (every 100 MB when its size is unknown).
 */
function progressLine(out: NodeJS.WritableStream): { update(p: DownloadProgress): void; end(): void } {
  const tty = (out as { isTTY?: boolean }).isTTY === true;
  const started = Date.now();
  let firstBytes: number | undefined;
  let lastDraw = 0;
  let lastStep = -1;
  let drawn = false;
  const text = ({ bytes, total }: DownloadProgress): string => {
    firstBytes ??= bytes;
    const seconds = (Date.now() - started) / 1000;
    const speed = seconds > 0.5 ? `  ${megabytes((bytes - firstBytes) / seconds)}/s` : '';
    if (total === null || total === 0) return `${megabytes(bytes)}${speed}`;
    const percent = Math.floor((bytes / total) * 100);
    return `${String(percent).padStart(3)}%  ${megabytes(bytes)} of ${megabytes(total)}${speed}`;
  };
  return {
    update(p) {
      if (tty) {
        const now = Date.now();
        if (now - lastDraw < 200 && p.bytes !== p.total) {
          firstBytes ??= p.bytes;
          return;
        }
        lastDraw = now;
        out.write(`\r\x1b[K${text(p)}`);
        drawn = true;
        return;
      }
      const step =
        p.total !== null && p.total > 0
          ? Math.floor((p.bytes / p.total) * 10)
          : Math.floor(p.bytes / 100_000_000);
      const line = text(p);
      if (step !== lastStep) {
        lastStep = step;
        out.write(`${line}\n`);
      }
    },
    end() {
      if (drawn) out.write('\n');
      drawn = false;
    },
  };
}

function size(bytes: number): string {
  return bytes >= 1_000_000_000 ? `${(bytes / 1_000_000_000).toFixed(1)} GB` : megabytes(bytes);
}

async function list(store: ModelStore, say: (line: string) => void): Promise<void> {
  const installed = await store.list();
  const partials = await store.partials();
  say(`Models in ${store.dir}:`);
  if (installed.length === 0)
    say(`  none yet: navi model pull ${CATALOG[0]?.alias} downloads the first recommended one`);
  for (const model of installed)
    say(`  ${model.name}  ${size(model.size_bytes)}${model.alias ? `  (${model.alias})` : ''}`);
  if (partials.length > 0) {
    say('');
    say('Stopped downloads (pull the same model again to resume):');
    for (const p of partials) say(`  ${p.name}  ${size(p.bytes)} so far`);
  }
  say('');
  say('Recommended models (navi model pull <name>):');
  const have = new Set(installed.map((m) => m.name));
  const width = Math.max(...CATALOG.map((m) => m.alias.length));
  for (const model of CATALOG) {
    const mark = have.has(model.fileName) ? '  [downloaded]' : '';
    say(
      `  ${model.alias.padEnd(width)}  ${size(model.sizeBytes).padStart(7)}  ${`${Math.round(model.contextLength / 1024)}k context`.padEnd(12)}  ${model.name}${mark}`,
    );
    say(`  ${' '.repeat(width)}  good at: ${model.goodAt.join(', ')}`);
  }
}

/**
 * `navi llamacpp install [--gpu] | status | help`: the llama.cpp runtime (node-llama-cpp) of the
 * embedded llamacpp backend, installed on demand into LLAMACPP_RUNTIME_DIR. Exit codes: 0 done
 * (status: installed), 1 failed (status: not installed), 2 the command line is wrong.
 */
import type { Settings } from '../config/settings.js';
import { installRuntime, platformPackage } from '../llm/llamacpp/install.js';
import { defaultModelName } from '../llm/llamacpp/model-file.js';
import {
  folderBytes,
  RUNTIME_PACKAGE,
  RUNTIME_VERSION,
  runtimeEntry,
} from '../llm/llamacpp/runtime-files.js';
import type { CliIo } from './cli-io.js';

export function llamacppUsage(dir: string): string {
  return `Usage: navi llamacpp <command>

Commands:
  install [--gpu]  install the llama.cpp runtime (${RUNTIME_PACKAGE} ${RUNTIME_VERSION}) with npm: the
                   CPU binaries of this machine, about 85 MB. --gpu adds the GPU binaries
                   (CUDA, Vulkan; about 725 MB). Running it again reinstalls.
  status           whether the runtime is installed, and the model the backend would use
  help             this text

The runtime goes to ${dir} (LLAMACPP_RUNTIME_DIR). Then download a model
(navi model pull <name>) and set DEFAULT_LLM_BACKEND=llamacpp.`;
}

export interface LlamacppCliDeps {
  /** The environment npm runs with (tests). */
  env?: NodeJS.ProcessEnv;
}

/** Runs one `navi llamacpp` command; resolves to its exit code. */
export async function runLlamacpp(
  settings: Settings,
  args: string[],
  io: CliIo,
  deps: LlamacppCliDeps = {},
): Promise<number> {
  const [command, ...rest] = args;
  const dir = settings.LLAMACPP_RUNTIME_DIR;
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const usageError = (message: string) => {
    io.stderr.write(`navi llamacpp: ${message}\n`);
    return 2;
  };
  switch (command) {
    case undefined:
      io.stderr.write(`${llamacppUsage(dir)}\n`);
      return 2;
    case 'help':
    case '--help':
    case '-h':
      say(llamacppUsage(dir));
      return 0;
    case 'status':
      if (rest.length > 0) return usageError('navi llamacpp status takes no arguments');
      return status(settings, say);
    case 'install': {
      const unknown = rest.filter((a) => a !== '--gpu');
      if (unknown.length > 0)
        return usageError(`unknown option ${JSON.stringify(unknown[0])} for install; it takes only --gpu`);
      return install(dir, rest.includes('--gpu'), io, deps);
    }
    default:
      return usageError(`unknown command ${JSON.stringify(command)}; run navi llamacpp help`);
  }
}

async function status(settings: Settings, say: (line: string) => void): Promise<number> {
  const dir = settings.LLAMACPP_RUNTIME_DIR;
  const entry = runtimeEntry(dir);
  const model = defaultModelName(settings.LLAMACPP_MODEL_PATH, settings.NAVI_MODELS_DIR);
  const modelLine = model
    ? `Model: ${model} (${settings.LLAMACPP_MODEL_PATH ? 'LLAMACPP_MODEL_PATH' : `the first in ${settings.NAVI_MODELS_DIR}`}).`
    : `Model: none yet in ${settings.NAVI_MODELS_DIR}; navi model pull <name> downloads one (navi model list).`;
  if (!entry) {
    say(`The llama.cpp runtime is not installed in ${dir} (LLAMACPP_RUNTIME_DIR).`);
    say('Install it with navi llamacpp install (about 85 MB).');
    say(modelLine);
    return 1;
  }
  say(`${RUNTIME_PACKAGE} ${entry.version} is installed in ${dir} (${megabytes(await folderBytes(dir))}).`);
  say(
    `Settings: LLAMACPP_GPU=${settings.LLAMACPP_GPU}, LLAMACPP_NUM_CTX=${settings.LLAMACPP_NUM_CTX}, LLAMACPP_THREADS=${settings.LLAMACPP_THREADS || 'default'}.`,
  );
  say(modelLine);
  return 0;
}

async function install(dir: string, gpu: boolean, io: CliIo, deps: LlamacppCliDeps): Promise<number> {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  if (io.signal) io.signal.addEventListener('abort', onSigint, { once: true });
  else process.once('SIGINT', onSigint);
  const what = gpu
    ? 'with every GPU binary it offers (about 725 MB)'
    : `with the CPU binaries for ${platformPackage(process.platform, process.arch) ?? `${process.platform}-${process.arch}`} (about 85 MB)`;
  say(`Installing ${RUNTIME_PACKAGE} ${RUNTIME_VERSION} ${what} into ${dir}…`);
  const started = Date.now();
  try {
    const result = await installRuntime(dir, {
      gpu,
      signal: stop.signal,
      onLine: (line) => say(`  ${line}`),
      ...(deps.env ? { env: deps.env } : {}),
    });
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    say(
      `Installed ${RUNTIME_PACKAGE} ${result.version} in ${dir} (${megabytes(await folderBytes(dir))}, ${seconds} s).`,
    );
    say('Next: navi model pull <name> for a model (navi model list), and DEFAULT_LLM_BACKEND=llamacpp.');
    return 0;
  } catch (err) {
    // npm's failures and the file system's (a folder Navi may not write) alike.
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`navi llamacpp: ${message}\n`);
    io.stderr.write(`Nothing was changed in ${dir}.\n`);
    return 1;
  } finally {
    io.signal?.removeEventListener('abort', onSigint);
    process.off('SIGINT', onSigint);
  }
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / 1024 / 1024)} MB`;
}

/**
 * The first run: Navi starts whether or not a model is reachable (the web client then shows
 * its setup screen), but a person starting it from a terminal should learn right there why it
 * cannot answer yet and the ways forward. Checked once, after listening, in the background.
 */
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import { CATALOG } from '../llm/models/catalog.js';
import type { BackendRegistry } from '../llm/registry.js';
import { within } from './llm-status.js';

const CHECK_TIMEOUT_MS = 3000;

/** Why the default backend cannot answer now, or undefined when it can. */
async function defaultBackendProblem(
  backends: BackendRegistry,
  timeoutMs: number,
): Promise<string | undefined> {
  let backend: ReturnType<BackendRegistry['default']>;
  try {
    backend = backends.default();
  } catch (err) {
    return (err as Error).message;
  }
  return within(
    timeoutMs,
    async (signal) => {
      const report = await backend.checkHealth(signal).catch((err: unknown) => ({
        ok: false,
        detail: `${backend.describe()}: ${(err as Error).message}`,
      }));
      return report.ok ? undefined : report.detail;
    },
    () => `${backend.describe()} did not answer within ${timeoutMs / 1000} s`,
  );
}

/** The one message for a person whose Navi has no model yet: what is wrong, and three ways on. */
export function firstRunMessage(problem: string, settings: Settings, url: string): string {
  const suggested = CATALOG[0]?.alias ?? 'qwen3-4b';
  return [
    `No language model is ready, so Navi cannot answer yet: ${problem}.`,
    'Three ways to give it one:',
    `  1. Ollama: start it (\`ollama serve\`) and run \`ollama pull ${settings.OLLAMA_DEFAULT_MODEL}\` (Navi looks at OLLAMA_HOST=${settings.OLLAMA_HOST}).`,
    '  2. An OpenAI-compatible server: set DEFAULT_LLM_BACKEND=openai, OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL.',
    `  3. A model inside Navi, no server: run \`navi llamacpp install\`, then \`navi model pull ${suggested}\` (\`navi model list\` shows the other recommended models), and set DEFAULT_LLM_BACKEND=llamacpp.`,
    `Or open ${url} in a browser: its setup screen does any of these for you.`,
  ].join('\n');
}

/**
 * Checks the default backend once and, when it cannot answer, logs the first-run message as one
 * warning. Never throws, and resolves within a few seconds whatever the backend does.
 */
export async function adviseWhenNoModel(
  services: { settings: Settings; llm?: { backends: BackendRegistry } },
  url: string,
  logger: Logger,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<void> {
  if (!services.llm) return;
  try {
    const problem = await defaultBackendProblem(services.llm.backends, timeoutMs);
    if (problem === undefined) logger.debug('first-run check: the default LLM backend is ready');
    else logger.warn(firstRunMessage(problem.replace(/\.$/, ''), services.settings, url));
  } catch (err) {
    logger.debug({ err }, 'the first-run check failed');
  }
}

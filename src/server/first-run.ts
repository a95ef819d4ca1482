/**
 * What `navi serve` says about its LLM once it listens: one log line naming the default
 * profile's backend and model and whether it answered. Ready, the line adds what the model can
 * do (a warning when it cannot call tools). Not ready, the line says why, and on a first run
 * the ways to give Navi a model; Navi serves either way (the web client then shows its setup
 * screen or a banner). Checked once, in the background: a slow or absent LLM server never holds
 * up serving, and resolves within a few seconds whatever the backend does.
 */
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import { CapabilityCache, capabilitySummary } from '../llm/capabilities.js';
import { CATALOG } from '../llm/models/catalog.js';
import type { LlmBackend, ModelCapabilities } from '../llm/types.js';
import { defaultModelChoice, NO_TOOLS_ADVICE } from './default-model.js';
import { within } from './llm-status.js';
import type { NaviServices } from './services.js';

const CHECK_TIMEOUT_MS = 3000;

/** The command that checks every part of Navi, as it runs from a checkout. */
export const DOCTOR_COMMAND = 'npx navi doctor';

/** What `backend`'s health check says (where it looked, and what it found), within `timeoutMs`. */
async function backendHealth(
  backend: LlmBackend,
  timeoutMs: number,
): Promise<{ ok: boolean; detail: string }> {
  return within(
    timeoutMs,
    (signal) =>
      backend.checkHealth(signal).catch((err: unknown) => ({
        ok: false,
        detail: `${backend.describe()}: ${(err as Error).message}`,
      })),
    () => ({ ok: false, detail: `${backend.describe()} did not answer within ${timeoutMs / 1000} s` }),
  );
}

/** The ways to give a Navi with no model one, after the line that says why it has none. */
export function firstRunMessage(settings: Settings, url: string): string {
  const suggested = CATALOG[0]?.alias ?? 'qwen3-4b';
  return [
    'No language model is ready, so Navi cannot answer yet. Three ways to give it one:',
    `  1. Ollama: start it (run ollama serve) and run ollama pull ${settings.OLLAMA_DEFAULT_MODEL} (Navi looks at OLLAMA_HOST=${settings.OLLAMA_HOST}).`,
    '  2. An OpenAI-compatible server: set DEFAULT_LLM_BACKEND=openai, OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL.',
    `  3. A model inside Navi, no server: run npx navi llamacpp install, then npx navi model pull ${suggested} (npx navi model list shows the other recommended models), and set DEFAULT_LLM_BACKEND=llamacpp.`,
    `Or open ${url} in a browser: its setup screen does any of these for you.`,
  ].join('\n');
}

/** "LLM: ollama gemma4:e2b — not ready: <why>. Run npx navi doctor …" */
export function notReadyLine(backend: string, model: string, problem: string): string {
  return `LLM: ${backend} ${model} — not ready: ${problem.replace(/[.\s]+$/, '')}. Run ${DOCTOR_COMMAND} to check every part of Navi.`;
}

/**
 * Checks the default profile's backend and model once and logs the one LLM line (with the
 * first-run ways forward when it is not ready). Never throws.
 */
export async function logLlmAtStart(
  services: Pick<NaviServices, 'settings' | 'profiles' | 'llm' | 'capabilities' | 'backendFor'>,
  url: string,
  logger: Logger,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<void> {
  try {
    const choice = defaultModelChoice(services);
    if ('problem' in choice) {
      const line = notReadyLine(choice.backendId, choice.model, choice.problem);
      logger.warn(`${line}\n${firstRunMessage(services.settings, url)}`);
      return;
    }
    const { backend, model } = choice;
    const health = await backendHealth(backend, timeoutMs);
    if (!health.ok) {
      const line = notReadyLine(backend.id, model, health.detail);
      logger.warn({ backend: backend.id }, `${line}\n${firstRunMessage(services.settings, url)}`);
      return;
    }
    const cache = services.capabilities ?? new CapabilityCache();
    const capabilities = await within<ModelCapabilities>(
      timeoutMs,
      (signal) => cache.get(backend, model, signal),
      () => ({ source: `not known yet: the model did not describe itself within ${timeoutMs / 1000} s` }),
    );
    const line = `LLM: ${backend.id} ${model} — ready (${health.detail}); ${capabilitySummary(capabilities)}`;
    if (capabilities.tools === false) logger.warn({ backend: backend.id }, `${line}; ${NO_TOOLS_ADVICE}`);
    else logger.info({ backend: backend.id }, line);
  } catch (err) {
    logger.debug({ err }, 'the start-up check of the LLM failed');
  }
}

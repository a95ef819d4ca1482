/**
 * What the default profile's model can do: `navi serve` logs it once it listens, `navi doctor`
 * prints it. Asked in the background at start-up rather than inside `createServices`, so a slow
 * or absent LLM server never holds up serving, and a Navi built for a test sends its LLM server
 * only the requests the test makes.
 */
import type { Logger } from 'pino';
import { CapabilityCache, describeCapabilities } from '../llm/capabilities.js';
import { resolveModel } from '../llm/model-choice.js';
import type { LlmBackend, ModelCapabilities } from '../llm/types.js';
import type { NaviServices } from './services.js';

export interface DefaultModelCapabilities {
  /** The backend's id, or the profile's `llm_backend` when that backend is not configured. */
  backend: string;
  model: string;
  capabilities: ModelCapabilities;
}

/** Never rejects: a backend that cannot be built or asked gives a `source` saying why. */
export async function defaultModelCapabilities(
  services: Pick<NaviServices, 'profiles' | 'llm' | 'capabilities' | 'backendFor'>,
  signal?: AbortSignal,
): Promise<DefaultModelCapabilities> {
  const profile = services.profiles.getDefault();
  let backend: LlmBackend;
  let model: string;
  try {
    if (services.llm) ({ backend, model } = resolveModel(services.llm.backends, profile));
    else {
      backend = services.backendFor(profile.id);
      model = profile.model ?? backend.defaultModel;
    }
  } catch (err) {
    return {
      backend: profile.llm_backend ?? 'default',
      model: profile.model ?? '(none)',
      capabilities: { source: `not asked: ${(err as Error).message}` },
    };
  }
  const cache = services.capabilities ?? new CapabilityCache();
  return { backend: backend.id, model, capabilities: await cache.get(backend, model, signal) };
}

/** Logs the default model's capabilities, warning when it cannot call tools. */
export async function logDefaultModel(
  services: Pick<NaviServices, 'profiles' | 'llm' | 'capabilities' | 'backendFor'>,
  logger: Logger,
): Promise<void> {
  const { backend, model, capabilities } = await defaultModelCapabilities(services);
  const line = describeCapabilities(model, capabilities);
  if (capabilities.tools === false) logger.warn({ backend }, `${line}; ${NO_TOOLS_ADVICE}`);
  else logger.info({ backend }, line);
}

/** What to do about a default model that cannot call tools. */
export const NO_TOOLS_ADVICE =
  'it cannot call tools, so Navi answers with it but cannot act (files, terminal, web): choose a model with tool support for the default profile';

/**
 * The default profile's backend and model, and what that model can do: `navi serve` logs it
 * once it listens (first-run.ts), `navi doctor` prints it. Asked in the background at start-up
 * rather than inside `createServices`, so a slow or absent LLM server never holds up serving,
 * and a Navi built for a test sends its LLM server only the requests the test makes.
 */
import { CapabilityCache } from '../llm/capabilities.js';
import { resolveModel } from '../llm/model-choice.js';
import type { LlmBackend, ModelCapabilities } from '../llm/types.js';
import type { NaviServices } from './services.js';

export interface DefaultModelCapabilities {
  /** The backend's id, or the profile's `llm_backend` when that backend is not configured. */
  backend: string;
  model: string;
  capabilities: ModelCapabilities;
}

/** The default profile's backend and model, or why there is none (a backend not configured). */
export function defaultModelChoice(
  services: Pick<NaviServices, 'profiles' | 'llm' | 'backendFor'>,
): { backend: LlmBackend; model: string } | { backendId: string; model: string; problem: string } {
  const profile = services.profiles.getDefault();
  try {
    if (services.llm) return resolveModel(services.llm.backends, profile);
    const backend = services.backendFor(profile.id);
    return { backend, model: profile.model ?? backend.defaultModel };
  } catch (err) {
    return {
      backendId: profile.llm_backend ?? 'default',
      model: profile.model ?? '(none)',
      problem: (err as Error).message,
    };
  }
}

/** Never rejects: a backend that cannot be built or asked gives a `source` saying why. */
export async function defaultModelCapabilities(
  services: Pick<NaviServices, 'profiles' | 'llm' | 'capabilities' | 'backendFor'>,
  signal?: AbortSignal,
): Promise<DefaultModelCapabilities> {
  const choice = defaultModelChoice(services);
  if ('problem' in choice)
    return {
      backend: choice.backendId,
      model: choice.model,
      capabilities: { source: `not asked: ${choice.problem}` },
    };
  const cache = services.capabilities ?? new CapabilityCache();
  return {
    backend: choice.backend.id,
    model: choice.model,
    capabilities: await cache.get(choice.backend, choice.model, signal),
  };
}

/** What to do about a default model that cannot call tools. */
export const NO_TOOLS_ADVICE =
  'it cannot call tools, so Navi answers with it but cannot act (files, terminal, web): choose a model with tool support for the default profile';

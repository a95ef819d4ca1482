/**
 * Which backend and model a run uses: the session's override when it has one, else its
 * profile's backend and model, else the default backend (DEFAULT_LLM_BACKEND, which the client
 * can change while Navi runs) and that backend's default model. The agent, the message intake
 * and the REST API all decide it here, so they never disagree.
 */
import type { Profile } from '../config/profiles.js';
import type { ModelChoice } from '../protocol/rest.js';
import type { BackendRegistry } from './registry.js';
import type { LlmBackend } from './types.js';

export interface ResolvedModel {
  backend: LlmBackend;
  model: string;
}

/** Throws, like `BackendRegistry.get`, with a sentence saying what to configure. */
export function resolveModel(
  registry: BackendRegistry,
  profile: Pick<Profile, 'llm_backend' | 'model'>,
  override?: ModelChoice | null,
): ResolvedModel {
  if (override) return { backend: registry.get(override.backend), model: override.model };
  const backend = registry.get(profile.llm_backend ?? registry.defaultId());
  return { backend, model: profile.model ?? backend.defaultModel };
}

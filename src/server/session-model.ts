/**
 * The model a session's next run uses (its override, else its profile's, else the default
 * backend's; `resolveModel` decides) and whether that model can see images, so that a message
 * with images for a text-only model is refused before anything is stored.
 */
import type { Profile } from '../config/profiles.js';
import { effectiveContext } from '../llm/capabilities.js';
import { type ResolvedModel, resolveModel } from '../llm/model-choice.js';
import type { BackendRegistry } from '../llm/registry.js';
import type { LlmBackend, ModelCapabilities } from '../llm/types.js';
import type { SessionRecord } from '../store/types.js';
import { ApiError } from './errors.js';
import { within } from './llm-status.js';
import type { NaviServices } from './services.js';

/** How long the intake waits to learn whether the model sees images before letting it try. */
const PROBE_TIMEOUT_MS = 5000;

export type CapabilityLookup = (
  backend: LlmBackend,
  model: string,
  signal: AbortSignal,
) => Promise<ModelCapabilities | undefined>;

/** The session's backend and model, or undefined when no backend can be built for it. */
export function sessionModel(
  backends: BackendRegistry,
  profile: Pick<Profile, 'llm_backend' | 'model'>,
  session: Pick<SessionRecord, 'model_override'>,
): ResolvedModel | undefined {
  try {
    return resolveModel(backends, profile, session.model_override);
  } catch {
    // The run itself reports the missing backend, with what to configure.
    return undefined;
  }
}

/**
 * The context window the session's runs use, for `GET /sessions/{id}`: its backend's, clamped to
 * what the model takes once that is known (as each LLM call clamps it, so the figure agrees with
 * `stream_end` and `stream_stopped`). 0 when no backend can be built for it.
 */
export function sessionContextWindow(
  services: Pick<NaviServices, 'profiles' | 'llm' | 'capabilities' | 'backendFor'>,
  session: Pick<SessionRecord, 'profile_id' | 'model_override'>,
): number {
  try {
    const profile = services.profiles.get(session.profile_id) ?? services.profiles.getDefault();
    const chosen = services.llm && sessionModel(services.llm.backends, profile, session);
    const backend = chosen ? chosen.backend : services.backendFor(session.profile_id);
    // Only what is already known: reading a session never waits for a model's server.
    const caps = chosen && services.capabilities?.peek(chosen.backend, chosen.model);
    return caps ? effectiveContext(backend, caps) : backend.contextWindow;
  } catch {
    // A profile whose backend is not configured: the meter shows the count alone.
    return 0;
  }
}

/**
 * Refuses (IMAGES_UNSUPPORTED) when the session's model reports `vision: false`. A model whose
 * backend cannot tell, or does not answer in time, is let try: the model says so itself.
 */
export async function refuseImagesForTextModel(
  services: Pick<NaviServices, 'sessions' | 'profiles' | 'llm' | 'capabilities'>,
  sessionId: string,
): Promise<void> {
  const cache = services.capabilities;
  // The cache answers at once for a model asked before; without one, the backend is asked.
  const capabilities: CapabilityLookup = cache
    ? (backend, model, signal) => cache.get(backend, model, signal)
    : (backend, model, signal) => backend.probe?.(model, signal) ?? Promise.resolve(undefined);
  const backends = services.llm?.backends;
  const session = await services.sessions.get(sessionId);
  if (!backends || !session) return;
  const profile = services.profiles.get(session.profile_id) ?? services.profiles.getDefault();
  const chosen = sessionModel(backends, profile, session);
  if (!chosen) return;
  const caps = await within(
    PROBE_TIMEOUT_MS,
    (signal) => capabilities(chosen.backend, chosen.model, signal).catch(() => undefined),
    () => undefined,
  );
  if (caps?.vision === false) {
    throw new ApiError(
      'IMAGES_UNSUPPORTED',
      `${chosen.model} (${chosen.backend.id}) reads text only (${caps.source})`,
    );
  }
}

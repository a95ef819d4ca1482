/**
 * /agents: the profiles and tools the agent can use. `GET /agents/tools` keeps its array shape
 * (docs/protocol.md#rest); with `?profile_id=` each tool carries that profile's `policy`. Tools
 * that failed to load are listed at `GET /agents/tools/errors`.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Profile } from '../../config/profiles.js';
import type { ProfileSummary, ToolLoadErrorInfo, ToolSummary } from '../../protocol/rest.js';
import { checkPolicy, policyFor } from '../../tools/policy.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';

export const agentRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  // A profile naming a backend that is not configured still gets its tool list: the run would
  // fail on the backend, not on the policy, so its own `llm_backend` section is the one shown.
  const backendIdOf = (profile: Profile): string | undefined => {
    try {
      return services.backendFor(profile.id).id;
    } catch {
      return profile.llm_backend ?? undefined;
    }
  };

  app.get(
    '/agents/profiles',
    async (): Promise<ProfileSummary[]> =>
      services.profiles.list().map((p) => ({
        id: p.id,
        name: p.name,
        description: p.description,
        model: p.model ?? null,
        llm_backend: p.llm_backend ?? null,
        temperature: p.temperature,
        max_iterations: p.max_iterations,
        planning_enabled: p.planning_enabled,
        enabled_tools: p.enabled_tools,
        scratchpad_sections: p.scratchpad_sections,
      })),
  );

  // With `profile_id`, each tool also says what that profile's policy and hooks make of it, as a
  // run on the profile's own backend sees them (its `backends` section applied).
  app.get<{ Querystring: { profile_id?: string } }>(
    '/agents/tools',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: { profile_id: { type: 'string', minLength: 1, maxLength: 200 } },
          additionalProperties: false,
        },
      },
    },
    async (request): Promise<ToolSummary[]> => {
      const profileId = request.query.profile_id;
      const profile = profileId === undefined ? undefined : services.profiles.get(profileId);
      if (profileId !== undefined && !profile) {
        const known = services.profiles.list().map((p) => p.id);
        throw new ApiError(
          'UNKNOWN_PROFILE',
          `${JSON.stringify(profileId.slice(0, 64))}; the profiles are ${known.join(', ')} (GET /agents/profiles)`,
        );
      }
      const onBackend = profile ? policyFor(profile, backendIdOf(profile)) : undefined;
      return services.tools.list().map((entry) => {
        const { tool, source, server } = entry;
        const summary: ToolSummary = {
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
          source,
        };
        if (server !== undefined) summary.server = server;
        if (onBackend) {
          const decision = checkPolicy(onBackend, entry);
          summary.policy = {
            allowed: decision.allowed,
            ...(decision.allowed ? {} : { reason: decision.rule }),
            confirm: services.executor.confirmationFor(tool.name, onBackend) ?? 'never',
          };
        }
        return summary;
      });
    },
  );

  app.get(
    '/agents/tools/errors',
    async (): Promise<ToolLoadErrorInfo[]> =>
      services.tools.errors().map((e) => ({ origin: e.origin, source: e.source, error: e.error })),
  );

  // Not a consent action: the agent's own reload_tools does the same, and what may run is decided
  // when a file lands in TOOLS_DIR (write_tool asks the person first).
  app.post('/agents/tools/reload', async () => services.reloadTools());
};

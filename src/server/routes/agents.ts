/**
 * /agents: the profiles and tools the agent can use. `GET /agents/tools` keeps its array shape
 * (docs/protocol.md#rest); tools that failed to load are listed at `GET /agents/tools/errors`.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ProfileSummary, ToolSummary } from '../../protocol/rest.js';
import type { ServerContext } from '../context.js';

export const agentRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
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

  app.get(
    '/agents/tools',
    async (): Promise<ToolSummary[]> =>
      services.tools.list().map(({ tool, source, server }) => {
        const summary: ToolSummary = {
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
          source,
        };
        if (server !== undefined) summary.server = server;
        return summary;
      }),
  );

  app.get('/agents/tools/errors', async () =>
    services.tools.errors().map((e) => ({ origin: e.origin, source: e.source, error: e.error })),
  );

  // Not a consent action: the agent's own reload_tools does the same, and what may run is decided
  // when a file lands in TOOLS_DIR (write_tool asks the person first).
  app.post('/agents/tools/reload', async () => services.reloadTools());
};

/**
 * The llama.cpp runtime of the embedded llamacpp backend, for the setup screen: its state
 * (`GET /llm/runtime`) and installing it (`POST /llm/runtime`, 202; the install runs in the
 * background and the client polls the state, with npm's last lines of output as progress).
 * See docs/local-models.md.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { LlamacppRuntimeStatus } from '../../protocol/llm.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';

const installBody = {
  type: ['object', 'null'],
  properties: { gpu: { type: 'boolean' } },
  additionalProperties: false,
} as const;

export const llamacppRuntimeRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  const runtime = () => {
    if (!services.llamacppRuntime)
      throw new ApiError(
        'NOT_FOUND',
        'this server does not manage a llama.cpp runtime; run npx navi llamacpp install',
      );
    return services.llamacppRuntime;
  };

  app.get('/llm/runtime', async (): Promise<LlamacppRuntimeStatus> => runtime().status());

  app.post<{ Body: { gpu?: boolean } | null }>(
    '/llm/runtime',
    // Installing a package makes Navi load new code: the person's decision (see consent.ts).
    { bodyLimit: 1024, schema: { body: installBody }, config: { consent: true } },
    async (request, reply): Promise<LlamacppRuntimeStatus> => {
      const r = runtime();
      if (r.isInstalling())
        throw new ApiError('RUNTIME_INSTALLING', 'wait for it to end (GET /llm/runtime shows its progress)');
      const status = r.startInstall({ gpu: request.body?.gpu === true });
      reply.code(202);
      return status;
    },
  );
};

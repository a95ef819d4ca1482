/** GET /health: liveness, public (no token) so monitors and `navi doctor` can call it. */
import type { FastifyPluginAsync } from 'fastify';

export const healthRoutes: FastifyPluginAsync = async (app) => {
  app.get(
    '/health',
    {
      config: { public: true },
      schema: {
        response: {
          200: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] },
        },
      },
    },
    async () => ({ status: 'ok' }),
  );
};

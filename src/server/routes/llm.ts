/**
 * /llm: the backends' state for the setup screen (`GET /llm/status`), the models of every
 * backend for the model picker (`GET /llm/models`), the LLM settings the client may change
 * while Navi runs (`GET`/`PUT /llm/settings`) and trying a server before saving it
 * (`POST /llm/test`). See docs/local-models.md.
 */
import type { FastifyPluginAsync } from 'fastify';
import type {
  ConnectionTestRequest,
  ConnectionTestResult,
  LlmModelList,
  LlmSettingsView,
  LlmStatus,
} from '../../protocol/llm.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import { normaliseBaseUrl, testConnection } from '../llm-connection-test.js';
import type { LlmSettingsChange } from '../llm-settings.js';
import { type LlmStatusDeps, llmModels, llmStatus } from '../llm-status.js';

const settingValue = { type: ['string', 'null'], maxLength: 4096 } as const;

const settingsBody = {
  type: 'object',
  properties: {
    DEFAULT_LLM_BACKEND: settingValue,
    OLLAMA_HOST: settingValue,
    OLLAMA_DEFAULT_MODEL: settingValue,
    OPENAI_BASE_URL: settingValue,
    OPENAI_API_KEY: settingValue,
    OPENAI_MODEL: settingValue,
    LLAMACPP_MODEL_PATH: settingValue,
  },
  additionalProperties: false,
} as const;

const testBody = {
  type: 'object',
  properties: {
    backend: { type: 'string', enum: ['ollama', 'openai'] },
    base_url: { type: 'string', minLength: 1, maxLength: 2048 },
    api_key: { type: 'string', maxLength: 4096 },
    model: { type: 'string', maxLength: 200 },
  },
  required: ['backend', 'base_url'],
  additionalProperties: false,
} as const;

export const llmRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  const llm = services.llm;
  if (!llm) return;
  const cache = services.capabilities;
  const statusDeps: LlmStatusDeps = {
    backends: llm.backends,
    ollamaHost: () => llm.settings.settings().OLLAMA_HOST,
    ...(cache && { capabilities: (backend, model, signal) => cache.get(backend, model, signal) }),
  };

  app.get('/llm/status', async (): Promise<LlmStatus> => llmStatus(statusDeps));

  app.get('/llm/models', async (): Promise<LlmModelList> => llmModels(statusDeps));

  app.get('/llm/settings', async (): Promise<LlmSettingsView> => llm.settings.view());

  app.put<{ Body: LlmSettingsChange }>(
    '/llm/settings',
    // Where the conversations go is the person's decision, not something the agent's own
    // commands on this machine may change (see consent.ts); the same for the routes below.
    { bodyLimit: 64 * 1024, schema: { body: settingsBody }, config: { consent: true } },
    async (request): Promise<LlmSettingsView> => llm.settings.update(request.body),
  );

  app.post<{ Body: ConnectionTestRequest }>(
    '/llm/test',
    // It may send the saved API key, and it reaches any address a client names.
    { bodyLimit: 64 * 1024, schema: { body: testBody }, config: { consent: true } },
    async (request): Promise<ConnectionTestResult> => {
      const body = request.body;
      const base = normaliseBaseUrl(body.base_url);
      if (!base) {
        throw new ApiError(
          'BAD_REQUEST',
          `base_url ${JSON.stringify(body.base_url.slice(0, 100))} is not an http:// or https:// URL (without user:password@); give the server's address, e.g. http://localhost:11434`,
        );
      }
      // The saved key goes only to the server it was saved for: the client never sees it, and
      // a test of another address must not carry it there.
      const current = llm.settings.settings();
      const savedKey = base === normaliseBaseUrl(current.OPENAI_BASE_URL) ? current.OPENAI_API_KEY : '';
      // As long as a backend waits for a server's first answer, so a hang ends the same way.
      return testConnection(body, base, savedKey, { timeoutMs: current.LLM_CONNECT_TIMEOUT_MS });
    },
  );
};

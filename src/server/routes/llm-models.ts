/**
 * Model files for the embedded llamacpp backend, for the setup screen: what is recommended and
 * downloaded (`GET /llm/local`), downloads started, polled and cancelled (`/llm/downloads`), and
 * removing a downloaded model (`DELETE /llm/local/:name`).
 */
import type { FastifyPluginAsync } from 'fastify';
import { CATALOG, toRecommended } from '../../llm/models/catalog.js';
import { DownloadsError } from '../../llm/models/downloads.js';
import { ModelStore, ModelStoreError } from '../../llm/models/model-store.js';
import { MAX_SOURCE_LENGTH } from '../../llm/models/source.js';
import type { LlamacppRuntimeStatus, LocalModelsView, ModelDownload } from '../../protocol/llm.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';

export interface LlmModelRoutesOptions extends ServerContext {
  /** The llama.cpp runtime's state, for `GET /llm/local`. */
  runtimeStatus(): LlamacppRuntimeStatus | Promise<LlamacppRuntimeStatus>;
}

const downloadParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 64 } },
  required: ['id'],
} as const;

const modelParams = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 255 } },
  required: ['name'],
} as const;

const downloadBody = {
  type: 'object',
  properties: {
    source: { type: 'string', minLength: 1, maxLength: MAX_SOURCE_LENGTH },
    sha256: { type: 'string', pattern: '^[0-9A-Fa-f]{64}$' },
  },
  required: ['source'],
  additionalProperties: false,
} as const;

export const llmModelRoutes: FastifyPluginAsync<LlmModelRoutesOptions> = async (
  app,
  { services, runtimeStatus },
) => {
  const store = new ModelStore(services.settings.NAVI_MODELS_DIR);
  const downloads = () => {
    if (!services.modelDownloads)
      throw new ApiError(
        'NOT_FOUND',
        'this server does not download models; run npx navi model pull instead',
      );
    return services.modelDownloads;
  };

  app.get('/llm/local', async (): Promise<LocalModelsView> => {
    const [installed, runtime] = await Promise.all([store.list(), runtimeStatus()]);
    return {
      recommended: CATALOG.map(toRecommended),
      installed,
      downloads: services.modelDownloads?.list() ?? [],
      runtime,
    };
  });

  app.post<{ Body: { source: string; sha256?: string } }>(
    '/llm/downloads',
    // Downloading gigabytes and deleting models are the person's decisions (see consent.ts).
    { schema: { body: downloadBody }, config: { consent: true } },
    async (request, reply): Promise<ModelDownload> => {
      try {
        const started = downloads().start(request.body);
        reply.code(202);
        return started;
      } catch (err) {
        if (err instanceof DownloadsError)
          throw new ApiError(err.kind === 'active' ? 'DOWNLOAD_ACTIVE' : 'BAD_REQUEST', err.message);
        throw err;
      }
    },
  );

  app.get<{ Params: { id: string } }>(
    '/llm/downloads/:id',
    { schema: { params: downloadParams } },
    async (request): Promise<ModelDownload> => {
      const found = downloads().get(request.params.id);
      if (!found) throw new ApiError('DOWNLOAD_NOT_FOUND');
      return found;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/llm/downloads/:id',
    { schema: { params: downloadParams }, config: { consent: true } },
    async (request): Promise<ModelDownload> => {
      const cancelled = await downloads().cancel(request.params.id);
      if (!cancelled) throw new ApiError('DOWNLOAD_NOT_FOUND');
      return cancelled;
    },
  );

  app.delete<{ Params: { name: string } }>(
    '/llm/local/:name',
    { schema: { params: modelParams }, config: { consent: true } },
    async (request, reply) => {
      try {
        const name = store.fileNameOf(request.params.name);
        if (services.modelDownloads?.isDownloading(name))
          throw new ApiError('DOWNLOAD_ACTIVE', `${name} is being downloaded; cancel the download first`);
        await store.remove(name);
      } catch (err) {
        if (err instanceof ModelStoreError)
          throw err.kind === 'invalid'
            ? new ApiError('INVALID_FILE_NAME', err.message)
            : new ApiError('MODEL_NOT_FOUND', err.message);
        throw err;
      }
      reply.code(204);
    },
  );
};

/**
 * The runtime's status while Navi has no way to ask the llama.cpp runtime: not installed, and
 * why nothing more is known.
 */
export function runtimeStatusUnknown(): LlamacppRuntimeStatus {
  return {
    installed: false,
    version: null,
    installing: false,
    log: [],
    error: 'this build of Navi cannot check the llama.cpp runtime yet',
  };
}

/**
 * Session files: upload (`POST /sessions/:id/files`, multipart field `file`) and download
 * (`GET /sessions/:id/files/:name`, where `share_file` links point). A download is looked up by
 * its recorded name, never by joining the URL onto a folder, so `..` in a name finds nothing.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FastifyPluginAsync } from 'fastify';
import type { UploadedFile } from '../../protocol/rest.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import { downloadHeaders } from '../file-names.js';
import { requireSession } from '../session-lookup.js';

export const fileRoutes: FastifyPluginAsync<ServerContext> = async (app, { services, files }) => {
  app.post<{ Params: { id: string } }>(
    '/sessions/:id/files',
    async (request, reply): Promise<UploadedFile> => {
      const session = await requireSession(services.sessions, request.params.id);
      if (!request.isMultipart()) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'send multipart/form-data');
      const part = await request.file({ limits: { fileSize: files.maxBytes, files: 1 } });
      if (!part) throw new ApiError('MISSING_FILE');
      if (part.fieldname !== 'file') {
        part.file.resume();
        throw new ApiError('MISSING_FILE');
      }
      const record = await files.save(session.id, part.filename, part.file, part.mimetype);
      reply.code(201);
      return { name: record.name, path: record.path, size: record.size, expires_at: record.expires_at };
    },
  );

  app.get<{ Params: { id: string; name: string } }>('/sessions/:id/files/:name', async (request, reply) => {
    const session = await requireSession(services.sessions, request.params.id);
    const record = await files.find(session.id, request.params.name);
    if (!record) throw new ApiError('FILE_NOT_FOUND');
    const size = await stat(record.path).then(
      (s) => (s.isFile() ? s.size : undefined),
      () => undefined,
    );
    if (size === undefined) throw new ApiError('FILE_NOT_FOUND');
    reply.headers({ ...downloadHeaders(record.name, record.mime_type), 'content-length': String(size) });
    return reply.send(createReadStream(record.path));
  });
};

/**
 * Session files: upload (`POST /sessions/:id/files`, multipart field `file`) and download
 * (`GET /sessions/:id/files/:name`, where `share_file` links point). A download is looked up by
 * its recorded name, never by joining the URL onto a folder, so `..` in a name finds nothing.
 * An upload is kept only when its whole multipart body arrived well-formed (upload-part.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { UploadedFile } from '../../protocol/rest.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import { downloadHeaders } from '../file-names.js';
import { requireSession } from '../session-lookup.js';
import { readUploadPart } from '../upload-part.js';

export const fileRoutes: FastifyPluginAsync<ServerContext> = async (app, { services, files }) => {
  app.post<{ Params: { id: string } }>(
    '/sessions/:id/files',
    async (request, reply): Promise<UploadedFile> => {
      const session = await requireSession(services.sessions, request.params.id);
      if (!request.isMultipart()) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'send multipart/form-data');
      const part = await readUploadPart(request, files.maxBytes);
      if (!part) throw new ApiError('MISSING_FILE');
      if (part.fieldname !== 'file') {
        part.content.resume();
        throw new ApiError('MISSING_FILE');
      }
      // A body that turns out cut short or malformed fails `content`, so nothing is kept.
      const record = await files.save(session.id, part.filename, part.content, part.mimetype);
      reply.code(201);
      return { name: record.name, path: record.path, size: record.size, expires_at: record.expires_at };
    },
  );

  app.get<{ Params: { id: string; name: string } }>('/sessions/:id/files/:name', async (request, reply) => {
    const session = await requireSession(services.sessions, request.params.id);
    const record = await files.find(session.id, request.params.name);
    if (!record) throw new ApiError('FILE_NOT_FOUND');
    // Opened through the session folder without following links, so a folder swapped for a
    // symbolic link after the upload cannot make a download read from elsewhere.
    const opened = await files.open(record);
    if (!opened) throw new ApiError('FILE_NOT_FOUND');
    reply.headers({
      ...downloadHeaders(record.name, record.mime_type),
      'content-length': String(opened.size),
    });
    return reply.send(opened.handle.createReadStream());
  });
};

/**
 * Taking a session out of Navi and back in (docs/protocol.md#export-and-import):
 * `GET /sessions/{id}/export?format=json|markdown` downloads it, and `POST /sessions/import`
 * makes a new session from a JSON export.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { SessionExport, SessionImportResult } from '../../protocol/rest.js';
import { sessionFileUrl } from '../../tools/session-file-writer.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import { displayPages, exportJson, exportMarkdown } from '../session-export.js';
import { parseExport, planImport } from '../session-import.js';
import { requireSession } from '../session-lookup.js';
import { exportFileName } from '../session-markdown.js';

const FORMATS = ['json', 'markdown'] as const;
type Format = (typeof FORMATS)[number];

/** `attachment` with the name twice: plain ASCII for old clients, UTF-8 for the rest. */
function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

function listed(names: string[]): string {
  const shown = names.slice(0, 10).join(', ');
  return names.length > 10 ? `${shown} and ${names.length - 10} more` : shown;
}

export const sessionTransferRoutes: FastifyPluginAsync<ServerContext> = async (app, { services, files }) => {
  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>(
    '/sessions/:id/export',
    {
      schema: {
        params: {
          type: 'object',
          properties: { id: { type: 'string', maxLength: 100 } },
          required: ['id'],
        },
      },
    },
    async (request, reply) => {
      const format = request.query.format ?? 'json';
      if (typeof format !== 'string' || !FORMATS.includes(format as Format)) {
        throw new ApiError('BAD_REQUEST', 'format must be json or markdown');
      }
      const session = await requireSession(services.sessions, request.params.id);
      // Everything is read before the first byte goes out, so a failing read is still an error
      // answer; only the encoding is streamed (docs/performance.md#long-sessions).
      const pages = await displayPages(services.sessions, session.id);
      const now = new Date();
      reply.header('cache-control', 'private, no-store');
      reply.header('x-content-type-options', 'nosniff');
      if (format === 'markdown') {
        const profileName = services.profiles.get(session.profile_id)?.name ?? session.profile_id;
        reply.header('content-type', 'text/markdown; charset=utf-8');
        reply.header('content-disposition', attachment(exportFileName(session.title, 'md')));
        return reply.send(Readable.from(exportMarkdown(session, pages, profileName, now)));
      }
      const head: Omit<SessionExport, 'messages' | 'context'> = {
        navi_export: 1,
        exported_at: now.toISOString(),
        session: {
          title: session.title,
          profile_id: session.profile_id,
          created_at: session.created_at,
          pinned: session.pinned,
        },
      };
      const context = await services.sessions.getContext(session.id);
      reply.header('content-type', 'application/json; charset=utf-8');
      reply.header('content-disposition', attachment(exportFileName(session.title, 'json')));
      return reply.send(Readable.from(exportJson(head, pages, context)));
    },
  );

  // The body is checked by parseExport (zod) rather than a route schema, so a bad file gets
  // INVALID_IMPORT naming the field; its size is bounded by the app's body limit (413).
  app.post<{ Body: unknown }>('/sessions/import', async (request, reply): Promise<SessionImportResult> => {
    const data = parseExport(request.body);
    const warnings: string[] = [];
    let profileId = data.session.profile_id;
    if (!services.profiles.has(profileId)) {
      const fallback = services.profiles.getDefault().id;
      warnings.push(
        `The profile "${profileId}" does not exist here, so the conversation uses "${fallback}" instead.`,
      );
      profileId = fallback;
    }
    const id = randomUUID();
    const plan = planImport(data, {
      filesDir: files.sessionDir(id),
      fileUrl: (name) => sessionFileUrl(id, name),
    });
    const session = await services.sessions.create({
      id,
      profile_id: profileId,
      title: data.session.title.trim(),
      created_at: data.session.created_at,
    });
    try {
      await services.sessions.append(id, plan.entries);
      // Active now, so it comes first in the list, where the person looks for it.
      await services.sessions.update(id, {
        pinned: data.session.pinned ?? false,
        last_active: new Date().toISOString(),
      });
    } catch (err) {
      await services.sessions.delete(id);
      throw err;
    }
    if (plan.missingFiles.length > 0) {
      const [is, it] = plan.missingFiles.length === 1 ? ['is', 'it'] : ['are', 'them'];
      warnings.push(
        `An export holds no files, so ${listed(plan.missingFiles)} ${is} named in the conversation but not there; upload ${it} again if Navi should read ${it}.`,
      );
    }
    reply.code(201);
    return { session_id: id, profile_id: profileId, created_at: session.created_at, warnings };
  });
};

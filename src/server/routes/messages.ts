/**
 * Running the agent over REST: send a message (or regenerate the last answer, or edit a message)
 * and wait for the whole run, stop a run, answer a tool confirmation. WebSocket clients watching
 * the session see a REST-started run live.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ServerEvent } from '../../protocol/events.js';
import type { MessageReply } from '../../protocol/rest.js';
import type { AgentRun } from '../agent-run.js';
import type { ServerContext } from '../context.js';
import { ApiError, type ErrorCode } from '../errors.js';
import { FormSubmissions } from '../form-submissions.js';
import { type RewindDeps, startEdit, startRegenerate } from '../rewind-input.js';
import { type ClientMessage, userMessageInput } from '../run-input.js';
import { requireSession } from '../session-lookup.js';
import { refuseImagesForTextModel } from '../session-model.js';

const idParams = {
  type: 'object',
  properties: { id: { type: 'string', maxLength: 100 } },
  required: ['id'],
} as const;

const messageBody = {
  type: 'object',
  properties: {
    content: { type: 'string', maxLength: 1_000_000 },
    images: { type: 'array', maxItems: 16, items: { type: 'string', minLength: 1 } },
    files: {
      type: 'array',
      maxItems: 32,
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 255 },
          path: { type: 'string', minLength: 1, maxLength: 4096 },
        },
        required: ['name', 'path'],
        additionalProperties: false,
      },
    },
  },
  required: ['content'],
  additionalProperties: false,
} as const;

/** The reply of a finished run, built from its events. */
export function replyFromEvents(events: readonly ServerEvent[]): MessageReply {
  const reply: MessageReply = { content: '', stopped: false, tool_calls: [] };
  for (const event of events) {
    if (event.type === 'tool_call' && !event.is_subagent) {
      const { call_id, tool, args, result, success } = event;
      reply.tool_calls.push({ call_id, tool, args, result, success });
    } else if (event.type === 'stream_end') reply.content = event.content;
    else if (event.type === 'stream_stopped') {
      reply.content = event.content;
      reply.stopped = true;
    }
  }
  return reply;
}

/**
 * Why a run may refuse its request before it stores anything: the session was deleted, or the
 * message a regenerate or an edit names went or was summarised after the request was checked
 * (compression may finish in between). Each is the client's to fix, as the same refusal before
 * the run is, so the REST answer is its 4xx, not a failed run.
 */
const REFUSED_AT_START = new Set<ErrorCode>([
  'SESSION_NOT_FOUND',
  'MESSAGE_NOT_FOUND',
  'MESSAGE_NOT_EDITABLE',
]);

export const messageRoutes: FastifyPluginAsync<ServerContext> = async (app, { services, runs, files }) => {
  /**
   * Waits for the run's end: the reply; the run's own refusal of the request when it refused it
   * before it began; else RUN_FAILED with the run's error.
   */
  const replyOf = async (run: AgentRun): Promise<MessageReply> => {
    const terminal = await run.done;
    if (terminal.type !== 'error') return replyFromEvents(run.history());
    if (terminal.code && REFUSED_AT_START.has(terminal.code)) throw new ApiError(terminal.code);
    throw new ApiError('RUN_FAILED', terminal.message);
  };
  const refuseImages = (id: string) => refuseImagesForTextModel(services, id);
  const forms = new FormSubmissions(services.kv);
  const rewinds: RewindDeps = { runs, sessions: services.sessions, forms, log: services.logger };

  app.post<{ Params: { id: string }; Body: ClientMessage }>(
    '/sessions/:id/messages',
    { schema: { params: idParams, body: messageBody } },
    async (request): Promise<MessageReply> => {
      const session = await requireSession(services.sessions, request.params.id);
      if (await runs.busy(session.id)) throw new ApiError('RUN_ACTIVE');
      const input = await userMessageInput(session.id, request.body, files, refuseImages);
      return replyOf(await runs.start(session.id, input));
    },
  );

  app.post<{ Params: { id: string } }>(
    '/sessions/:id/regenerate',
    { schema: { params: idParams } },
    async (request): Promise<MessageReply> => {
      const session = await requireSession(services.sessions, request.params.id);
      if (await runs.busy(session.id)) throw new ApiError('RUN_ACTIVE');
      return replyOf(await startRegenerate(rewinds, session.id));
    },
  );

  app.post<{ Params: { id: string; mid: string }; Body: ClientMessage }>(
    '/sessions/:id/messages/:mid/edit',
    {
      schema: {
        params: {
          type: 'object',
          properties: { id: { type: 'string', maxLength: 100 }, mid: { type: 'string', maxLength: 200 } },
          required: ['id', 'mid'],
        },
        body: messageBody,
      },
    },
    async (request): Promise<MessageReply> => {
      const session = await requireSession(services.sessions, request.params.id);
      if (await runs.busy(session.id)) throw new ApiError('RUN_ACTIVE');
      return replyOf(
        await startEdit({ ...rewinds, files, refuseImages }, session.id, request.params.mid, request.body),
      );
    },
  );

  app.post<{ Params: { id: string } }>(
    '/sessions/:id/stop',
    { schema: { params: idParams } },
    async (request) => {
      const session = await requireSession(services.sessions, request.params.id);
      return { stopped: await runs.stop(session.id) };
    },
  );

  app.post<{ Params: { id: string }; Body: { call_id: string; approved: boolean } }>(
    '/sessions/:id/confirm',
    {
      config: { consent: true },
      schema: {
        params: idParams,
        body: {
          type: 'object',
          properties: {
            call_id: { type: 'string', minLength: 1, maxLength: 200 },
            approved: { type: 'boolean' },
          },
          required: ['call_id', 'approved'],
          additionalProperties: false,
        },
      },
    },
    async (request) => {
      const session = await requireSession(services.sessions, request.params.id);
      if (!(await runs.answer(session.id, request.body.call_id, request.body.approved))) {
        throw new ApiError('CONFIRMATION_NOT_FOUND');
      }
      return { ok: true };
    },
  );
};

/**
 * `GET /ws/sessions/:id` (docs/protocol.md#websocket). Access is checked in `preValidation`,
 * before the handler runs and before anything is subscribed. Because the protocol reports
 * refusals as WebSocket close codes (4401 token, with the reason `token required` or
 * `token wrong`; 4403 origin or non-local client; 4004 unknown session), which need an open
 * socket, a refused upgrade is completed and then closed at once with its code: no event is
 * sent, no subscription made, no frame read.
 *
 * Whether the client holds the person's consent (the token or a paired-browser cookie) is also
 * decided at upgrade time: without it, its `tool_confirm` answers are refused with the error code
 * `CONSENT_REQUIRED` and the confirmation stays pending for a client that has it.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { accessProblem, originAllowed } from '../auth.js';
import { hasConsent } from '../consent.js';
import type { ServerContext } from '../context.js';
import { ApiError, errorTable } from '../errors.js';
import { FormSubmissions } from '../form-submissions.js';
import { startEdit, startRegenerate } from '../rewind-input.js';
import { formSubmitInput, userMessageInput } from '../run-input.js';
import { isUuid } from '../session-lookup.js';
import { refuseImagesForTextModel } from '../session-model.js';
import { parseClientFrame } from './client-frame.js';
import { SocketSubscriber } from './socket-subscriber.js';

export const CLOSE_UNKNOWN_SESSION = 4004;
export const CLOSE_UNAUTHORIZED = 4401;
export const CLOSE_FORBIDDEN = 4403;

export interface SessionSocketOptions extends ServerContext {
  maxClientFrameBytes: number;
  maxBufferedBytes?: number;
}

interface Refusal {
  code: number;
  reason: string;
}

export const sessionSocketRoutes: FastifyPluginAsync<SessionSocketOptions> = async (app, options) => {
  const { services, runs, files, maxClientFrameBytes } = options;
  const refusals = new WeakMap<FastifyRequest, Refusal>();
  const forms = new FormSubmissions(services.kv);
  const consenting = new WeakSet<FastifyRequest>();

  async function check(request: FastifyRequest<{ Params: { id: string } }>): Promise<Refusal | undefined> {
    const problem = accessProblem(request, services.settings, false);
    if (problem === 'UNAUTHORIZED') return { code: CLOSE_UNAUTHORIZED, reason: 'token required' };
    if (problem === 'TOKEN_WRONG') return { code: CLOSE_UNAUTHORIZED, reason: 'token wrong' };
    if (problem === 'FOREIGN_HOST') return { code: CLOSE_FORBIDDEN, reason: 'host not allowed' };
    if (problem) return { code: CLOSE_FORBIDDEN, reason: 'local clients only' };
    if (!originAllowed(request, services.settings))
      return { code: CLOSE_FORBIDDEN, reason: 'origin not allowed' };
    // Checked after access, so that the existence of a session is not revealed to strangers.
    const id = request.params.id;
    if (!isUuid(id) || !(await services.sessions.get(id)))
      return { code: CLOSE_UNKNOWN_SESSION, reason: 'unknown session' };
    return undefined;
  }

  app.get<{ Params: { id: string } }>(
    '/ws/sessions/:id',
    {
      websocket: true,
      config: { selfChecked: true },
      preValidation: async (request) => {
        const refusal = await check(request);
        if (refusal) refusals.set(request, refusal);
        else if (await hasConsent(request, services.settings, services.consent)) consenting.add(request);
      },
    },
    (socket: WebSocket, request: FastifyRequest<{ Params: { id: string } }>) => {
      const refusal = refusals.get(request);
      if (refusal) {
        socket.close(refusal.code, refusal.reason);
        return;
      }
      const sessionId = request.params.id;
      const consent = consenting.has(request);
      const log = services.logger.child({ session_id: sessionId });
      const subscriber = new SocketSubscriber(socket, log, options.maxBufferedBytes);
      const unwatch = runs.watch(sessionId, subscriber);
      socket.on('close', unwatch);

      const handle = async (data: RawData): Promise<void> => {
        // With several processes, the others have heard of this socket before anything it asks
        // for happens: a run it starts elsewhere may ask it to confirm.
        await runs.announced();
        const frame = parseClientFrame(data, maxClientFrameBytes);
        if (!frame.ok) return subscriber.sendError(frame.message, frame.code);
        const command = frame.command;
        if (command.type === 'tool_confirm') {
          // A denial is refused too: it is the person's answer as much as an approval is, and the
          // question must stay open for the person rather than be answered by someone else.
          if (!consent)
            return subscriber.sendError(`${errorTable.CONSENT_REQUIRED.message}.`, 'CONSENT_REQUIRED');
          if (!(await runs.answer(sessionId, command.call_id, command.approved))) {
            subscriber.sendError(
              'No tool call of this session is waiting for that confirmation.',
              'CONFIRMATION_NOT_FOUND',
            );
          }
          return;
        }
        if (command.type === 'elicitation_answer') {
          if (!consent)
            return subscriber.sendError(`${errorTable.CONSENT_REQUIRED.message}.`, 'CONSENT_REQUIRED');
          const { elicitation_id, action, values } = command;
          const outcome = await runs.answerElicitation(sessionId, elicitation_id, action, values);
          if (outcome !== true) subscriber.sendError(outcome.message, outcome.code);
          return;
        }
        if (await runs.busy(sessionId)) {
          return subscriber.sendError(
            'The agent is still answering; wait for it to finish or stop it first.',
            'RUN_ACTIVE',
          );
        }
        if (!(await services.sessions.get(sessionId))) {
          subscriber.sendError('This session no longer exists.', 'SESSION_NOT_FOUND');
          socket.close(CLOSE_UNKNOWN_SESSION, 'unknown session');
          return;
        }
        if (command.type === 'message') {
          // The socket is already watching the session, so it receives the run from its first event.
          const input = await userMessageInput(sessionId, command, files, (id) =>
            refuseImagesForTextModel(services, id),
          );
          await runs.start(sessionId, input);
          return;
        }
        const rewinds = { runs, sessions: services.sessions, forms, log };
        if (command.type === 'regenerate') {
          await startRegenerate(rewinds, sessionId);
          return;
        }
        if (command.type === 'edit') {
          const { message_id, type: _type, ...message } = command;
          await startEdit(
            { ...rewinds, files, refuseImages: (id) => refuseImagesForTextModel(services, id) },
            sessionId,
            message_id,
            message,
          );
          return;
        }
        if (!(await forms.claim(sessionId, command.form_id)))
          return subscriber.sendError(
            `The form "${command.form_id}" was already submitted; ask the agent for a new form to change the answer.`,
            'FORM_ALREADY_SUBMITTED',
          );
        try {
          await runs.start(sessionId, formSubmitInput(command.form_id, command.values));
        } catch (err) {
          await forms.release(sessionId, command.form_id);
          throw err;
        }
      };

      socket.on('message', (data: RawData) => {
        handle(data).catch((err: unknown) => {
          if (err instanceof ApiError && err.status < 500) return subscriber.sendError(err.message, err.code);
          log.error({ err }, 'websocket message failed');
          if (err instanceof ApiError) return subscriber.sendError(err.message, err.code);
          subscriber.sendError('The server could not handle that message; it has been logged.', 'INTERNAL');
        });
      });
    },
  );
};

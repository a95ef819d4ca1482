/**
 * `POST /v1/chat/completions`: a request becomes one run of the agent in the session its key
 * names, answered as a stream of chunks or as one completion once the run ends. A client that
 * goes away stops its run, so nothing keeps working for nobody.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RunInput } from '../../agent/types.js';
import { isTerminalEvent, type ServerEvent } from '../../protocol/events.js';
import {
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatCompletionRequest,
  SESSION_HEADER,
  type Usage,
} from '../../protocol/openai.js';
import type { AgentRun } from '../agent-run.js';
import { startHeadlessRun, usageOf } from '../headless-run.js';
import type { RunRegistry } from '../run-registry.js';
import type { NaviServices } from '../services.js';
import { refuseImagesForTextModel } from '../session-model.js';
import { AnswerBuilder, finishReasonOf } from './answer.js';
import type { Conversations, OpenedSession } from './conversations.js';
import { runFailure } from './errors.js';
import { type ChatInput, readChatRequest } from './request.js';
import { SseStream } from './sse.js';

export interface CompletionDeps {
  services: NaviServices;
  runs: RunRegistry;
  conversations: Conversations;
  /** How often a silent stream sends a keep-alive comment (ms). */
  keepAliveMs?: number;
}

function usageFrom(terminal: ServerEvent): Usage {
  const { prompt_tokens, completion_tokens } = usageOf(terminal);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function runInputOf(input: ChatInput): RunInput {
  const run: RunInput = { content: input.content, trigger: 'user', source: 'openai' };
  if (input.images.length > 0) run.images = input.images;
  if (input.history) run.history = input.history;
  return run;
}

/**
 * Stops `run` when the client closes the connection before the answer was sent in full, or
 * already closed it while the run was starting (a probe of the model, a cluster claim).
 */
function stopWhenClientLeaves(reply: FastifyReply, run: AgentRun, also?: () => void): void {
  const leave = () => {
    also?.();
    if (!reply.raw.writableFinished && !run.finished) run.stop();
  };
  if (reply.raw.destroyed || reply.raw.socket?.destroyed) leave();
  else reply.raw.on('close', leave);
}

/**
 * Answers one request. Everything that can be refused is refused before the run starts, as an
 * ordinary error response; once a stream began, a failure is an `error` event in it.
 */
export async function chatCompletion(
  deps: CompletionDeps,
  request: FastifyRequest<{ Body: ChatCompletionRequest }>,
  reply: FastifyReply,
): Promise<ChatCompletion | undefined> {
  const input = readChatRequest(deps.services, request.body);
  const opened = await deps.conversations.sessionFor(input.profileId, input.key);
  reply.header(SESSION_HEADER, opened.session.id);
  const start = (onEvent: (event: ServerEvent) => void) =>
    startIn(deps, opened, input, onEvent, request, reply);
  const base = {
    id: `chatcmpl-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: request.body.model,
  };
  if (input.stream) {
    await streamAnswer(deps, reply, opened.session.id, input, base, start);
    return undefined;
  }

  const answer = new AnswerBuilder();
  const run = await start((event) => answer.add(event));
  stopWhenClientLeaves(reply, run);
  const terminal = await run.done;
  if (terminal.type === 'error') {
    const failure = runFailure(terminal);
    reply.code(failure.status).send(failure.body);
    return undefined;
  }
  return {
    ...base,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.content,
          ...(answer.reasoning !== '' ? { reasoning_content: answer.reasoning } : {}),
        },
        finish_reason: finishReasonOf(terminal),
      },
    ],
    usage: usageFrom(terminal),
  };
}

/**
 * Starts the request's run. When it cannot start (images the model cannot read, Navi stopping,
 * the session taken meanwhile…), a session this request created for it is removed again, with
 * its key's entry, and the answer no longer names it; the refusal is then thrown as it came.
 * Either way, other requests of its key wait for it no longer.
 */
async function startIn(
  deps: CompletionDeps,
  opened: OpenedSession,
  input: ChatInput,
  onEvent: (event: ServerEvent) => void,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<AgentRun> {
  const sessionId = opened.session.id;
  try {
    const hasImages = input.images.length > 0 || (input.history ?? []).some((m) => m.images?.length);
    if (hasImages) await refuseImagesForTextModel(deps.services, sessionId);
    return await startHeadlessRun(deps.runs, sessionId, runInputOf(input), onEvent);
  } catch (err) {
    if (opened.created) {
      const removed = await deps.conversations.discard(opened).catch((cleanup: unknown) => {
        request.log.warn(
          { err: cleanup, sessionId },
          'could not remove the session of a run that did not start',
        );
        return false;
      });
      if (removed) reply.removeHeader(SESSION_HEADER);
    }
    throw err;
  } finally {
    deps.conversations.settle(opened);
  }
}

async function streamAnswer(
  deps: CompletionDeps,
  reply: FastifyReply,
  sessionId: string,
  input: ChatInput,
  base: { id: string; created: number; model: string },
  start: (onEvent: (event: ServerEvent) => void) => Promise<AgentRun>,
): Promise<void> {
  const chunk = (
    delta: ChatCompletionChunk['choices'][number]['delta'],
    finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
  ): ChatCompletionChunk => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const answer = new AnswerBuilder();
  const sse = new SseStream(reply.raw, deps.keepAliveMs);
  // Events delivered before the stream is open (the replay on subscribing) wait here.
  let early: ServerEvent[] | undefined = [];

  const finish = (terminal: ServerEvent) => {
    if (terminal.type === 'error') {
      sse.send(runFailure(terminal).body);
    } else {
      sse.send(chunk({}, finishReasonOf(terminal)));
      if (input.includeUsage) sse.send({ ...chunk({}), choices: [], usage: usageFrom(terminal) });
    }
    sse.done();
  };
  const onEvent = (event: ServerEvent) => {
    if (early) {
      early.push(event);
      return;
    }
    if (isTerminalEvent(event)) return finish(event);
    const piece = answer.add(event);
    if (piece?.content !== undefined) sse.send(chunk({ content: piece.content }));
    if (piece?.reasoning !== undefined) sse.send(chunk({ reasoning_content: piece.reasoning }));
  };

  // A refusal to start (RUN_ACTIVE, SHUTTING_DOWN) is still an ordinary error response.
  const run = await start(onEvent);
  reply.hijack();
  sse.open({ [SESSION_HEADER]: sessionId });
  stopWhenClientLeaves(reply, run, () => sse.stop());
  sse.send(chunk({ role: 'assistant', content: '' }));
  const waiting = early;
  early = undefined;
  for (const event of waiting) onEvent(event);
  await run.done;
}

/**
 * What an MCP server may ask of Navi while it works: `elicitation/create` (a form for the person,
 * docs/mcp.md#elicitation) and `sampling/createMessage` (an answer from Navi's model once the
 * person allows it, docs/mcp.md#sampling).
 *
 * A server's request names no call, so it goes to the newest call of that server still in
 * flight: the person watching that call's run answers it. With no call in flight nobody waits
 * on the server, and with calls of several runs in flight nobody can tell whose call asks: the
 * request is then declined (elicitation) or refused (sampling) with a reason. A form declined while
 * a call waits (the per-call limit, calls of several runs) is noted in that call's result, so the
 * model can tell the person why.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CreateMessageRequest,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  type ElicitResult,
  ErrorCode,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { MCP_SAMPLING_TOOL, type SamplingConfirmArgs } from '../protocol/events.js';
import { raceAbort } from '../util/race-abort.js';
import type { CallOrigin } from './connection.js';
import { ELICITATION_LIMITS, elicitationForm } from './elicitation-form.js';
import { type McpSampler, SAMPLING_LIMITS, type SamplingChoice, type SamplingMessage } from './sampler.js';

/** One call of the server in flight, as the requests it sends back meanwhile see it. */
export interface InFlightCall {
  origin: CallOrigin;
  /** Aborted when the call ends, however it ends. */
  signal: AbortSignal;
  /** Sampling requests made during the call so far, to name each confirmation. */
  samplings: number;
  /** Forms and sampling confirmations of the call waiting for the person now. */
  open?: number;
}

export interface ClientRequestDeps {
  /** The server's name as configured. */
  server: string;
  /** The calls in flight, oldest first. */
  calls: () => readonly InFlightCall[];
  sampler?: McpSampler;
  log: Logger;
}

/** The spec's "user rejected" code for sampling. */
export const SAMPLING_REJECTED = -1;

export const NO_CALL_WAITING = 'no run of Navi is waiting on this server';
export const CALLS_OF_SEVERAL_RUNS =
  'calls of more than one run of Navi are waiting on this server, so Navi cannot tell whose call asks';

/**
 * The call a server's request is for: the newest in flight, as long as every call in flight is
 * of one run. With calls of several runs (two sessions, a recall) the request might belong to any
 * of them, and showing it to the person watching the newest could hand one session's question,
 * or its answer, to another.
 */
function callAsking(calls: readonly InFlightCall[]): { call: InFlightCall } | { reason: string } {
  const call = calls.at(-1);
  if (!call) return { reason: NO_CALL_WAITING };
  const run = call.origin.runId;
  if (calls.some((c) => c.origin.runId !== run)) return { reason: CALLS_OF_SEVERAL_RUNS };
  return { call };
}

/** The newest call in flight of each run, in the order of the runs' newest calls. */
function newestOfEachRun(calls: readonly InFlightCall[]): InFlightCall[] {
  const byRun = new Map<string | undefined, InFlightCall>();
  for (const call of calls) {
    byRun.delete(call.origin.runId);
    byRun.set(call.origin.runId, call);
  }
  return [...byRun.values()];
}

/** How many forms and sampling confirmations one call may have waiting for the person at once. */
export const MAX_OPEN_ASKS = 3;
export const TOO_MANY_OPEN = `the server already waits for ${MAX_OPEN_ASKS} answers of the person during this call`;

/**
 * The reason of an already aborted `ElicitRequest.signal` for a form Navi declined before asking
 * anyone (the per-call limit, calls of several runs): the run does not show such a form, and the
 * call's result notes the decline for the model, as for any form declined without the person.
 */
export class FormDeclinedByNavi extends Error {
  override name = 'FormDeclinedByNavi';
}

/** Why Navi declined the form before asking anyone, when `signal` carries such a decline. */
export function declinedByNavi(signal: AbortSignal | undefined): string | undefined {
  return signal?.aborted && signal.reason instanceof FormDeclinedByNavi ? signal.reason.message : undefined;
}

/**
 * The SDK's own request schema drops what its types do not name (a string's `pattern`); this one
 * keeps the parameters whole, and the SDK still checks them against its schema before the handler.
 */
const ElicitRequestLooseSchema = z.object({
  method: z.literal('elicitation/create'),
  params: z.looseObject({ message: z.string(), requestedSchema: z.unknown().optional() }),
});

/**
 * A JSON-RPC error for the server. Not the SDK's McpError: its message already carries the
 * "MCP error <code>:" prefix, which the server's SDK would add a second time.
 */
export class ClientRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

const reasonOf = (signal: AbortSignal, fallback: string): string => {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  return typeof reason === 'string' ? reason : fallback;
};

/** Installs both handlers on a client whose capabilities declare elicitation and sampling. */
export function handleClientRequests(client: Client, deps: ClientRequestDeps): void {
  client.setRequestHandler(ElicitRequestLooseSchema, async (request, extra): Promise<ElicitResult> => {
    const { message, requestedSchema } = request.params;
    // Declined before anyone is asked: the call's result still tells the model why.
    const declineFor = (calls: readonly InFlightCall[], reason: string, shown: string) => {
      const signal = AbortSignal.abort(new FormDeclinedByNavi(reason));
      for (const c of calls)
        void c.origin.elicit?.({
          id: randomUUID(),
          callId: c.origin.callId ?? '',
          server: deps.server,
          message: shown,
          form: { form_id: 'declined', fields: [], submit_label: 'Send' },
          schema: {},
          signal,
        });
    };
    const inFlight = deps.calls();
    const asking = callAsking(inFlight);
    const call = 'call' in asking ? asking.call : undefined;
    if (!call?.origin.elicit) {
      const reason = 'reason' in asking ? asking.reason : NO_CALL_WAITING;
      deps.log.info({ reason }, 'MCP elicitation declined');
      // The question may be any run's: each run learns of it, but not what it asked.
      if (reason === CALLS_OF_SEVERAL_RUNS) declineFor(newestOfEachRun(inFlight), reason, '');
      return { action: 'decline' };
    }
    if ((call.open ?? 0) >= MAX_OPEN_ASKS) {
      deps.log.warn({ reason: TOO_MANY_OPEN }, 'MCP elicitation declined');
      declineFor([call], TOO_MANY_OPEN, clip(message, ELICITATION_LIMITS.messageChars));
      return { action: 'decline' };
    }
    const id = randomUUID();
    const built = elicitationForm(`elicit-${id}`, requestedSchema);
    if (!built.ok)
      throw new ClientRequestError(ErrorCode.InvalidParams, `Navi cannot show this form: ${built.reason}`);
    const signal = AbortSignal.any([extra.signal, call.signal]);
    if (signal.aborted) return { action: 'cancel' };
    call.open = (call.open ?? 0) + 1;
    const answer = await call.origin
      .elicit({
        id,
        callId: call.origin.callId ?? '',
        server: deps.server,
        message: clip(message, ELICITATION_LIMITS.messageChars),
        form: built.form,
        schema: requestedSchema as Record<string, unknown>,
        signal,
      })
      .finally(() => {
        call.open = (call.open ?? 1) - 1;
      });
    if (answer.action === 'accept')
      return { action: 'accept', content: answer.content as ElicitResult['content'] };
    return { action: answer.action };
  });

  client.setRequestHandler(
    CreateMessageRequestSchema,
    async (request, extra): Promise<CreateMessageResult> => {
      const refuse = (reason: string) =>
        new ClientRequestError(SAMPLING_REJECTED, `Navi refused to sample: ${reason}`);
      const asking = callAsking(deps.calls());
      if ('reason' in asking) throw refuse(`${asking.reason}, so nobody can approve it`);
      const call = asking.call;
      const confirm = call.origin.confirm;
      if (!confirm) throw refuse('this call cannot ask anyone to approve it');
      if (!deps.sampler) throw refuse('Navi has no model for servers to use');
      const params = request.params;
      if (params.tools || params.toolChoice)
        throw new ClientRequestError(
          ErrorCode.InvalidParams,
          'Navi offers no tools in sampling; send the request without tools',
        );
      const messages = samplingMessages(params);
      const maxTokens = Math.max(1, Math.min(params.maxTokens, SAMPLING_LIMITS.maxTokens));
      const stopSequences = params.stopSequences ?? [];
      if (stopSequences.length > SAMPLING_LIMITS.stopSequences)
        throw new ClientRequestError(
          ErrorCode.InvalidParams,
          `${stopSequences.length} stop sequences; Navi takes at most ${SAMPLING_LIMITS.stopSequences}`,
        );
      if ((call.open ?? 0) >= MAX_OPEN_ASKS) throw refuse(TOO_MANY_OPEN);
      // Chosen before the person is asked: they approve this backend and model, which then answer.
      let choice: SamplingChoice;
      try {
        choice = deps.sampler.choose();
      } catch (err) {
        throw refuse(`Navi has no model for servers to use (${(err as Error).message})`);
      }
      call.samplings += 1;
      const hints = (params.modelPreferences?.hints ?? [])
        .map((h) => h.name)
        .filter((n): n is string => typeof n === 'string');
      const args: SamplingConfirmArgs = {
        server: deps.server,
        backend: choice.backend,
        model: choice.model,
        ...(params.systemPrompt ? { system_prompt: params.systemPrompt } : {}),
        messages: messages.map((m) => ({
          role: m.role,
          text: m.images?.length
            ? `${m.text}${m.text ? ' ' : ''}${'[image] '.repeat(m.images.length).trim()}`
            : m.text,
        })),
        max_tokens: maxTokens,
        ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
        ...(hints.length > 0 ? { model_hints: hints } : {}),
      };
      const signal = AbortSignal.any([extra.signal, call.signal]);
      call.open = (call.open ?? 0) + 1;
      // The confirmation is not waited for once the call ends or the server withdraws the request.
      const answer = await raceAbort(
        confirm({
          callId: `${call.origin.callId ?? 'call'}/sampling/${call.samplings}`,
          tool: MCP_SAMPLING_TOOL,
          args: args as unknown as Record<string, unknown>,
          // The run drops the confirmation too, rather than keeping it open until its timeout.
          signal,
        }),
        signal,
        undefined,
      ).finally(() => {
        call.open = (call.open ?? 1) - 1;
      });
      if (!answer) throw refuse(`nobody waits for it any more (${reasonOf(signal, 'the call ended')})`);
      // Only the person's own no is theirs; else nobody was asked or nobody answered.
      if (!answer.approved)
        throw refuse(
          answer.declined ? 'the person did not allow it' : `nobody allowed it (${answer.reason})`,
        );
      try {
        const reply = await choice.answer({
          messages,
          maxTokens,
          signal,
          ...(params.systemPrompt ? { systemPrompt: params.systemPrompt } : {}),
          ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
          ...(stopSequences.length > 0 ? { stopSequences } : {}),
        });
        return {
          role: 'assistant',
          content: { type: 'text', text: reply.text },
          model: reply.model,
          stopReason: reply.stopReason,
        };
      } catch (err) {
        const why = signal.aborted ? reasonOf(signal, 'the call ended') : (err as Error).message;
        throw new ClientRequestError(ErrorCode.InternalError, `Navi's model could not answer: ${why}`);
      }
    },
  );
}

/** The request's messages as text and images, within Navi's bounds; anything else is refused. */
function samplingMessages(params: CreateMessageRequest['params']): SamplingMessage[] {
  const invalid = (why: string) => new ClientRequestError(ErrorCode.InvalidParams, why);
  if (params.messages.length === 0) throw invalid('the request has no messages');
  if (params.messages.length > SAMPLING_LIMITS.messages)
    throw invalid(`${params.messages.length} messages; Navi takes at most ${SAMPLING_LIMITS.messages}`);
  let chars = params.systemPrompt?.length ?? 0;
  let images = 0;
  const out = params.messages.map((message, i): SamplingMessage => {
    const blocks = Array.isArray(message.content) ? message.content : [message.content];
    const texts: string[] = [];
    const pictures: string[] = [];
    for (const block of blocks) {
      if (block.type === 'text') texts.push(block.text);
      else if (block.type === 'image') {
        if (block.data.length > SAMPLING_LIMITS.imageChars)
          throw invalid(
            `message ${i + 1} has an image larger than Navi takes (${SAMPLING_LIMITS.imageChars} base64 characters)`,
          );
        pictures.push(block.data);
      } else
        throw invalid(`message ${i + 1} has ${block.type} content; Navi's model reads only text and images`);
    }
    images += pictures.length;
    const text = texts.join('\n');
    chars += text.length;
    return { role: message.role, text, ...(pictures.length > 0 ? { images: pictures } : {}) };
  });
  if (chars > SAMPLING_LIMITS.maxChars)
    throw invalid(`the messages hold ${chars} characters; Navi takes at most ${SAMPLING_LIMITS.maxChars}`);
  if (images > SAMPLING_LIMITS.images)
    throw invalid(`the messages hold ${images} images; Navi takes at most ${SAMPLING_LIMITS.images}`);
  return out;
}

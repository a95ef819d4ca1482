/**
 * What a persisted run writes around its loop: its user message, after the rewind of a
 * regenerate or an edit (docs/architecture.md#rewinding), and the display-only record of a turn
 * that failed (docs/architecture.md#the-end-of-a-run).
 */
import type { Logger } from 'pino';
import type { ErrorCode } from '../protocol/error-codes.js';
import type { AgentEvent } from '../protocol/events.js';
import type { RecallStamp } from '../protocol/rest.js';
import type { SessionPatch, SessionStore, StoredMessage } from '../store/types.js';
import type { Transcript } from './transcript.js';
import type { RunInput } from './types.js';

/**
 * The turn's user message is in place (`rewound`: the display ids a regenerate or an edit
 * removed, oldest first), or why the run cannot start.
 */
export type TurnOpening = { ok: true; rewound: string[] } | { ok: false; message: string; code: ErrorCode };

export interface TurnRecordDeps {
  sessions: SessionStore;
  newId: () => string;
  now: () => Date;
}

/**
 * The id of the user message a run answers, known before the run stores anything so that its
 * `stream_start` can name it: a regenerate's message is already stored; any other run's message
 * gets a new id, which `openTurn` then stores it under.
 */
export function turnMessageId(deps: TurnRecordDeps, input: RunInput): string {
  return input.rewind?.rerun ? input.rewind.messageId : deps.newId();
}

/**
 * Puts the run's user message in place: a regenerate or an edit first removes what it replaces;
 * a regenerate then answers the message already there, anything else appends `input` as a new
 * one with the id `userMessageId` (from `turnMessageId`), with `session` applied to the session
 * row in the same write. Refuses, changing nothing, when the message to rewind to is gone or was
 * summarised since the request was checked.
 */
export async function openTurn(
  deps: TurnRecordDeps,
  transcript: Transcript,
  input: RunInput,
  userMessageId: string,
  session?: SessionPatch,
): Promise<TurnOpening> {
  const { rewind } = input;
  let rewound: string[] = [];
  if (rewind) {
    const result = await deps.sessions.rewind(transcript.sessionId, rewind.messageId, {
      keepAnchor: rewind.rerun,
    });
    if (!result.ok && result.reason === 'not_found')
      return {
        ok: false,
        code: 'MESSAGE_NOT_FOUND',
        message: `The message ${rewind.messageId} is no longer in this session; reload it and try again.`,
      };
    if (!result.ok)
      return {
        ok: false,
        code: 'MESSAGE_NOT_EDITABLE',
        message:
          "That message was summarised to keep the conversation within the model's context, so it can no longer be run again or edited; send a new message instead.",
      };
    if (rewind.rerun) return { ok: true, rewound: result.removedIds };
    rewound = result.removedIds;
  }
  const user = userMessageOf(input, userMessageId, deps.now().toISOString());
  // A form submission is kept in the display buffer too (kind `form_submit`), so its form
  // still shows as sent after compression rewrote the context (no bubble is drawn).
  const display = !input.contextOnly || input.formSubmit !== undefined;
  await transcript.append([{ message: user, display, context: true }], session);
  return { ok: true, rewound };
}

/** The event telling clients which messages a rewind removed; none when it removed nothing. */
export function rewoundEvent(removed: string[]): AgentEvent | undefined {
  const first = removed[0];
  return first === undefined
    ? undefined
    : { type: 'history_rewound', from_message_id: first, removed_ids: removed };
}

/**
 * Saves the failure of a turn whose user message is stored, after whatever the turn already
 * saved: a `system` message of kind `error`, in the display buffer only (the model never reads
 * it). Never throws: a failure to save it is logged, and the run still reports the error.
 */
export async function recordFailure(
  deps: TurnRecordDeps,
  transcript: Transcript,
  failure: { message: string; code: ErrorCode },
  log: Logger,
): Promise<void> {
  const message: StoredMessage = {
    id: deps.newId(),
    role: 'system',
    kind: 'error',
    content: failure.message,
    error: { message: failure.message, code: failure.code },
    created_at: deps.now().toISOString(),
  };
  try {
    await transcript.append([{ message, display: true, context: false }]);
  } catch (err) {
    log.error({ err }, 'saving the failure of the turn failed');
  }
}

/** The user's message as typed fields; the context view tells the model about attachments. */
export function userMessageOf(input: RunInput, id: string, createdAt: string): StoredMessage {
  return {
    id,
    role: 'user',
    content: input.content,
    created_at: createdAt,
    ...(input.formSubmit ? { kind: 'form_submit', form_submit: input.formSubmit } : {}),
    ...(input.images && input.images.length > 0 ? { images: input.images } : {}),
    ...(input.files && input.files.length > 0 ? { attachments: input.files } : {}),
    ...(input.trigger !== 'user' ? { trigger: input.trigger } : {}),
    ...(input.recall ? { recall: recallStamp(input.recall) } : {}),
  };
}

/** The stored stamp of a recall run's prompt (the chain stays with the run). */
export function recallStamp(recall: NonNullable<RunInput['recall']>): RecallStamp {
  const { chain: _chain, ...stamp } = recall;
  return stamp;
}

/**
 * Rough count (4 characters a token), for backends that report no usage and for the context
 * left after a rewind, before the run's first call reports the real figure.
 */
export function estimateTokens(system: string, context: readonly StoredMessage[], answer: string): number {
  let chars = system.length + answer.length;
  for (const m of context)
    chars += (m.content?.length ?? 0) + (m.tool_calls ? JSON.stringify(m.tool_calls).length : 0);
  return Math.ceil(chars / 4);
}

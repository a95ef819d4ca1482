/**
 * The run inputs of `regenerate` and `edit` (over the WebSocket or REST), refused before any run
 * starts when there is nothing to run again or the message may not be edited. The agent does the
 * rewind itself, once the session's previous run has settled (docs/architecture.md#rewinding).
 */
import type { Logger } from 'pino';
import type { RunInput } from '../agent/types.js';
import type { SessionStore, StoredMessage } from '../store/types.js';
import type { AgentRun } from './agent-run.js';
import { ApiError } from './errors.js';
import type { FormSubmissions } from './form-submissions.js';
import { type ClientMessage, userMessageInput } from './run-input.js';
import type { RunRegistry } from './run-registry.js';
import type { SessionFiles } from './session-files.js';

/** A message the person typed: not a form submission, a recall's prompt or one Navi made up. */
export function isTyped(message: StoredMessage): boolean {
  // A typed message stores no trigger (only form and recall runs stamp theirs).
  return message.role === 'user' && message.kind === undefined && message.trigger === undefined;
}

/**
 * What `regenerate` runs again: the last message the person typed, or a recall's prompt (the
 * person asks for it, so the run is theirs: they may approve its tool calls). A form submission
 * is not one: regenerate goes back to the message that led to the form, and the form is asked anew.
 */
export function isRerunnable(message: StoredMessage): boolean {
  return (
    isTyped(message) ||
    (message.role === 'user' && message.kind === undefined && message.trigger === 'recall')
  );
}

/** Regenerate: the session's last user message runs again, everything after it removed first. */
export async function regenerateInput(sessions: SessionStore, sessionId: string): Promise<RunInput> {
  return regenerateFrom(sessions, sessionId, await sessions.getMessages(sessionId));
}

/** `regenerateInput` for the display history `messages` already read. */
async function regenerateFrom(
  sessions: SessionStore,
  sessionId: string,
  messages: readonly StoredMessage[],
): Promise<RunInput> {
  const last = messages.findLast(isRerunnable);
  if (!last) throw new ApiError('NOTHING_TO_REGENERATE', 'send a message first');
  await requireInContext(sessions, sessionId, last);
  return { content: last.content ?? '', trigger: 'user', rewind: { messageId: last.id, rerun: true } };
}

/**
 * Edit: `messageId`, a message the person typed, is replaced by `message` (checked as a new
 * message is: not empty, images base64 and seen by the model, files uploaded to this session),
 * and everything after it goes.
 */
export async function editInput(
  sessionId: string,
  messageId: string,
  message: ClientMessage,
  deps: EditDeps,
): Promise<RunInput> {
  return editFrom(sessionId, messageId, message, deps, await deps.sessions.getMessages(sessionId));
}

/** What an edit checks its new message with. */
export interface EditDeps {
  sessions: SessionStore;
  files: SessionFiles;
  refuseImages?: (sessionId: string) => Promise<void>;
}

/** `editInput` for the display history `messages` already read. */
async function editFrom(
  sessionId: string,
  messageId: string,
  message: ClientMessage,
  deps: EditDeps,
  messages: readonly StoredMessage[],
): Promise<RunInput> {
  const target = messages.find((m) => m.id === messageId);
  if (!target)
    throw new ApiError(
      'MESSAGE_NOT_FOUND',
      `"${shortId(messageId)}"; reload the session to see its messages`,
    );
  if (!isTyped(target))
    throw new ApiError(
      'MESSAGE_NOT_EDITABLE',
      `"${shortId(messageId)}" is ${describe(target)}; edit one of your own messages, or send a new one`,
    );
  await requireInContext(deps.sessions, sessionId, target);
  const input = await userMessageInput(sessionId, message, deps.files, deps.refuseImages);
  return { ...input, rewind: { messageId, rerun: false } };
}

/** What starting a regenerate or an edit takes. */
export interface RewindDeps {
  runs: RunRegistry;
  sessions: SessionStore;
  forms: FormSubmissions;
  log: Logger;
}

/**
 * Checks and starts a regenerate (as `regenerateInput`). The display history is read once: the
 * check finds the message to run again in it, and the forms answered in the turns the rewind
 * removes are found in it too (`FormSubmissions.reopenRemoved`). Throws as `RunRegistry.start` does.
 */
export async function startRegenerate(deps: RewindDeps, sessionId: string): Promise<AgentRun> {
  const messages = await deps.sessions.getMessages(sessionId);
  return startRewind(deps, sessionId, await regenerateFrom(deps.sessions, sessionId, messages), messages);
}

/** Checks and starts an edit (as `editInput`), reading the display history once like `startRegenerate`. */
export async function startEdit(
  deps: RewindDeps & Omit<EditDeps, 'sessions'>,
  sessionId: string,
  messageId: string,
  message: ClientMessage,
): Promise<AgentRun> {
  const messages = await deps.sessions.getMessages(sessionId);
  const input = await editFrom(sessionId, messageId, message, deps, messages);
  return startRewind(deps, sessionId, input, messages);
}

/**
 * Starts the run of a regenerate or an edit; the forms answered in the turns it removes (found in
 * `before`, the display history as it stands before the run) may be answered again.
 */
function startRewind(
  deps: RewindDeps,
  sessionId: string,
  input: RunInput,
  before: readonly StoredMessage[],
): AgentRun {
  const run = deps.runs.start(sessionId, input);
  deps.forms.reopenRemoved(run, sessionId, before, deps.log);
  return run;
}

async function requireInContext(
  sessions: SessionStore,
  sessionId: string,
  message: StoredMessage,
): Promise<void> {
  const context = await sessions.getContext(sessionId);
  if (!context.some((m) => m.id === message.id))
    throw new ApiError(
      'MESSAGE_NOT_EDITABLE',
      "it was summarised to keep the conversation within the model's context; send a new message instead",
    );
}

function describe(message: StoredMessage): string {
  if (message.role === 'assistant') return 'an answer of the agent';
  if (message.role === 'tool') return 'the result of a tool call';
  if (message.role === 'system') return 'a notice of Navi';
  if (message.kind === 'form_submit') return 'a form submission';
  if (message.trigger === 'recall') return 'the prompt of a recall';
  return 'not a message you typed';
}

/** An id as shown in a message: a hostile one is cut short. */
function shortId(id: string): string {
  return id.length > 60 ? `${id.slice(0, 57)}…` : id;
}

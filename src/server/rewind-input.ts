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

/** Display messages read per page while looking back for the message a rewind starts at. */
const REWIND_PAGE = 100;

/**
 * The session's newest display messages, oldest first, back to and including the newest one that
 * `start` accepts: what a rewind to it keeps (that one) and removes (the rest). Read a page at a
 * time from the newest, so it costs what the rewind touches, not the session's length. Undefined
 * when no message is accepted.
 */
async function tailFrom(
  sessions: SessionStore,
  sessionId: string,
  start: (message: StoredMessage) => boolean,
): Promise<StoredMessage[] | undefined> {
  // Newest page first; joined once at the end, so a long walk copies each message once.
  const pages: StoredMessage[][] = [];
  let before: string | undefined;
  for (;;) {
    const page = await sessions.getMessagePage(sessionId, {
      limit: REWIND_PAGE,
      ...(before === undefined ? {} : { before }),
    });
    // Undefined: the page's cursor was removed meanwhile; the message looked for went with it.
    if (!page) return undefined;
    const at = page.messages.findLastIndex(start);
    if (at >= 0) {
      pages.push(page.messages.slice(at));
      return pages.reverse().flat();
    }
    pages.push(page.messages);
    if (page.next_before === null) return undefined;
    before = page.next_before;
  }
}

/** Regenerate: the session's last user message runs again, everything after it removed first. */
export async function regenerateInput(sessions: SessionStore, sessionId: string): Promise<RunInput> {
  return regenerateFrom(sessions, sessionId, await tailFrom(sessions, sessionId, isRerunnable));
}

/** `regenerateInput` for `tail`, the display history from the message to run again on. */
async function regenerateFrom(
  sessions: SessionStore,
  sessionId: string,
  tail: readonly StoredMessage[] | undefined,
): Promise<RunInput> {
  const last = tail?.[0];
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
  return editFrom(sessionId, messageId, message, deps, await deps.sessions.getMessage(sessionId, messageId));
}

/** What an edit checks its new message with. */
export interface EditDeps {
  sessions: SessionStore;
  files: SessionFiles;
  refuseImages?: (sessionId: string) => Promise<void>;
}

/** `editInput` for `target`, the stored message `messageId` (undefined when there is none). */
async function editFrom(
  sessionId: string,
  messageId: string,
  message: ClientMessage,
  deps: EditDeps,
  target: StoredMessage | undefined,
): Promise<RunInput> {
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
 * Checks and starts a regenerate (as `regenerateInput`). The display history is read back from
 * the newest message to the one run again, once: the check finds that message there, and the
 * forms answered in the turns the rewind removes are found there too
 * (`FormSubmissions.reopenRemoved`). Throws as `RunRegistry.start` does.
 */
export async function startRegenerate(deps: RewindDeps, sessionId: string): Promise<AgentRun> {
  const tail = await tailFrom(deps.sessions, sessionId, isRerunnable);
  return startRewind(deps, sessionId, await regenerateFrom(deps.sessions, sessionId, tail), tail ?? []);
}

/**
 * Checks and starts an edit (as `editInput`), then reads the display history back to the message,
 * once, for the forms the rewind reopens (as `startRegenerate`).
 */
export async function startEdit(
  deps: RewindDeps & Omit<EditDeps, 'sessions'>,
  sessionId: string,
  messageId: string,
  message: ClientMessage,
): Promise<AgentRun> {
  // Checked first with one lookup, so an id the session lacks (or one it may not edit) is refused
  // without walking the whole history; only an edit that runs reads back to its message.
  const input = await editInput(sessionId, messageId, message, deps);
  const tail = await tailFrom(deps.sessions, sessionId, (m) => m.id === messageId);
  return startRewind(deps, sessionId, input, tail ?? []);
}

/**
 * Starts the run of a regenerate or an edit; the forms answered in the turns it removes (found in
 * `tail`, the display history from the rewind's message on, as it stands before the run) may be
 * answered again.
 */
async function startRewind(
  deps: RewindDeps,
  sessionId: string,
  input: RunInput,
  tail: readonly StoredMessage[],
): Promise<AgentRun> {
  // The claim comes first, inside start: a rewind whose run cannot start removes nothing.
  const run = await deps.runs.start(sessionId, input);
  deps.forms.reopenRemoved(run, sessionId, tail, deps.log);
  return run;
}

async function requireInContext(
  sessions: SessionStore,
  sessionId: string,
  message: StoredMessage,
): Promise<void> {
  if (!(await sessions.isInContext(sessionId, message.id)))
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

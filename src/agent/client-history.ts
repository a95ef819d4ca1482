/**
 * A client's own history (`RunInput.history`, docs/openai-api.md#sessions-and-history): does it
 * tell the conversation the session already holds, or has the client's conversation gone its own
 * way (an earlier message edited, turns deleted, a system prompt added or changed), so that its
 * history must become the session's context?
 *
 * What is compared is what such a client can know: the texts of the user messages and of the
 * answers it was sent. Tool calls, tool results, plans, summaries, injected images and failure
 * records are Navi's own and never reach it, so they take no part; a run's answer counts as
 * matching when it is the turn's final answer, or every answer text of the turn run together
 * (what a streaming client collected from the deltas), whitespace aside. System messages are
 * compared with the context's, since only the context holds them. Once compression summarised the
 * context, the client's history is checked from where the summary ends: an edit to what was
 * summarised goes unnoticed, where checking it would replace the context at every request.
 */
import type { StoredMessage } from '../store/types.js';
import { estimateTokens, type TurnRecordDeps } from './turn-records.js';
import type { HistoryMessage } from './types.js';

/** One user message and the answers that followed it (no user: answers before any). */
interface Exchange {
  user?: string;
  answers: string[];
}

/** A user or assistant text of the client's history, trimmed; empty answers are left out. */
interface Said {
  role: 'user' | 'assistant';
  text: string;
}

/**
 * Before a run that carries a client's history: when it tells another conversation than the
 * session's, it becomes the session's context and the run continues from it; resolves to the
 * estimated tokens of the new context then, and to false when the stored context is kept.
 * Reads both buffers once: a cost in proportion to the session, paid only by such clients.
 */
export async function adoptHistory(
  deps: TurnRecordDeps,
  sessionId: string,
  history: readonly HistoryMessage[],
): Promise<{ tokens: number } | false> {
  const [display, context] = await Promise.all([
    deps.sessions.getMessages(sessionId),
    deps.sessions.getContext(sessionId),
  ]);
  // Stored texts have the secrets Navi knows masked: the client's, which may hold one (a key it
  // pasted, an answer that repeated a revealed value), are compared as they would be stored.
  const { asStored } = deps.sessions;
  const told = asStored ? history.map((m) => ({ ...m, content: asStored(m.content) })) : history;
  if (historyAgrees(told, display, context)) return false;
  const messages = contextOfHistory(history, deps.newId, deps.now().toISOString());
  await deps.sessions.replaceContext(sessionId, messages);
  return { tokens: estimateTokens('', messages, '') };
}

/**
 * True when `history` tells the same conversation as `display` (the session's display buffer)
 * or as the user and assistant messages of `context` (which, after an earlier replacement, are
 * the client's own), and its system messages are the context's. Costs one pass over each list.
 */
export function historyAgrees(
  history: readonly HistoryMessage[],
  display: readonly StoredMessage[],
  context: readonly StoredMessage[],
): boolean {
  const systems = history.filter((m) => m.role === 'system').map((m) => m.content.trim());
  const stored = context
    .filter((m) => m.role === 'system' && m.kind === 'client_system')
    .map((m) => (m.content ?? '').trim());
  if (!sameList(systems, stored)) return false;
  const said = saidOf(history);
  if (tells(said, exchangesOf(display))) return true;
  // A summary stands for the older part of the conversation, which it no longer shows: the
  // client's history then has to end as the context goes on after it.
  const summarised = context.some((m) => m.kind === 'summary');
  const fromContext = exchangesOf(context);
  const start = summarised ? said.length - itemsOf(fromContext) : 0;
  return start >= 0 && tells(said.slice(start), fromContext);
}

/** How many user and assistant texts of a client's history `exchanges` stand for. */
function itemsOf(exchanges: readonly Exchange[]): number {
  let n = 0;
  for (const e of exchanges) n += (e.user === undefined ? 0 : 1) + (e.answers.length > 0 ? 1 : 0);
  return n;
}

/**
 * The context the client's history stands for: its messages in its order, with fresh ids; user
 * messages keep their images, and system messages stay system messages, tagged `client_system`,
 * the one tag the context view passes a stored system message on with (the model reads them after
 * Navi's own system prompt, which is built per call and never stored).
 */
export function contextOfHistory(
  history: readonly HistoryMessage[],
  newId: () => string,
  createdAt: string,
): StoredMessage[] {
  return history.map((m) => ({
    id: newId(),
    role: m.role,
    content: m.content,
    created_at: createdAt,
    ...(m.role === 'system' ? { kind: 'client_system' as const } : {}),
    ...(m.role === 'user' && m.images && m.images.length > 0 ? { images: m.images } : {}),
  }));
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function saidOf(history: readonly HistoryMessage[]): Said[] {
  const said: Said[] = [];
  for (const m of history) {
    if (m.role === 'system') continue;
    const text = m.content.trim();
    if (m.role === 'assistant' && text === '') continue;
    said.push({ role: m.role, text });
  }
  return said;
}

/** A user message the person wrote (or a form they sent): not a summary or a tool's image. */
function isUserTurn(m: StoredMessage): boolean {
  return m.role === 'user' && m.kind !== 'summary' && m.kind !== 'injected_image';
}

/** An answer the client was sent: assistant text that is no tool call and no plan. */
function answerText(m: StoredMessage): string | undefined {
  if (m.role !== 'assistant' || m.kind === 'plan' || (m.tool_calls && m.tool_calls.length > 0))
    return undefined;
  const text = (m.content ?? '').trim();
  return text === '' ? undefined : text;
}

function exchangesOf(messages: readonly StoredMessage[]): Exchange[] {
  const exchanges: Exchange[] = [];
  for (const m of messages) {
    if (isUserTurn(m)) {
      exchanges.push({ user: (m.content ?? '').trim(), answers: [] });
      continue;
    }
    const answer = answerText(m);
    if (answer === undefined) continue;
    if (exchanges.length === 0) exchanges.push({ answers: [] });
    exchanges[exchanges.length - 1]!.answers.push(answer);
  }
  return exchanges;
}

const WHITESPACE = /\s+/g;

function answerMatches(text: string, answers: readonly string[]): boolean {
  if (text === answers[answers.length - 1]) return true;
  return text.replace(WHITESPACE, '') === answers.join('').replace(WHITESPACE, '');
}

function tells(said: readonly Said[], exchanges: readonly Exchange[]): boolean {
  let i = 0;
  for (const exchange of exchanges) {
    if (exchange.user !== undefined) {
      const user = said[i++];
      if (user?.role !== 'user' || user.text !== exchange.user) return false;
    }
    const next = said[i];
    if (exchange.answers.length === 0) {
      if (next?.role === 'assistant') return false;
      continue;
    }
    if (next?.role !== 'assistant' || !answerMatches(next.text, exchange.answers)) return false;
    i++;
  }
  return i === said.length;
}

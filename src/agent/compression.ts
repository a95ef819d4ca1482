/**
 * Context compression (docs/memory.md#context-compression): the older part of the LLM context becomes one summary
 * message; the last `keepRecent` turns stay verbatim. Pure apart from the one LLM call: the
 * caller applies the result with `SessionStore.replaceContextPrefix`, so a failure here leaves
 * the context exactly as it was.
 *
 * A turn starts at a user message (not a summary, not an image a tool injected) and runs until
 * the next one, so an assistant message with tool calls and the results of those calls are
 * always in the same turn and never separated.
 */
import { randomUUID } from 'node:crypto';
import type { ChatMessage } from '../llm/types.js';
import type { StoredMessage } from '../store/types.js';
import type { CompressionRequest, CompressionResult } from './compressor.js';
import { estimateCall } from './run-usage.js';

export const ARGUMENT_CHARS = 120;
export const RESULT_CHARS = 300;
export const INPUT_CHARS = 12_000;
/** Room kept for the earlier summary inside INPUT_CHARS, so overflow never drops all history. */
const EARLIER_SUMMARY_CHARS = 4_000;

const INSTRUCTIONS = `Summarise the earlier part of a conversation between a user and an AI assistant that uses tools.
The assistant will continue the conversation with only your summary and the latest messages.
Write concise bullet points. Keep what the user asked for and decided, facts learnt about the user and
their systems, names, paths, commands, numbers and errors, what the tools found, what was finished and
what is still open. Merge the earlier summary in if there is one. No preamble, bullet points only.`;

export interface CompressContextRequest extends CompressionRequest {
  newId?: () => string;
  now?: () => Date;
}

export interface CompressContextResult extends CompressionResult {
  /** Context messages the summary replaces (an earlier summary included). */
  removedCount: number;
}

/** True when the context uses at least `threshold` (0–1) of a window of `numCtx` tokens. */
export function shouldCompress(tokenCount: number, numCtx: number, threshold: number): boolean {
  return numCtx > 0 && tokenCount >= numCtx * threshold;
}

export interface Partition {
  /** Messages before the first turn (usually an earlier summary). */
  leading: StoredMessage[];
  turns: StoredMessage[][];
}

function startsTurn(m: StoredMessage): boolean {
  return m.role === 'user' && m.kind !== 'summary' && m.kind !== 'injected_image';
}

/** Splits the context into turns; see the file comment for what a turn is. */
export function partitionTurns(context: readonly StoredMessage[]): Partition {
  const leading: StoredMessage[] = [];
  const turns: StoredMessage[][] = [];
  for (const m of context) {
    if (startsTurn(m)) turns.push([m]);
    else if (turns.length > 0) turns[turns.length - 1]!.push(m);
    else leading.push(m);
  }
  return { leading, turns };
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** One message as summariser input, with tool arguments and results cut short. */
export function formatMessage(m: StoredMessage): string {
  if (m.kind === 'summary') return `Earlier summary:\n${(m.content ?? '').trim()}`;
  const images = m.images?.length ? ` [${m.images.length} image(s)]` : '';
  const content = (m.content ?? '').trim();
  switch (m.role) {
    case 'user':
      return `User: ${content}${images}`;
    case 'assistant': {
      const lines = content || images ? [`Assistant: ${content}${images}`] : [];
      for (const call of m.tool_calls ?? []) {
        lines.push(
          `Assistant called ${call.name}(${cut(JSON.stringify(call.arguments ?? {}), ARGUMENT_CHARS)})`,
        );
      }
      return lines.join('\n');
    }
    case 'tool':
      return `Result of ${m.name ?? 'tool'}: ${cut(content, RESULT_CHARS)}`;
    default:
      // A client's system messages stay verbatim before the summary; any other stored one (an
      // imported file's) is for nobody, and must not reach the model through the summary.
      return '';
  }
}

/**
 * Summariser input for `older` (an earlier summary first), at most INPUT_CHARS characters. When
 * over, the most recent part of the turns is kept, after the earlier summary (itself capped).
 */
export function formatForSummary(older: readonly StoredMessage[]): string {
  const summaries = older.filter((m) => m.kind === 'summary').map(formatMessage);
  const rest = older
    .filter((m) => m.kind !== 'summary')
    .map(formatMessage)
    .filter((s) => s.length > 0);
  let head = summaries.join('\n\n');
  if (head.length > EARLIER_SUMMARY_CHARS) head = `${head.slice(0, EARLIER_SUMMARY_CHARS)}…`;
  const separator = head ? '\n\n' : '';
  let body = rest.join('\n');
  const room = INPUT_CHARS - head.length - separator.length;
  if (body.length > room) {
    const marker = '[…older messages omitted]\n';
    body = marker + body.slice(body.length - (room - marker.length));
  }
  return head + separator + body;
}

/**
 * Summarises everything before the last `keepRecent` turns. Resolves to null when there is
 * nothing to compress (no turn older than the kept ones); rejects when the summariser fails or
 * answers nothing, in which case the caller keeps the context as it was.
 */
export async function compressContext(
  request: CompressContextRequest,
): Promise<CompressContextResult | null> {
  const { context, backend, model, temperature, signal } = request;
  const keepRecent = Math.max(0, Math.floor(request.keepRecent));
  const { leading, turns } = partitionTurns(context);
  const olderTurns = turns.slice(0, Math.max(0, turns.length - keepRecent));
  if (olderTurns.length === 0) return null;
  const kept = turns.slice(olderTurns.length);
  const older = [...leading, ...olderTurns.flat()];

  const messages: ChatMessage[] = [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: formatForSummary(older) },
  ];
  let result: Awaited<ReturnType<typeof backend.complete>>;
  try {
    result = await backend.complete({
      messages,
      model,
      ...(request.contextWindow !== undefined ? { contextWindow: request.contextWindow } : {}),
      temperature,
      think: false,
      signal,
    });
  } catch (err) {
    // Sent all the same, and the server may have worked on it: it counts as what it was sent.
    request.countCall?.(estimateCall({ messages, text: '' }));
    throw err;
  }
  request.countCall?.(result.usage ?? estimateCall({ messages, text: result.content }));
  // A cut or failed answer may still carry some text: a half summary must not replace history.
  if (result.reason === 'error' || result.reason === 'aborted')
    throw new Error(`the summariser call ended with ${result.reason}; the context was left as it was`);
  const text = result.content.trim();
  if (!text) throw new Error('the summariser returned an empty answer; the context was left as it was');

  const now = request.now ?? (() => new Date());
  const summary: StoredMessage = {
    id: (request.newId ?? randomUUID)(),
    role: 'user',
    content: text,
    kind: 'summary',
    created_at: now().toISOString(),
  };
  return {
    summary,
    firstKeptId: kept[0]?.[0]?.id ?? null,
    removedCount: older.length,
  };
}

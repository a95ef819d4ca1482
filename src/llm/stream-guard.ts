/**
 * The single place where a backend's stream failures become the closing `done` chunk, so every
 * backend keeps the contract of `streamComplete`: never throw, end with exactly one `done`.
 */
import { cutFailure, malformedFailure, type ServerInfo } from './failures.js';
import { CallerAbort } from './http.js';
import { StreamParseError } from './ndjson.js';
import type { CompletionResult, LlmChunk, LlmFailure } from './types.js';
import { LlmError } from './types.js';

/**
 * Runs `produce`, which yields deltas and ends with its own `done`; any exception it throws
 * becomes `done` with reason `aborted` (the caller's signal fired) or `error`.
 */
export async function* guardStream(
  server: ServerInfo,
  signal: AbortSignal | undefined,
  produce: () => AsyncGenerator<LlmChunk>,
): AsyncGenerator<LlmChunk> {
  try {
    yield* produce();
  } catch (error) {
    if (error instanceof CallerAbort || signal?.aborted) {
      yield { type: 'done', reason: 'aborted' };
      return;
    }
    yield { type: 'done', reason: 'error', error: failureOf(server, error) };
  }
}

export function failureOf(server: ServerInfo, error: unknown): LlmFailure {
  if (error instanceof LlmError) return error.toFailure();
  if (error instanceof StreamParseError)
    return malformedFailure(server, `${error.message}: "${error.excerpt}"`);
  const text = error instanceof Error ? error.message : String(error);
  return cutFailure(server, `unexpected: ${text}`);
}

/**
 * Folds a chunk stream into one result: the one code path behind every `complete()`.
 * Resolves with reason `aborted` (and what arrived so far) when the caller aborted;
 * rejects with `LlmError` when the stream ended with an error.
 */
export async function foldStream(
  stream: AsyncIterable<LlmChunk>,
  describe: string,
): Promise<CompletionResult> {
  let content = '';
  let thinking = '';
  const toolCalls: CompletionResult['toolCalls'] = [];
  for await (const chunk of stream) {
    if (chunk.type === 'text') content += chunk.delta;
    else if (chunk.type === 'thinking') thinking += chunk.delta;
    else if (chunk.type === 'tool_call') toolCalls.push(chunk.call);
    else {
      if (chunk.reason === 'error') {
        throw new LlmError(
          chunk.error ?? { code: 'malformed', message: `${describe}: the answer failed without a reason.` },
        );
      }
      return {
        content,
        thinking,
        toolCalls,
        reason: chunk.reason,
        ...(chunk.usage ? { usage: chunk.usage } : {}),
      };
    }
  }
  throw new LlmError({
    code: 'malformed',
    message: `${describe}: the answer stream ended without finishing.`,
  });
}

/**
 * What the chat says when something went wrong: a refusal that ended no run (the error box),
 * and a failed turn, a run that ended with an error, which stays in the conversation (live from
 * the `error` event, after a reload from the stored `kind: 'error'` message) with a Retry button.
 */
import type { ErrorCode } from '../../../src/protocol/error-codes.js';
import { type ErrorEntry, newKey } from './entries.js';
import { isLlmFailure } from './llm-health.js';

/** What to do after an error the server sent outside a failed turn (a refusal, mostly). */
export function errorHint(code: ErrorCode | undefined, recoverable: boolean): string {
  if (recoverable) return 'Nothing was lost: fix what the message says and try again.';
  if (isLlmFailure(code)) {
    return 'The run ended. Check that the LLM server is running (npx navi doctor tells you what is wrong), then send your message again.';
  }
  if (code === 'CONTEXT_OVERFLOW') {
    return 'The run ended: the conversation no longer fits the model. Start a new conversation, or use a model with a larger context window.';
  }
  return 'The run ended. What was already said is saved: you can send your message again.';
}

/** What to do after a failed turn, whose entry has a Retry button. */
export function retryHint(code: ErrorCode | undefined): string {
  if (isLlmFailure(code)) {
    return 'Check that the LLM server is running (npx navi doctor tells you what is wrong), then press Retry to send your message again.';
  }
  if (code === 'CONTEXT_OVERFLOW') {
    return 'Start a new conversation, or use a model with a larger context window; Retry sends the same conversation again.';
  }
  return 'What was already said is saved: press Retry to send your message again.';
}

/** The failure in a few plain words, above the server's own sentence. */
export function failureHeadline(code: ErrorCode | undefined): string {
  switch (code) {
    case 'LLM_UNAVAILABLE':
      return 'No model is set up for this conversation.';
    case 'LLM_UNREACHABLE':
      return 'Navi could not reach the model.';
    case 'LLM_TIMEOUT':
      return 'The model took too long to answer.';
    case 'LLM_HTTP_ERROR':
      return "The model's server answered with an error.";
    case 'LLM_AUTH':
      return "The model's server did not accept Navi's key.";
    case 'LLM_MODEL_NOT_FOUND':
      return 'The model is not on its server.';
    case 'LLM_MALFORMED':
      return "The model's answer could not be read.";
    case 'LLM_UNSUPPORTED':
      return 'The model cannot do what this answer needs.';
    case 'CONTEXT_OVERFLOW':
      return 'The conversation is too long for the model.';
    default:
      return 'This answer failed.';
  }
}

/** The entry of a failed turn, from the `error` event or the stored message. */
export function failedTurnEntry(
  message: string,
  code: ErrorCode | undefined,
  messageId?: string,
): ErrorEntry {
  return {
    kind: 'error',
    key: newKey('failed'),
    message,
    hint: retryHint(code),
    failed: true,
    ...(code !== undefined ? { code } : {}),
    ...(messageId !== undefined ? { messageId } : {}),
  };
}

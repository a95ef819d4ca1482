/**
 * How strict chat templates (Mistral's, Llama 2's) judge a conversation: after an optional
 * system message, user and assistant take turns; tool results may follow each other.
 */
import type { RecordedMessage, WireFormat } from './types.js';

export const ALTERNATION_ERROR = 'Conversation roles must alternate user/assistant/user/assistant/...';
export const SYSTEM_FIRST_ERROR = 'System message must be at the beginning.';

/** What a strict template would raise for these messages, or undefined when it takes them. */
export function strictRolesProblem(messages: readonly RecordedMessage[]): string | undefined {
  for (const [i, message] of messages.entries()) {
    if (message.role === 'system' && i > 0) return SYSTEM_FIRST_ERROR;
    const previous = messages[i - 1];
    if (
      previous &&
      previous.role === message.role &&
      (message.role === 'user' || message.role === 'assistant')
    ) {
      return ALTERNATION_ERROR;
    }
  }
  return undefined;
}

/** The HTTP 400 body the server sends, in the error shape of its wire format. */
export function strictRolesBody(format: WireFormat, problem: string): string {
  return JSON.stringify(
    format === 'ollama'
      ? { error: problem }
      : { error: { message: problem, type: 'invalid_request_error', code: null } },
  );
}

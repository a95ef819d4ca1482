/**
 * Strict chat templates (Mistral's, Llama 2's, several GGUF templates run by llama.cpp) refuse a
 * conversation in which two user or two assistant messages follow each other ("Conversation roles
 * must alternate user/assistant/user/assistant/..."), or a system message that is not the first.
 * Navi's context has both: a plan, the text said before tool calls and the calls themselves are
 * three assistant messages in a row; a run that failed leaves a user message without an answer;
 * a summary is a user message before the kept ones. Every backend passes its messages through
 * `alternateRoles` just before sending, so any model takes them; the stored context keeps its shape.
 */
import type { ChatMessage } from './types.js';

/**
 * The same conversation with neighbours of the same role merged: every system message becomes
 * one, first; consecutive user messages become one, and so do consecutive assistant messages
 * (texts joined by a blank line, images and tool calls kept in order). Tool results stay as they
 * are: several in a row is how every API answers parallel calls. The input is not modified.
 */
export function alternateRoles(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  const systems = messages.filter((m) => m.role === 'system');
  const [onlySystem] = systems;
  if (onlySystem) out.push(systems.length === 1 ? onlySystem : merge(systems));
  for (const message of messages) {
    if (message.role === 'system') continue;
    const previous = out.at(-1);
    if (previous && previous.role === message.role && message.role !== 'tool') {
      out[out.length - 1] = merge([previous, message]);
    } else {
      out.push(message);
    }
  }
  return out;
}

/** One message of the first one's role holding what all of `parts` say. */
function merge(parts: readonly ChatMessage[]): ChatMessage {
  const role = parts[0]?.role ?? 'user';
  const texts = parts.flatMap((p) => (p.content !== null && p.content.trim() !== '' ? [p.content] : []));
  // null only when every part was null (an assistant message that only calls tools).
  const content = texts.length > 0 ? texts.join('\n\n') : parts.some((p) => p.content !== null) ? '' : null;
  const merged: ChatMessage = { role, content };
  const images = parts.flatMap((p) => p.images ?? []);
  if (images.length > 0) merged.images = images;
  const calls = parts.flatMap((p) => p.tool_calls ?? []);
  if (calls.length > 0) merged.tool_calls = calls;
  return merged;
}

/**
 * Turns the stored context buffer into the messages an LLM API accepts: the one place where a
 * message's typed fields become text for the model (attached files, the summary heading).
 * A run killed between a tool call and its result leaves a call without a result; APIs reject
 * that, so such calls get a synthetic result saying the call was interrupted, and orphan
 * results are dropped.
 */
import type { ChatMessage } from '../llm/types.js';
import type { RecallStamp } from '../protocol/rest.js';
import { formatDuration } from '../recall/duration.js';
import type { StoredMessage } from '../store/types.js';

export const INTERRUPTED_RESULT =
  'The tool call was interrupted before it finished (Navi stopped or restarted).';

/** Heads a summary, so the model knows it is not something the user said. */
export const SUMMARY_PREFIX = '[Summary of earlier conversation]';

/**
 * Heads the prompt of a recall run, so the model knows who is speaking (its own earlier self),
 * that nobody is watching, and whether the recall is late.
 */
export function recallHeader(stamp: RecallStamp): string {
  const late =
    stamp.late_ms !== undefined
      ? `, and is running ${formatDuration(stamp.late_ms)} late (Navi was not running, or this session was busy, when it came due)`
      : '';
  return (
    `[Recall ${stamp.recall_id}: a prompt you scheduled earlier. It was due at ${stamp.scheduled_for}${late}. ` +
    'Nobody is watching this run live, so nobody can approve actions: do what it asks with the tools you may use, ' +
    'and end with a short account of what you did for the user to read later.]'
  );
}

/** The text the model reads for a user or assistant message. */
export function modelText(m: StoredMessage): string | null {
  if (m.kind === 'summary') return `${SUMMARY_PREFIX}\n${m.content ?? ''}`;
  if (m.recall) return `${recallHeader(m.recall)}\n${m.content ?? ''}`;
  if (m.attachments && m.attachments.length > 0) {
    const list = m.attachments.map((f) => `- ${f.name}: ${f.path}`).join('\n');
    return `${m.content ?? ''}\n\n[Attached files]\n${list}`;
  }
  return m.content;
}

export function toChatMessages(context: readonly StoredMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let pending: Map<string, string> | undefined; // call id → tool name, awaiting results

  const closePending = () => {
    if (!pending) return;
    for (const [id, name] of pending)
      out.push({ role: 'tool', content: INTERRUPTED_RESULT, tool_call_id: id, name });
    pending = undefined;
  };

  for (const m of context) {
    if (m.role === 'tool') {
      if (!pending || !m.tool_call_id || !pending.has(m.tool_call_id)) continue;
      pending.delete(m.tool_call_id);
      out.push({
        role: 'tool',
        content: m.content ?? '',
        tool_call_id: m.tool_call_id,
        ...(m.name ? { name: m.name } : {}),
      });
      if (pending.size === 0) pending = undefined;
      continue;
    }
    closePending();
    // Navi's own system prompt is rebuilt per call and never stored. Only a system message Navi
    // tagged when it adopted a client's history reaches the model
    // (docs/openai-api.md#sessions-and-history): an untagged one came from an imported file or an
    // older Navi, and would otherwise instruct the model with nobody's authority. A failure record
    // never reaches it either.
    if (m.role === 'system') {
      if (m.kind === 'client_system') out.push({ role: 'system', content: m.content ?? '' });
      continue;
    }
    const msg: ChatMessage = { role: m.role, content: modelText(m) };
    if (m.images && m.images.length > 0) msg.images = m.images;
    if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
      msg.tool_calls = m.tool_calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
      pending = new Map(m.tool_calls.map((c) => [c.id, c.name]));
    }
    out.push(msg);
  }
  closePending();
  return out;
}

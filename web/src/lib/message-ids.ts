/**
 * Gives the entries built from live events the ids of the messages no event named. A run's
 * events name its user message and its final answer (lib/timeline.ts); a plan, text said before
 * tool calls or a failed run's partial answer has no id until the client reads the session again
 * and matches what it shows against what the history would show: same kind and same text (a
 * tool card by its call id), walking both from the end, so the newest entries, the ones the
 * actions need, are matched first. An entry with no counterpart (a message the server refused, a
 * notice only the live view shows) keeps no id, and nothing else moves.
 */
import type { ChatEntry } from './entries.js';

/** What must agree for a live entry and a history entry to show the same message. */
function signature(entry: ChatEntry): string {
  switch (entry.kind) {
    case 'user':
    case 'assistant':
    case 'thinking':
    case 'notice':
      return `${entry.kind}:${entry.text.trim()}`;
    case 'plan':
      return `plan:${entry.plan.trim()}`;
    case 'tool':
      return `tool:${entry.callId}`;
    case 'error':
      return `error:${entry.failed ? 'failed' : 'refused'}:${entry.message.trim()}`;
  }
}

/**
 * Copies `messageId` from `fresh` (entries rebuilt from `GET /sessions/{id}`) onto the matching
 * entries of `view`, in place. Returns how many entries received an id.
 */
export function adoptMessageIds(view: readonly ChatEntry[], fresh: readonly ChatEntry[]): number {
  let adopted = 0;
  let j = fresh.length - 1;
  for (let i = view.length - 1; i >= 0 && j >= 0; i -= 1) {
    const entry = view[i];
    if (!entry) continue;
    // An entry that already has its id (it came from the history) anchors the walk.
    if (entry.messageId !== undefined) {
      const id = entry.messageId;
      const anchored = fresh.findLastIndex((f, at) => at <= j && f.messageId === id);
      if (anchored >= 0) j = anchored - 1;
      continue;
    }
    // Look back for the same message; entries only the history shows are passed over.
    const wanted = signature(entry);
    let k = j;
    while (k >= 0 && signature(fresh[k] as ChatEntry) !== wanted) k -= 1;
    if (k < 0) continue;
    const id = fresh[k]?.messageId;
    if (id !== undefined) {
      entry.messageId = id;
      adopted += 1;
    }
    j = k - 1;
  }
  return adopted;
}

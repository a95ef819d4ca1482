/**
 * `history_rewound`: a regenerate or edit run removed a message and everything after it from
 * the session, and the chat drops them from its view before the run's events add what replaces
 * them.
 *
 * Entries are found by their message id. Some entries built from live events have none (what no
 * event names waits for a read of the session), so the client's own request also says where to
 * cut: an edit at the bubble being edited, a regenerate after the last message the person sent.
 */
import type { EventOf } from '../../../src/protocol/events.js';
import type { ChatEntry, UserEntry } from './entries.js';

/** A regenerate or edit this client sent and whose rewind it is waiting for. */
export type PendingRewind =
  | { kind: 'regenerate' }
  /** `entry` is the bubble being edited; `replacement` the bubble of the new text, shown instead. */
  | { kind: 'edit'; entry: UserEntry; replacement: UserEntry };

/**
 * Drops the rewound entries from `entries` (in place). Returns true when the rewind came from
 * elsewhere (another tab) and changed the view: the view then lacks what replaced them (an edit's
 * new text) and should be read again from the server once the run is over. A rewind whose
 * messages are not in the view (a history loaded after it happened) changes nothing.
 */
export function rewind(
  entries: ChatEntry[],
  event: EventOf<'history_rewound'>,
  request: PendingRewind | null,
): boolean {
  const removed = new Set([event.from_message_id, ...event.removed_ids]);
  let cut = entries.findIndex((entry) => entry.messageId !== undefined && removed.has(entry.messageId));
  if (request?.kind === 'edit') {
    const own = entries.findIndex((entry) => entry.key === request.entry.key);
    if (own >= 0) cut = own;
  } else if (request?.kind === 'regenerate' && cut < 0) {
    cut = entries.findLastIndex((entry) => entry.kind === 'user') + 1;
    if (cut === 0) cut = -1;
  }
  if (cut < 0) return false;
  entries.splice(cut);
  return request === null;
}

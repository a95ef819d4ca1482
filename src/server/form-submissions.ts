/**
 * A form is answered once. The second `form_submit` for the same form of a session (another
 * tab, a replayed frame, a double click that beat the page) is refused instead of starting a
 * second run with the same answer. Each submitted form is one key of the session's key-value
 * state, so the rule holds across restarts and goes with the session when it is deleted; the
 * in-memory set closes the gap between reading and writing that key.
 */
import type { Logger } from 'pino';
import { isTerminalEvent } from '../protocol/events.js';
import type { KvStore, StoredMessage } from '../store/types.js';
import type { AgentRun } from './agent-run.js';

const keyOf = (formId: string) => `form_submitted:${formId}`;

export class FormSubmissions {
  private readonly claiming = new Set<string>();

  constructor(private readonly kv: KvStore) {}

  /** Claims the one submission of a form; false when it was (or is being) submitted already. */
  async claim(sessionId: string, formId: string, now = new Date()): Promise<boolean> {
    const claim = `${sessionId}\n${formId}`;
    if (this.claiming.has(claim)) return false;
    this.claiming.add(claim);
    try {
      if ((await this.kv.get(sessionId, keyOf(formId))) !== undefined) return false;
      await this.kv.set(sessionId, keyOf(formId), now.toISOString());
      return true;
    } finally {
      this.claiming.delete(claim);
    }
  }

  /** Gives a claim back when its run could not start, so the person can submit again. */
  async release(sessionId: string, formId: string): Promise<void> {
    await this.kv.delete(sessionId, keyOf(formId));
  }

  /**
   * Gives back the claims of the forms whose answers the regenerate or edit `run` removes, once
   * its `history_rewound` names them: the agent, asked anew, may draw such a form again under the
   * same id, and the person must be able to answer it. `messages` is the session's display
   * history as it was before the run, where the removed answers are still found.
   */
  reopenRemoved(run: AgentRun, sessionId: string, messages: readonly StoredMessage[], log: Logger): void {
    const answers = new Map<string, string>();
    for (const m of messages)
      if (m.kind === 'form_submit' && m.form_submit) answers.set(m.id, m.form_submit.form_id);
    if (answers.size === 0) return;
    run.subscribe({
      kind: 'internal',
      deliver: (event) => {
        if (event.type !== 'history_rewound') return !isTerminalEvent(event);
        for (const id of event.removed_ids) {
          const formId = answers.get(id);
          if (formId === undefined) continue;
          this.release(sessionId, formId).catch((err: unknown) =>
            log.error({ err, form_id: formId }, 'reopening a form whose answer a rewind removed failed'),
          );
        }
        return false;
      },
    });
  }
}

/**
 * A form is answered once. The second `form_submit` for the same form of a session (another
 * tab, a replayed frame, a double click that beat the page) is refused instead of starting a
 * second run with the same answer. Each submitted form is one key of the session's key-value
 * state, so the rule holds across restarts and goes with the session when it is deleted; the
 * in-memory set closes the gap between reading and writing that key.
 */
import type { KvStore } from '../store/types.js';

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
}

/**
 * Something that receives the events of a run: a WebSocket client, or the REST handler waiting
 * for a run it started. Delivery never blocks the run.
 */
import type { ServerEvent } from '../protocol/events.js';

export interface RunSubscriber {
  /**
   * `socket` subscribers are people who can answer a tool confirmation; `internal` ones (the
   * REST request that started a run) cannot.
   */
  readonly kind: 'socket' | 'internal';
  /**
   * Delivers one event (`json` is its serialised form, shared by every subscriber). Returns
   * false when the subscriber is gone or too slow and must be dropped. Must not throw.
   */
  deliver(event: ServerEvent, json: string): boolean;
}

/**
 * The words a tool card shows for how its call ended. `success: false` alone covers a person
 * saying no, a policy refusal, a time limit and a real failure alike; the `outcome` the server
 * sends (live on `tool_call`, stored on the tool result message) tells them apart, so a denied
 * call does not read as if the tool broke.
 */
import type { ToolOutcome } from '../../../src/protocol/events.js';
import type { ConfirmState, ToolStatus } from './entries.js';

/** What the card needs to name its state. */
export interface OutcomeSubject {
  status: ToolStatus;
  outcome?: ToolOutcome;
  confirm: ConfirmState;
}

const outcomeLabels: Record<ToolOutcome, string> = {
  ok: 'done',
  failed: 'failed',
  denied: 'denied',
  confirmation_timeout: 'confirmation timed out',
  refused: 'refused by policy',
  timed_out: 'timed out',
  stopped: 'stopped',
};

/** Outcomes where the tool itself did nothing wrong: shown muted, not as an error. */
const notTheToolsFault: ReadonlySet<ToolOutcome> = new Set<ToolOutcome>([
  'denied',
  'confirmation_timeout',
  'refused',
  'stopped',
]);

/** The card's status line: "running", "waiting for approval", "done", "denied", "timed out"… */
export function toolStatusLabel(card: OutcomeSubject): string {
  if (card.confirm === 'pending') return 'waiting for approval';
  if (card.status === 'running') return 'running';
  // An outcome this client does not know (a newer server) falls back on success or failure.
  const label = card.outcome && card.status !== 'cancelled' ? outcomeLabels[card.outcome] : undefined;
  if (label) return label;
  switch (card.status) {
    case 'done':
      return 'done';
    case 'failed':
      return 'failed';
    default:
      return 'not finished';
  }
}

/**
 * How the card looks: `ok`, `failed` (red: the tool or its arguments went wrong, or it ran out of
 * time), `declined` (muted: a person, the policy or a stop kept it from running) or `pending`.
 */
export function toolTone(card: OutcomeSubject): 'ok' | 'failed' | 'declined' | 'pending' {
  if (card.status === 'running' || card.status === 'cancelled') return 'pending';
  if (card.outcome && notTheToolsFault.has(card.outcome)) return 'declined';
  return card.status === 'done' ? 'ok' : 'failed';
}

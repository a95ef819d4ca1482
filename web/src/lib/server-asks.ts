/**
 * What an MCP server asks during a tool call, on that call's card: its forms
 * (`elicitation_request` / `elicitation_resolved`) and its requests to use Navi's model (a
 * `tool_confirm_request` whose tool is `mcp_sampling`). See docs/mcp.md#elicitation.
 */
import type { ClientCommand } from '../../../src/protocol/commands.js';
import {
  type ElicitationAction,
  type EventOf,
  isTerminalEvent,
  MCP_SAMPLING_TOOL,
  type SamplingConfirmArgs,
  type ServerEvent,
} from '../../../src/protocol/events.js';
import type { ElicitationView, SamplingView, ToolEntry } from './entries.js';

/** The call a sampling confirmation came during (`<call id>/sampling/<n>`), or undefined for any other. */
export function samplingCallOf(event: EventOf<'tool_confirm_request'>): string | undefined {
  if (event.tool !== MCP_SAMPLING_TOOL) return undefined;
  const at = event.call_id.lastIndexOf('/sampling/');
  return at > 0 ? event.call_id.slice(0, at) : undefined;
}

/** Puts a sampling confirmation on the card of its call; asked again, it waits again. */
export function addSampling(card: ToolEntry, event: EventOf<'tool_confirm_request'>): void {
  card.samplings ??= [];
  const samplings = card.samplings;
  const known = samplings.find((s) => s.callId === event.call_id);
  if (known) known.state = 'pending';
  else
    samplings.push({
      callId: event.call_id,
      args: event.args as unknown as SamplingConfirmArgs,
      state: 'pending',
    });
}

/**
 * Once the call is over nobody can answer what it still asked: a sampling confirmation still
 * waiting is withdrawn (state null), and so is a form still open or sending (resolved with no
 * action). The form's own `elicitation_resolved`, if it comes later, still says how it ended.
 */
export function withdrawAsks(card: ToolEntry): void {
  for (const sampling of card.samplings ?? []) if (sampling.state === 'pending') sampling.state = null;
  for (const form of card.elicitations ?? []) if (form.state !== 'resolved') form.state = 'resolved';
}

/** Puts a server's form on the card of its call; a replayed one is not shown twice. */
export function addElicitation(card: ToolEntry, event: EventOf<'elicitation_request'>): void {
  card.elicitations ??= [];
  const forms = card.elicitations;
  if (forms.some((f) => f.id === event.elicitation_id)) return;
  forms.push({
    id: event.elicitation_id,
    server: event.server,
    message: event.message,
    form: event.form,
    state: 'open',
  });
}

export function findElicitation(cards: Iterable<ToolEntry>, id: string): ElicitationView | undefined {
  for (const card of cards) {
    const form = card.elicitations?.find((f) => f.id === id);
    if (form) return form;
  }
  return undefined;
}

/** How a form ended turns it into a line. */
export function resolveElicitation(cards: Iterable<ToolEntry>, event: EventOf<'elicitation_resolved'>): void {
  const form = findElicitation(cards, event.elicitation_id);
  if (!form) return;
  form.state = 'resolved';
  form.action = event.action;
  if (event.reason !== undefined) form.reason = event.reason;
}

/** The line a resolved form becomes; with no action, its call ended before it was answered. */
export function elicitationLine(form: ElicitationView): string {
  if (form.action === undefined) return 'Withdrawn: the call ended before anyone answered.';
  if (form.action === 'accept') return `You answered ${form.server}'s form.`;
  if (form.reason) return `${form.action === 'decline' ? 'Declined' : 'Cancelled'}: ${form.reason}.`;
  return form.action === 'decline' ? 'Declined.' : 'Cancelled.';
}

/** Whether any card waits for the person: a form to fill in or a server's use of the model. */
export function waitsForPerson(card: ToolEntry): boolean {
  return (
    card.confirm === 'pending' ||
    (card.elicitations ?? []).some((f) => f.state !== 'resolved') ||
    (card.samplings ?? []).some((s) => s.state === 'pending')
  );
}

/**
 * Applies what `event` means for the servers' requests on the cards: true when that is all the
 * event means (the timeline has nothing more to do with it). A call's end or the run's end
 * leaves nobody to answer what the server still asked.
 */
export function applyServerAsk(event: ServerEvent, cards: () => ToolEntry[]): boolean {
  const findCard = (callId: string) => cards().find((card) => card.callId === callId);
  if (event.type === 'tool_confirm_request') {
    const call = samplingCallOf(event);
    const card = call === undefined ? undefined : findCard(call);
    if (card) addSampling(card, event);
    return card !== undefined;
  }
  if (event.type === 'elicitation_request') {
    // The call's `tool_started` came first, also in a replay: its card is there.
    const card = findCard(event.call_id);
    if (card) addElicitation(card, event);
    return true;
  }
  if (event.type === 'elicitation_resolved') {
    resolveElicitation(cards(), event);
    return true;
  }
  if (event.type === 'tool_call') {
    const card = findCard(event.call_id);
    if (card) withdrawAsks(card);
  } else if (isTerminalEvent(event)) {
    for (const card of cards()) withdrawAsks(card);
  }
  return false;
}

/** The commands that answer a server's questions, and what a refused answer undoes. */
export interface ServerAskAnswers {
  answerElicitation(form: ElicitationView, action: ElicitationAction, values?: Record<string, unknown>): void;
  answerSampling(sampling: SamplingView, approved: boolean): void;
  /** Reads every event: a refusal of this client's last answer opens its question again. */
  observe(event: ServerEvent): void;
}

/**
 * The chat's side of answering: `send` puts a command on the socket (false when it is not
 * connected) and `notSent` says so to the person.
 */
export function serverAskAnswers(
  send: (command: ClientCommand) => boolean,
  notSent: (text: string) => void,
): ServerAskAnswers {
  let lastForm: ElicitationView | null = null;
  let lastSampling: SamplingView | null = null;
  return {
    answerElicitation(form, action, values) {
      const command: ClientCommand = {
        type: 'elicitation_answer',
        elicitation_id: form.id,
        action,
        ...(action === 'accept' ? { values: values ?? {} } : {}),
      };
      if (!send(command)) {
        notSent(
          'Not connected to the server: your answer was not sent. Try again when the connection is back.',
        );
        return;
      }
      form.state = 'sending';
      if (values) form.sent = values;
      lastForm = form;
    },
    answerSampling(sampling, approved) {
      if (!send({ type: 'tool_confirm', call_id: sampling.callId, approved })) {
        notSent('Not connected to the server: your answer was not sent.');
        return;
      }
      sampling.state = approved ? 'sent-approve' : 'sent-deny';
      lastSampling = sampling;
    },
    observe(event) {
      if (event.type !== 'error' || event.run_id !== undefined) return;
      // Refused (a value that does not fit the server's schema, no consent): the error says why,
      // and the form opens again with what was typed in it.
      if (lastForm?.state === 'sending') lastForm.state = 'open';
      lastForm = null;
      if (event.code === 'CONSENT_REQUIRED' && lastSampling && lastSampling.state !== null)
        lastSampling.state = 'pending';
      lastSampling = null;
    },
  };
}

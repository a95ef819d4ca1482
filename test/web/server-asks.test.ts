/**
 * What an MCP server asks during a call, in the web client's timeline (web/src/lib/server-asks.ts):
 * its form and its request to use Navi's model land on the card of their call (a subagent's call
 * too), a replay shows them once, how a form ended becomes its line, a call or run that ends
 * leaves nothing waiting, and a refused answer opens the form again.
 */
import { describe, expect, it } from 'vitest';
import type { ClientCommand } from '../../src/protocol/commands.js';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { ToolEntry } from '../../web/src/lib/entries.js';
import { elicitationLine, serverAskAnswers, waitsForPerson } from '../../web/src/lib/server-asks.js';
import { Timeline } from '../../web/src/lib/timeline.js';

const form = {
  form_id: 'elicit-e1',
  fields: [{ name: 'name', label: 'Name', type: 'text' as const, required: true }],
  submit_label: 'Send',
};

function apply(t: Timeline, events: ServerEvent[], from = 0): void {
  let seq = from;
  for (const event of events) t.apply({ ...event, run_id: 'r1', seq: ++seq } as ServerEvent);
}

const start: ServerEvent = { type: 'stream_start', trigger: 'user' } as ServerEvent;
const started = (call_id: string, tool = 'mcp__asking__ask'): ServerEvent => ({
  type: 'tool_started',
  call_id,
  tool,
  args: {},
  is_subagent: false,
});
const asked: ServerEvent = {
  type: 'elicitation_request',
  elicitation_id: 'e1',
  call_id: 'c1',
  server: 'asking',
  message: 'Your name?',
  form,
};

function card(t: Timeline, callId: string): ToolEntry {
  const found = t.cards().find((c) => c.callId === callId);
  if (!found) throw new Error(`no card ${callId}`);
  return found;
}

describe('server asks in the timeline', () => {
  it('puts the form on the card of its call once, and turns it into a line when it ends', () => {
    const t = new Timeline((callback) => callback());
    apply(t, [start, started('c1'), asked]);
    // The replay a reconnecting client receives: the same run and seq, shown once.
    apply(t, [start, started('c1'), asked]);
    const c1 = card(t, 'c1');
    expect(c1.elicitations).toHaveLength(1);
    expect(c1.elicitations?.[0]).toMatchObject({ id: 'e1', server: 'asking', state: 'open' });
    expect(waitsForPerson(c1)).toBe(true);
    apply(
      t,
      [
        {
          type: 'elicitation_resolved',
          elicitation_id: 'e1',
          action: 'cancel',
          reason: 'nobody answered within 300 seconds',
        },
      ],
      3,
    );
    expect(waitsForPerson(c1)).toBe(false);
    expect(elicitationLine(c1.elicitations?.[0] as never)).toBe(
      'Cancelled: nobody answered within 300 seconds.',
    );
    expect(t.state.entries.filter((e) => e.kind === 'tool')).toHaveLength(1);
  });

  it('puts a sampling confirmation on the card of its call, not a card of its own, until the call ends', () => {
    const t = new Timeline((callback) => callback());
    apply(t, [
      start,
      started('c2', 'mcp__asking__sample'),
      {
        type: 'tool_confirm_request',
        call_id: 'c2/sampling/1',
        tool: 'mcp_sampling',
        args: { server: 'asking', messages: [{ role: 'user', text: 'Hi' }], max_tokens: 5 },
      },
    ]);
    const c2 = card(t, 'c2');
    expect(t.cards()).toHaveLength(1);
    expect(c2.confirm).toBeNull();
    expect(c2.samplings).toEqual([
      expect.objectContaining({
        callId: 'c2/sampling/1',
        state: 'pending',
        args: expect.objectContaining({ max_tokens: 5 }),
      }),
    ]);
    apply(
      t,
      [
        {
          type: 'tool_call',
          call_id: 'c2',
          tool: 'mcp__asking__sample',
          args: {},
          result: 'x',
          success: true,
          is_subagent: false,
        },
      ],
      3,
    );
    expect(c2.samplings?.[0]?.state).toBeNull();
  });

  it("withdraws a form and a sampling confirmation still open once their call's result arrives", () => {
    const t = new Timeline((callback) => callback());
    apply(t, [
      start,
      started('c1'),
      asked,
      {
        type: 'tool_confirm_request',
        call_id: 'c1/sampling/1',
        tool: 'mcp_sampling',
        args: { server: 'asking', messages: [{ role: 'user', text: 'Hi' }], max_tokens: 5 },
      },
    ]);
    const c1 = card(t, 'c1');
    expect(waitsForPerson(c1)).toBe(true);
    const result: ServerEvent = {
      type: 'tool_call',
      call_id: 'c1',
      tool: 'mcp__asking__ask',
      args: {},
      result: 'x',
      success: false,
      is_subagent: false,
    };
    apply(t, [result], 4);
    expect(waitsForPerson(c1)).toBe(false);
    expect(c1.samplings?.[0]?.state).toBeNull();
    const form = c1.elicitations?.[0];
    expect(form?.state).toBe('resolved');
    expect(elicitationLine(form as never)).toBe('Withdrawn: the call ended before anyone answered.');
    // How the form ended, reported after all, still says so.
    apply(
      t,
      [{ type: 'elicitation_resolved', elicitation_id: 'e1', action: 'cancel', reason: 'the call ended' }],
      5,
    );
    expect(elicitationLine(form as never)).toBe('Cancelled: the call ended.');
  });

  it('keeps an ordinary confirmation whose id only looks like a sampling one on a card of its own', () => {
    const t = new Timeline((callback) => callback());
    apply(t, [start, { type: 'tool_confirm_request', call_id: 'x/sampling/1', tool: 'terminal', args: {} }]);
    expect(card(t, 'x/sampling/1').confirm).toBe('pending');
  });

  it('sends answers as commands, and opens a refused form again', () => {
    const sent: ClientCommand[] = [];
    const notices: string[] = [];
    let connected = true;
    const answers = serverAskAnswers(
      (command) => {
        if (connected) sent.push(command);
        return connected;
      },
      (text) => notices.push(text),
    );
    const view = { id: 'e1', server: 'asking', message: 'm', form, state: 'open' as const };
    const shown = { ...view } as { state: 'open' | 'sending' | 'resolved' } & typeof view;
    answers.answerElicitation(shown as never, 'accept', { name: 'A' });
    expect(sent.at(-1)).toEqual({
      type: 'elicitation_answer',
      elicitation_id: 'e1',
      action: 'accept',
      values: { name: 'A' },
    });
    expect(shown.state).toBe('sending');
    answers.observe({ type: 'error', message: 'Name: too short', recoverable: true, code: 'BAD_REQUEST' });
    expect(shown.state).toBe('open');
    answers.answerElicitation(shown as never, 'decline');
    expect(sent.at(-1)).toEqual({ type: 'elicitation_answer', elicitation_id: 'e1', action: 'decline' });

    connected = false;
    const sampling = {
      callId: 'c/sampling/1',
      args: { server: 's', messages: [], max_tokens: 1 },
      state: 'pending' as const,
    };
    answers.answerSampling(sampling as never, true);
    expect(sampling.state).toBe('pending');
    expect(notices.at(-1)).toMatch(/Not connected/);
  });
});

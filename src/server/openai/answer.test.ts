import { describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../protocol/events.js';
import { AnswerBuilder, finishReasonOf } from './answer.js';

const started = (tool: string, args: Record<string, unknown>, is_subagent = false): ServerEvent => ({
  type: 'tool_started',
  call_id: `c-${tool}`,
  tool,
  args,
  is_subagent,
});
const ended = (tool: string, result: string, success = true): ServerEvent => ({
  type: 'tool_call',
  call_id: `c-${tool}`,
  tool,
  args: {},
  result,
  success,
  is_subagent: false,
});

function build(events: ServerEvent[]): { answer: AnswerBuilder; pieces: unknown[] } {
  const answer = new AnswerBuilder();
  const pieces = events.map((e) => answer.add(e)).filter((p) => p !== undefined);
  return { answer, pieces };
}

describe('AnswerBuilder', () => {
  it('keeps the answer in content and thinking with tool activity in reasoning, each on its own line', () => {
    const { answer } = build([
      { type: 'stream_start', trigger: 'user' },
      { type: 'thinking_delta', delta: 'I should look' },
      { type: 'thinking_end' },
      { type: 'stream_delta', delta: 'Let me check.' },
      started('todo', { action: 'read' }),
      ended('todo', '1. call mum (pending)\n0/1 done.'),
      { type: 'thinking_delta', delta: 'One task.' },
      { type: 'turn_thinking', thinking: 'One task.', is_subagent: false },
      { type: 'stream_delta', delta: 'You have one task.' },
    ]);
    expect(answer.content).toBe('Let me check.\n\nYou have one task.');
    expect(answer.reasoning).toBe(
      'I should look\n→ todo {"action":"read"}\n✓ todo: 1. call mum (pending)\nOne task.',
    );
  });

  it('adds nothing for events a client has no use for, and no break before the first text', () => {
    const { answer, pieces } = build([
      started('todo', { action: 'read' }),
      ended('todo', 'failed', false),
      { type: 'notice', code: 'TOOLS_TRIMMED', message: 'x' },
      { type: 'stream_delta', delta: '' },
      { type: 'stream_delta', delta: 'Done.' },
    ]);
    expect(answer.content).toBe('Done.');
    expect(answer.reasoning).toBe('→ todo {"action":"read"}\n✗ todo: failed\n');
    expect(pieces).toHaveLength(3);
  });

  it('says length for a stopped run and stop otherwise', () => {
    expect(finishReasonOf({ type: 'stream_stopped', content: 'part' })).toBe('length');
    expect(
      finishReasonOf({ type: 'stream_end', content: 'all', context_tokens: 1, max_context_tokens: 2 }),
    ).toBe('stop');
  });
});

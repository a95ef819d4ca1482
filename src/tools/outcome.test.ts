/** How a call ended: what the real executor records, read by `toolOutcome`. */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../protocol/events.js';
import { type ToolCall, ToolExecutor } from './executor.js';
import { toolOutcome } from './outcome.js';
import { ToolRegistry } from './registry.js';
import { testContext, testProfile } from './test-helpers.js';
import { type ConfirmAnswer, fail, ok, type ToolDefinition } from './types.js';

const tools: ToolDefinition[] = [
  {
    name: 'works',
    description: 'succeeds',
    parameters: { type: 'object', properties: { n: { type: 'integer' } } },
    execute: async () => ok('done'),
  },
  {
    name: 'breaks',
    description: 'fails',
    parameters: { type: 'object' },
    execute: async () => fail('broken'),
  },
  {
    name: 'throws',
    description: 'throws',
    parameters: { type: 'object' },
    execute: async () => {
      throw new Error('boom');
    },
  },
  {
    name: 'hangs',
    description: 'never ends on its own',
    parameters: { type: 'object' },
    execute: (_params, ctx) =>
      new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(fail('aborted')))),
  },
];

function executor(timeoutMs = 5000): ToolExecutor {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register({ tool, source: 'builtin' });
  return new ToolExecutor({
    registry,
    settings: { TOOL_TIMEOUT_MS: timeoutMs, TOOL_MAX_OUTPUT_CHARS: 1000 },
    logger: pino({ level: 'silent' }),
  });
}

const call = (name: string, args: Record<string, unknown> = {}): ToolCall => ({
  id: 'c1',
  name,
  arguments: args,
});
const confirming = testProfile({ confirm_tools: ['works'] });

async function outcomeOf(
  name: string,
  options: {
    args?: Record<string, unknown>;
    answer?: ConfirmAnswer;
    stop?: boolean;
    timeoutMs?: number;
  } = {},
): Promise<ToolOutcome> {
  const controller = new AbortController();
  const ctx = testContext({
    signal: controller.signal,
    ...(options.answer || options.stop
      ? {
          answer: async () => {
            if (options.stop) controller.abort();
            return options.answer ?? { approved: false, reason: 'the run was stopped' };
          },
        }
      : {}),
  });
  const profile = options.answer || options.stop ? confirming : testProfile();
  const result = await executor(options.timeoutMs).execute(call(name, options.args), ctx, profile);
  return toolOutcome(result);
}

describe('toolOutcome of what the executor returns', () => {
  it('ok, failed (the tool failed, threw, or was given bad arguments)', async () => {
    expect(await outcomeOf('works')).toBe('ok');
    expect(await outcomeOf('breaks')).toBe('failed');
    expect(await outcomeOf('throws')).toBe('failed');
    expect(await outcomeOf('works', { args: { n: 'not a number' } })).toBe('failed');
  });

  it('refused: a tool the profile does not allow, or one that does not exist', async () => {
    const ctx = testContext();
    const denied = await executor().execute(call('works'), ctx, testProfile({ denied_tools: ['works'] }));
    expect(denied.metadata).toEqual({ refused: 'policy' });
    expect(toolOutcome(denied)).toBe('refused');
    expect(await outcomeOf('no_such_tool')).toBe('refused');
  });

  it('denied when the person said no; confirmation_timeout when nobody answered or could', async () => {
    expect(
      await outcomeOf('works', { answer: { approved: false, reason: 'the user declined', declined: true } }),
    ).toBe('denied');
    expect(
      await outcomeOf('works', { answer: { approved: false, reason: 'nobody answered within 300 seconds' } }),
    ).toBe('confirmation_timeout');
    // The default context answers as a run nobody watches does.
    const unwatched = await executor().execute(call('works'), testContext(), confirming);
    expect(unwatched.metadata).toEqual({ refused: 'confirmation', confirmation: 'unanswered' });
    expect(toolOutcome(unwatched)).toBe('confirmation_timeout');
    expect(await outcomeOf('works', { answer: { approved: true } })).toBe('ok');
  });

  it('stopped when the run was stopped while its confirmation waited', async () => {
    expect(await outcomeOf('works', { stop: true })).toBe('stopped');
  });

  it('timed_out when the tool ran past its limit', async () => {
    expect(await outcomeOf('hangs', { timeoutMs: 100 })).toBe('timed_out');
  });

  it('reads hostile or unknown metadata as a plain failure', () => {
    expect(toolOutcome({ success: false, metadata: { refused: 'toString' } })).toBe('failed');
    expect(
      toolOutcome({ success: false, metadata: { refused: 'confirmation', confirmation: '__proto__' } }),
    ).toBe('confirmation_timeout');
    expect(toolOutcome({ success: false, metadata: { refused: 42 } })).toBe('failed');
    expect(toolOutcome({ success: false })).toBe('failed');
    expect(toolOutcome({ success: true, metadata: { refused: 'policy' } })).toBe('ok');
  });
});

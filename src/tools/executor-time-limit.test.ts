/**
 * The executor's time limit counts the tool's own time: while the tool waits for the person
 * (`ctx.confirm`, `ctx.elicit`), it waits too (docs/tools.md#time-limits).
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ToolExecutor } from './executor.js';
import { ToolRegistry } from './registry.js';
import { testContext, testProfile } from './test-helpers.js';
import { type ElicitAnswer, type ElicitRequest, ok, type ToolDefinition } from './types.js';

const LIMIT_MS = 1000;

function executorWith(tool: ToolDefinition): ToolExecutor {
  const registry = new ToolRegistry();
  registry.register({ tool, source: 'builtin' });
  return new ToolExecutor({
    registry,
    settings: { TOOL_TIMEOUT_MS: LIMIT_MS, TOOL_MAX_OUTPUT_CHARS: 1000 },
    logger: pino({ level: 'silent' }),
  });
}

const form = (id: string): ElicitRequest => ({
  id,
  callId: 'c1',
  server: 'asking',
  message: 'Which day?',
  form: {
    form_id: id,
    fields: [{ name: 'day', type: 'text', label: 'Day', required: true }],
    submit_label: 'Submit',
  },
  schema: { type: 'object', properties: { day: { type: 'string' } } },
});

/** Answers the person gives when the test says so. */
function person() {
  const waiting: (() => void)[] = [];
  return {
    elicit: (): Promise<ElicitAnswer> =>
      new Promise((resolve) => waiting.push(() => resolve({ action: 'accept', content: { day: 'Mon' } }))),
    answerAll: () => {
      for (const answer of waiting.splice(0)) answer();
    },
    get open() {
      return waiting.length;
    },
  };
}

describe('time limit while the person is asked', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits for the answers, several at once, and gives the tool the time that was left', async () => {
    const them = person();
    let approved = false;
    const executor = executorWith({
      name: 'asking',
      description: 'asks',
      parameters: { type: 'object', properties: {} },
      async execute(_params, ctx) {
        await new Promise((r) => setTimeout(r, 400));
        const answers = await Promise.all([ctx.elicit!(form('f1')), ctx.elicit!(form('f2'))]);
        approved = (await ctx.confirm({ callId: 'c1/x', tool: 'x', args: {} })).approved;
        await new Promise((r) => setTimeout(r, 500));
        return ok(JSON.stringify(answers));
      },
    });
    const ctx = testContext({
      elicit: them.elicit,
      answer: () => new Promise((r) => setTimeout(() => r({ approved: true }), 60_000)),
    });
    const result = executor.execute({ id: 'c1', name: 'asking', arguments: {} }, ctx, testProfile());
    await vi.advanceTimersByTimeAsync(400);
    expect(them.open).toBe(2);
    await vi.advanceTimersByTimeAsync(10 * LIMIT_MS);
    them.answerAll();
    // The confirmation takes a minute; then 500 ms of work, within the 600 ms left.
    await vi.advanceTimersByTimeAsync(60_000 + 500);
    expect(await result).toMatchObject({ success: true });
    expect(approved).toBe(true);
  });

  it('still stops a tool that runs past its own time after the answer', async () => {
    const them = person();
    const executor = executorWith({
      name: 'slow_after',
      description: 'asks, then works too long',
      parameters: { type: 'object', properties: {} },
      async execute(_params, ctx) {
        await ctx.elicit!(form('f1'));
        return new Promise(() => {});
      },
    });
    const result = executor.execute(
      { id: 'c1', name: 'slow_after', arguments: {} },
      testContext({ elicit: them.elicit }),
      testProfile(),
    );
    await vi.advanceTimersByTimeAsync(5 * LIMIT_MS);
    them.answerAll();
    await vi.advanceTimersByTimeAsync(LIMIT_MS);
    expect(await result).toMatchObject({ success: false, error: 'timeout', metadata: { timed_out: true } });
  });
});

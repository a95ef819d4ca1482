/**
 * Tool dispatch figures for `npm run bench`: what the executor's pipeline (validation, policy,
 * hook action, middleware, time limit, result normalisation and truncation) costs on top of
 * calling a tool directly. The tool does nothing, so every microsecond measured is ours.
 * Run alone with `node --import tsx bench/executor.ts`.
 */

import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { profileSchema } from '../src/config/profiles.js';
import { ToolExecutor } from '../src/tools/executor.js';
import { ToolRegistry } from '../src/tools/registry.js';
import { testContext } from '../src/tools/test-helpers.js';
import type { ToolDefinition } from '../src/tools/types.js';
import type { BenchRow } from './types.js';

const CALLS = 20_000;
const WARMUP = 2_000;

const noop: ToolDefinition = {
  name: 'noop',
  description: 'Does nothing.',
  parameters: {
    type: 'object',
    properties: { text: { type: 'string' }, count: { type: 'integer', minimum: 0, default: 1 } },
    required: ['text'],
    additionalProperties: false,
  },
  async execute() {
    return { success: true, output: 'ok' };
  },
};

/** Microseconds per call of `fn`, after a warm-up. */
async function perCall(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await fn();
  return ((performance.now() - start) * 1000) / CALLS;
}

function executorWith(logger: pino.Logger): ToolExecutor {
  const registry = new ToolRegistry();
  registry.register({ tool: noop, source: 'builtin' });
  return new ToolExecutor({
    registry,
    settings: { TOOL_TIMEOUT_MS: 120_000, TOOL_MAX_OUTPUT_CHARS: 50_000 },
    logger,
  });
}

export async function benchExecutor(): Promise<BenchRow[]> {
  const profile = profileSchema.parse({ id: 'bench', name: 'Bench', enabled_tools: ['*'] });
  const ctx = testContext();
  const args = { text: 'hello', count: 3 };
  const call = { id: 'c', name: 'noop', arguments: args };

  const direct = await perCall(() => noop.execute(args, ctx));
  const quiet = executorWith(pino({ level: 'silent' }));
  const piped = await perCall(() => quiet.execute(call, ctx, profile));
  // Production logs every call as a JSON line; a stream that drops the bytes keeps the disk out.
  const sink = new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
  const logged = executorWith(pino({ level: 'info' }, sink));
  const withLogs = await perCall(() => logged.execute(call, ctx, profile));

  return [
    { name: 'tool call, direct', value: direct, unit: 'µs/call' },
    { name: 'tool call through the executor', value: piped, unit: 'µs/call', note: 'logging off' },
    {
      name: 'executor overhead per call',
      value: piped - direct,
      unit: 'µs/call',
      note: 'validation, policy, hook, middleware, time limit, truncation',
    },
    {
      name: 'tool call through the executor, logs on',
      value: withLogs,
      unit: 'µs/call',
      note: 'audit line and call record serialised as JSON',
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await benchExecutor()) {
    console.log(
      `${r.name.padEnd(45)} ${r.value.toFixed(2).padStart(10)} ${r.unit}${r.note ? `  (${r.note})` : ''}`,
    );
  }
}

/**
 * Tool dispatch figures for `npm run bench`: what the executor's pipeline (validation, policy,
 * hook action, middleware, time limit, result normalisation and truncation) costs on top of
 * calling a tool directly. The tool does nothing, so every microsecond measured is ours.
 * Run alone with `node --import tsx bench/executor.ts`.
 */

import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createLogger } from '../src/config/logger.js';
import { profileSchema } from '../src/config/profiles.js';
import { ToolExecutor } from '../src/tools/executor.js';
import { ToolRegistry } from '../src/tools/registry.js';
import { testContext } from '../src/tools/test-helpers.js';
import type { ToolDefinition } from '../src/tools/types.js';
import { SecretMasker } from '../src/util/secret-masker.js';
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

function executorWith(logger: pino.Logger, secrets?: SecretMasker): ToolExecutor {
  const registry = new ToolRegistry();
  registry.register({ tool: noop, source: 'builtin' });
  return new ToolExecutor({
    registry,
    settings: { TOOL_TIMEOUT_MS: 120_000, TOOL_MAX_OUTPUT_CHARS: 50_000 },
    logger,
    ...(secrets ? { secrets } : {}),
    // As Navi runs: every call's arguments are searched for vault references (none here).
    references: {
      resolve: () => {
        throw new Error('the bench names no secret');
      },
    },
  });
}

/** Three secrets, as a typical set-up has (API token, LLM key, one more credential). */
function benchSecrets(): SecretMasker {
  return new SecretMasker([
    { name: 'NAVI_API_TOKEN', value: 'navi-token-5f2b9c0e7a1d4e3f' },
    { name: 'OPENAI_API_KEY', value: 'sk-proj-0123456789abcdefghijklmnop/+=' },
    { name: 'GITHUB_TOKEN', value: 'ghp_abcdefghijklmnopqrstuvwxyz012345' },
  ]);
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
  const masking = executorWith(pino({ level: 'silent' }), benchSecrets());
  const masked = await perCall(() => masking.execute(call, ctx, profile));
  // As `navi serve` runs: every log line masked too.
  const served = benchSecrets();
  const servedLogger = createLogger({ LOG_LEVEL: 'INFO', LOG_FORMAT: 'json' }, sink, served);
  const maskedLogged = executorWith(servedLogger, served);
  const maskedWithLogs = await perCall(() => maskedLogged.execute(call, ctx, profile));
  // A full-size output without a secret: the scan every large result pays.
  const secrets = benchSecrets();
  const big = 'lorem ipsum dolor sit amet, 0123456789 ABCDEF/+= '.repeat(1000).slice(0, 50_000);
  const scan = await perCall(async () => secrets.mask(big));

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
    {
      name: 'tool call through the executor, 3 secrets',
      value: masked,
      unit: 'µs/call',
      note: 'output, error, metadata and events checked for 3 secrets in all their forms',
    },
    {
      name: 'tool call through the executor, 3 secrets, logs on',
      value: maskedWithLogs,
      unit: 'µs/call',
      note: 'as navi serve runs: result and every log line masked',
    },
    {
      name: 'secret scan of a 50 000-character output',
      value: scan,
      unit: 'µs/call',
      note: 'no secret present: one pass of the precompiled pattern',
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

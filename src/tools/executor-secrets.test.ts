/**
 * The executor hides known secrets in everything a tool hands back: output, error, metadata,
 * thrown errors, emitted events, and what its middleware sees.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../protocol/events.js';
import { SecretMasker } from '../util/secret-masker.js';
import { ToolExecutor } from './executor.js';
import { ToolRegistry } from './registry.js';
import { testContext, testProfile } from './test-helpers.js';
import { ok, type ToolDefinition, type ToolResult } from './types.js';

const KEY = 'sk-live-0123456789abcdef';
const HIDDEN = '[secret hidden: OPENAI_API_KEY]';

function executorFor(
  execute: ToolDefinition['execute'],
  max = 1000,
  secrets = new SecretMasker([{ name: 'OPENAI_API_KEY', value: KEY }]),
) {
  const registry = new ToolRegistry();
  registry.register({
    tool: { name: 'leaky', description: 'Leaks.', parameters: { type: 'object', properties: {} }, execute },
    source: 'user',
  });
  const seen: ToolResult[] = [];
  const executor = new ToolExecutor({
    registry,
    settings: { TOOL_TIMEOUT_MS: 5000, TOOL_MAX_OUTPUT_CHARS: max },
    logger: pino({ level: 'silent' }),
    secrets,
    middleware: [{ name: 'spy', after: (_c, r) => void seen.push(r) }],
  });
  return async () => {
    const events: AgentEvent[] = [];
    const ctx = testContext({ emit: (e) => events.push(e) });
    const profile = testProfile({ enabled_tools: ['*'] });
    const result = await executor.execute({ id: 'c1', name: 'leaky', arguments: {} }, ctx, profile);
    return { result, events, seen };
  };
}

const run = (execute: ToolDefinition['execute'], max?: number) => executorFor(execute, max)();

describe('executor secret masking', () => {
  it('masks output, error and metadata, and the middleware sees the masked result', async () => {
    const { result, seen } = await run(async () => ({
      success: false,
      output: `plain ${KEY} b64 ${Buffer.from(`x${KEY}`).toString('base64')}`,
      error: `failed with ${encodeURIComponent(KEY)}`,
      metadata: { structured_content: { token: KEY }, list: [KEY] },
    }));
    const text = JSON.stringify(result);
    expect(text).not.toContain(KEY);
    expect(result.output).toContain(`plain ${HIDDEN} b64 `);
    expect(result.error).toBe(`failed with ${HIDDEN}`);
    expect(result.metadata).toEqual({ structured_content: { token: HIDDEN }, list: [HIDDEN] });
    expect(seen[0]).toBe(result);
  });

  it('masks a thrown error message and its stack', async () => {
    const { result } = await run(async () => {
      throw new Error(`cannot use ${KEY}`);
    });
    expect(result.success).toBe(false);
    expect(result.output).toContain(`cannot use ${HIDDEN}`);
    expect(JSON.stringify(result)).not.toContain(KEY);
  });

  it('masks a secret straddling the output limit instead of cutting it in half', async () => {
    const { result } = await run(async () => ok(`${'a'.repeat(95)}${KEY}${'b'.repeat(500)}`), 100);
    expect(result.output).not.toContain(KEY.slice(0, 5));
    expect(result.output.startsWith(`${'a'.repeat(95)}[secr`)).toBe(true);
    expect(result.output).toContain('[output truncated:');
  });

  it('masks events a tool emits', async () => {
    const { events } = await run(async (_p, ctx) => {
      ctx.emit({ type: 'stream_delta', delta: `sub says ${KEY}` });
      return ok('done');
    });
    expect(events).toEqual([{ type: 'stream_delta', delta: `sub says ${HIDDEN}` }]);
  });

  it('drops metadata it cannot serialise rather than pass it on unchecked', async () => {
    const { result } = await run(async () => {
      const metadata: Record<string, unknown> = { note: KEY };
      metadata.self = metadata;
      return { success: true, output: 'ok', metadata };
    });
    expect(result).toEqual({ success: true, output: 'ok' });
  });

  it('masks values registered after the executor was built', async () => {
    const secrets = new SecretMasker();
    const call = executorFor(async () => ok('revealed: vault-value-42424242'), 1000, secrets);
    expect((await call()).result.output).toBe('revealed: vault-value-42424242');
    secrets.add('mail_password', 'vault-value-42424242');
    expect((await call()).result.output).toBe('revealed: [secret hidden: mail_password]');
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { processGone } from '../../test/support/processes.js';
import type { Profile } from '../config/profiles.js';
import { runProcess } from '../machine/sandbox/run-process.js';
import { type ToolCall, ToolExecutor, type ToolExecutorDeps } from './executor.js';
import { ToolRegistry } from './registry.js';
import { captureLogger, type TempDir, tempModuleDir, testContext, testProfile } from './test-helpers.js';
import {
  ok,
  type ToolDefinition,
  type ToolGroup,
  type ToolParams,
  type ToolRisk,
  type ToolSource,
} from './types.js';

const silent = pino({ level: 'silent' });

/**
 * Risks as the real tools of these names declare them (MCP ones as their annotations would
 * give them); a name not listed declares nothing, like a user tool.
 */
const RISKS: Record<string, ToolRisk> = {
  ssh_exec: { reads: true, writes: true, executes: true, network: true },
  write_tool: { writes: true, executes: true },
  create_mcp_server: { writes: true, executes: true },
  terminal: { reads: true, writes: true, executes: true, network: true, sandboxed: true },
  code_exec: { reads: true, writes: true, executes: true, network: true, sandboxed: true },
  filesystem: { reads: true, writes: true },
  todo: {},
  mcp__navi_web__web_search: { reads: true, network: true },
  mcp__gnexus_creds__reveal_secret: { reads: true, network: true, secrets: true },
  mcp__gnexus_creds__create_secret: { reads: true, writes: true, network: true, secrets: true },
};

function tool(name: string, opts: Partial<ToolDefinition> & { group?: ToolGroup } = {}): ToolDefinition {
  const risk = RISKS[name];
  return {
    name,
    description: `${name} tool`,
    parameters: { type: 'object', properties: {} },
    execute: async () => ok(`${name} ran`),
    ...(risk && { risk }),
    ...opts,
  };
}

function setup(
  tools: ToolDefinition[],
  deps: Partial<ToolExecutorDeps> = {},
  source: ToolSource = 'builtin',
) {
  const registry = new ToolRegistry();
  for (const t of tools) registry.register({ tool: t, source });
  const executor = new ToolExecutor({
    registry,
    settings: { TOOL_TIMEOUT_MS: 5000, TOOL_MAX_OUTPUT_CHARS: 1000 },
    logger: silent,
    ...deps,
  });
  return { registry, executor };
}

const call = (name: string, args: Record<string, unknown> = {}): ToolCall => ({
  id: 'c1',
  name,
  arguments: args,
});
const open: Profile = testProfile();

describe('validation', () => {
  const seen: ToolParams[] = [];
  const strictTool = tool('strict', {
    parameters: {
      type: 'object',
      properties: {
        mode: { type: 'string', enum: ['fast', 'slow'] },
        count: { type: 'integer', minimum: 1 },
        tags: { type: 'array', items: { type: 'string' } },
        nested: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        level: { type: 'integer', default: 3 },
      },
      required: ['mode'],
      additionalProperties: false,
    },
    execute: async (params) => {
      seen.push(params);
      return ok('ran');
    },
  });
  const { executor } = setup([strictTool]);
  const run = (args: unknown) =>
    executor.execute(
      { id: 'c', name: 'strict', arguments: args as Record<string, unknown> },
      testContext(),
      open,
    );

  it.each([
    ['a missing required argument', {}, 'missing required argument "mode"'],
    ['a value outside the enum', { mode: 'medium' }, '"mode" must be one of "fast", "slow"'],
    ['a wrong type', { mode: 'fast', count: 'many' }, '"count" must be of type integer'],
    ['a number below the minimum', { mode: 'fast', count: 0 }, '"count" must be >= 1'],
    ['an unknown argument', { mode: 'fast', colour: 'red' }, 'unknown argument "colour"'],
    ['a wrong item type', { mode: 'fast', tags: [{}] }, '"tags.0" must be of type string'],
    [
      'a nested missing property',
      { mode: 'fast', nested: {} },
      '"nested" is missing the required property "id"',
    ],
    ['arguments that are not an object', 'mode=fast', 'the arguments must be a JSON object, got a string'],
    ['null arguments', null, 'got null'],
  ])('refuses %s with a precise message and does not run the tool', async (_what, args, message) => {
    seen.length = 0;
    const r = await run(args);
    expect(r.success).toBe(false);
    expect(r.output).toContain(message);
    expect(r.output).toContain('it was not run');
    expect(r.metadata?.refused).toBe('validation');
    expect(seen).toEqual([]);
  });

  it('lists every problem of one call', async () => {
    const r = await run({ count: 'x', colour: 1 });
    expect(r.output).toContain('missing required argument "mode"');
    expect(r.output).toContain('unknown argument "colour"');
  });

  it('coerces quoted numbers and fills defaults before the tool sees them', async () => {
    seen.length = 0;
    const r = await run({ mode: 'fast', count: '2' });
    expect(r.success).toBe(true);
    expect(seen[0]).toEqual({ mode: 'fast', count: 2, level: 3 });
  });

  it('reports a tool whose own schema is broken instead of running it', async () => {
    const { executor: ex } = setup([
      tool('broken_schema', { parameters: { type: 'object', properties: { a: { type: 'nonsense' } } } }),
    ]);
    const r = await ex.execute(call('broken_schema'), testContext(), open);
    expect(r.success).toBe(false);
    expect(r.output).toContain('parameter schema is invalid');
  });
});

describe('policy', () => {
  const tools = [
    tool('filesystem', { group: 'fs' }),
    tool('terminal', { group: 'runtime' }),
    tool('todo', { group: 'session' }),
    tool('mcp__navi_web__web_search'),
    tool('mcp__gnexus_creds__reveal_secret'),
    tool('mcp__other__thing'),
  ];
  const { registry, executor } = setup(tools);
  const names = (p: Profile) => executor.specsFor(p).map((s) => s.name);

  it('allows tools by exact name', () => {
    expect(names(testProfile({ enabled_tools: ['todo', 'terminal'] }))).toEqual(['terminal', 'todo']);
  });

  it('allows tools by glob', () => {
    expect(names(testProfile({ enabled_tools: ['mcp__*'] }))).toEqual([
      'mcp__navi_web__web_search',
      'mcp__gnexus_creds__reveal_secret',
      'mcp__other__thing',
    ]);
  });

  it('allows tools by group, deriving web and secrets from the risk of tools that name no group', () => {
    expect(names(testProfile({ enabled_tools: ['group:fs', 'group:web'] }))).toEqual([
      'filesystem',
      'mcp__navi_web__web_search',
    ]);
    expect(names(testProfile({ enabled_tools: ['group:secrets'] }))).toEqual([
      'mcp__gnexus_creds__reveal_secret',
    ]);
  });

  it('lets deny win over allow', () => {
    const p = testProfile({ enabled_tools: ['*'], denied_tools: ['group:runtime', 'mcp__gnexus_*'] });
    expect(names(p)).toEqual(['filesystem', 'todo', 'mcp__navi_web__web_search', 'mcp__other__thing']);
  });

  it('refuses a call to a tool the profile does not allow, without running it', async () => {
    let ran = false;
    const { executor: ex } = setup([
      tool('terminal', {
        group: 'runtime',
        execute: async () => {
          ran = true;
          return ok('');
        },
      }),
    ]);
    const denied = await ex.execute(
      call('terminal'),
      testContext(),
      testProfile({ id: 'p1', denied_tools: ['group:runtime'] }),
    );
    expect(denied).toMatchObject({ success: false, metadata: { refused: 'policy' } });
    expect(denied.output).toContain('denied for profile "p1" (matches "group:runtime")');
    const notEnabled = await ex.execute(
      call('terminal'),
      testContext(),
      testProfile({ enabled_tools: ['todo'] }),
    );
    expect(notEnabled.output).toContain('not enabled');
    expect(ran).toBe(false);
  });

  it('offers user tools from enabled.json to every profile, but not past a deny', () => {
    registry.register({ tool: tool('notes'), source: 'user', enabledEverywhere: true });
    registry.register({ tool: tool('other_user_tool'), source: 'user' });
    expect(names(testProfile({ enabled_tools: ['todo'] }))).toEqual(['todo', 'notes']);
    expect(names(testProfile({ enabled_tools: ['todo'], denied_tools: ['notes'] }))).toEqual(['todo']);
  });

  it('refuses an unknown tool and lists the ones on offer', async () => {
    const r = await executor.execute(call('nope'), testContext(), testProfile({ enabled_tools: ['todo'] }));
    expect(r).toMatchObject({ success: false, metadata: { refused: 'unknown' } });
    expect(r.output).toContain('Available tools: todo');
  });

  it('uses describeFor to adapt a description to the profile', () => {
    const { executor: ex } = setup([tool('pad', { describeFor: (p) => `pad for ${p.id}` })]);
    expect(ex.specsFor(testProfile({ id: 'alpha' }))[0]?.description).toBe('pad for alpha');
  });
});

describe('confirmation', () => {
  const runs: ToolParams[] = [];
  const sshExec = tool('ssh_exec', {
    parameters: { type: 'object', properties: { command: { type: 'string' } }, additionalProperties: false },
    execute: async (params) => {
      runs.push(params);
      return ok('done');
    },
  });
  const { executor } = setup([sshExec, tool('todo')]);
  afterEach(() => {
    runs.length = 0;
  });

  it('runs the call once the user approves, after asking with the call id, tool and arguments', async () => {
    const ctx = testContext({ answer: async () => ({ approved: true }) });
    const r = await executor.execute(
      { id: 'call-7', name: 'ssh_exec', arguments: { command: 'uptime' } },
      ctx,
      open,
    );
    expect(r).toMatchObject({ success: true, output: 'done' });
    expect(ctx.confirmRequests).toEqual([
      { callId: 'call-7', tool: 'ssh_exec', args: { command: 'uptime' } },
    ]);
    expect(runs).toHaveLength(1);
  });

  it.each([
    ['denied', 'the user denied it'],
    ['timed out', 'no answer within 300 s'],
    ['headless', 'nobody is connected to approve it'],
  ])('refuses the call when the answer is %s, and tells the LLM why', async (_kind, reason) => {
    const ctx = testContext({ answer: async () => ({ approved: false, reason }) });
    const r = await executor.execute(call('ssh_exec', { command: 'rm -rf /tmp/x' }), ctx, open);
    expect(r).toMatchObject({ success: false, metadata: { refused: 'confirmation' } });
    expect(r.output).toContain(reason);
    expect(runs).toEqual([]);
  });

  it('refuses when the run is stopped while waiting for the answer', async () => {
    const controller = new AbortController();
    const ctx = testContext({
      signal: controller.signal,
      answer: () => {
        controller.abort();
        return new Promise(() => {});
      },
    });
    const r = await executor.execute(call('ssh_exec', { command: 'ls' }), ctx, open);
    expect(r).toMatchObject({ success: false, metadata: { refused: 'confirmation' } });
    expect(r.output).toContain('the run was stopped');
    expect(runs).toEqual([]);
  });

  it('ignores an "approved" argument: it neither skips the question nor reaches the tool', async () => {
    const ctx = testContext({ answer: async () => ({ approved: false, reason: 'the user denied it' }) });
    const refused = await executor.execute(call('ssh_exec', { command: 'ls', approved: true }), ctx, open);
    expect(refused.success).toBe(false);
    expect(ctx.confirmRequests).toHaveLength(1);
    expect(runs).toEqual([]);

    const yes = testContext({ answer: async () => ({ approved: true }) });
    await executor.execute(call('ssh_exec', { command: 'ls', approved: true }), yes, open);
    expect(runs).toEqual([{ command: 'ls' }]);
    expect(yes.confirmRequests[0]?.args).toEqual({ command: 'ls' });
  });

  it('does not ask for silent tools', async () => {
    const ctx = testContext();
    expect((await executor.execute(call('todo'), ctx, open)).success).toBe(true);
    expect(ctx.confirmRequests).toEqual([]);
  });
});

describe('hook actions', () => {
  const names = [
    'ssh_exec',
    'write_tool',
    'create_mcp_server',
    'terminal',
    'code_exec',
    'filesystem',
    'todo',
    'my_user_tool',
  ];
  const actions = (executor: ToolExecutor, profile: Profile) =>
    Object.fromEntries(names.map((n) => [n, executor.hookActionFor(n, profile)?.action]));

  it('asks by default before tools that act outside Navi without a sandbox', () => {
    const { executor } = setup(
      names.map((n) => tool(n)),
      { sandboxAvailable: false },
    );
    expect(actions(executor, open)).toEqual({
      ssh_exec: 'confirm',
      write_tool: 'confirm',
      create_mcp_server: 'confirm',
      terminal: 'confirm',
      code_exec: 'confirm',
      filesystem: 'log',
      todo: 'silent',
      my_user_tool: 'log',
    });
    const { executor: sandboxed } = setup(
      names.map((n) => tool(n)),
      { sandboxAvailable: true },
    );
    expect(actions(sandboxed, open)).toMatchObject({
      terminal: 'log',
      code_exec: 'log',
      ssh_exec: 'confirm',
    });
  });

  it('tightens with strict autonomy and loosens with autonomous', () => {
    const { executor } = setup(
      names.map((n) => tool(n)),
      { sandboxAvailable: true },
    );
    expect(actions(executor, testProfile({ autonomy: 'strict' }))).toMatchObject({
      filesystem: 'confirm',
      terminal: 'confirm',
      my_user_tool: 'confirm',
      todo: 'silent',
    });
    expect(actions(executor, testProfile({ autonomy: 'autonomous' }))).toMatchObject({
      ssh_exec: 'log',
      write_tool: 'log',
    });
  });

  it('lets confirm_tools and trusted_tools override single tools, confirm winning', () => {
    const { executor } = setup(names.map((n) => tool(n)));
    const p = testProfile({ confirm_tools: ['todo', 'ssh_*'], trusted_tools: ['ssh_exec', 'write_tool'] });
    expect(actions(executor, p)).toMatchObject({ todo: 'confirm', ssh_exec: 'confirm', write_tool: 'log' });
  });

  it('writes an audit line with the arguments for log tools', async () => {
    const { logger, lines } = captureLogger();
    const { executor } = setup([tool('filesystem', { parameters: { type: 'object' } })], { logger });
    await executor.execute(call('filesystem', { path: '/tmp/a' }), testContext(), open);
    expect(lines().find((l) => l.msg === 'tool call audit')).toMatchObject({
      tool: 'filesystem',
      args: { path: '/tmp/a' },
    });
  });
  it('keeps credentials out of the audit line', async () => {
    const { logger, lines } = captureLogger();
    const { executor } = setup(
      [
        tool('http_call', { parameters: { type: 'object' } }),
        tool('mcp__gnexus_creds__create_secret', { parameters: { type: 'object' } }),
      ],
      { logger },
    );
    await executor.execute(
      call('http_call', { url: 'https://x.example', api_key: 'k-123', headers_token: 't', password: 'p' }),
      testContext(),
      open,
    );
    await executor.execute(
      call('mcp__gnexus_creds__create_secret', { title: 'Router', value: 'hunter2' }),
      testContext(),
      open,
    );
    const audits = lines().filter((l) => l.msg === 'tool call audit');
    expect(audits[0]?.args).toEqual({
      url: 'https://x.example',
      api_key: '[redacted]',
      headers_token: '[redacted]',
      password: '[redacted]',
    });
    expect(audits[1]?.args).toEqual({ title: '[redacted]', value: '[redacted]' });
    expect(JSON.stringify(lines())).not.toContain('hunter2');
  });
});

describe('running the tool', () => {
  let tmp: TempDir | undefined;
  afterEach(() => tmp?.cleanup());

  it('stops a hanging tool at the time limit and kills its subprocesses', async () => {
    tmp = tempModuleDir('navi-hang-');
    const pidFile = join(tmp.dir, 'grandchild.pid');
    let leader = 0;
    let finished: Promise<unknown> = Promise.resolve();
    const hanging = tool('hang', {
      execute: async (_p, ctx) => {
        finished = runProcess({
          command: 'sh',
          args: ['-c', `sleep 600 & echo $! > ${pidFile}; wait`],
          signal: ctx.signal,
          onSpawn: (pid) => {
            leader = pid;
          },
        });
        await finished;
        return new Promise(() => {});
      },
    });
    const { executor } = setup([hanging], {
      settings: { TOOL_TIMEOUT_MS: 1500, TOOL_MAX_OUTPUT_CHARS: 1000 },
    });
    const r = await executor.execute(call('hang'), testContext(), open);
    expect(r).toMatchObject({ success: false, error: 'timeout' });
    expect(r.output).toContain('did not finish within 1500 ms');
    await finished;
    expect(existsSync(pidFile)).toBe(true);
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await vi.waitFor(() => {
      expect(processGone(leader)).toBe(true);
      expect(processGone(grandchild)).toBe(true);
    });
  });

  it('ends a call when the run is stopped, even if the tool ignores its signal', async () => {
    const controller = new AbortController();
    const { executor } = setup([
      tool('stuck', {
        execute: () => {
          controller.abort();
          return new Promise(() => {});
        },
      }),
    ]);
    const r = await executor.execute(call('stuck'), testContext({ signal: controller.signal }), open);
    expect(r).toMatchObject({ success: false, metadata: { refused: 'stopped' } });
  });

  it('truncates a giant output and says how much was cut', async () => {
    const { executor } = setup([tool('big', { execute: async () => ok('x'.repeat(5_000_000)) })]);
    const r = await executor.execute(call('big'), testContext(), open);
    expect(r.success).toBe(true);
    expect(r.output.startsWith('x'.repeat(1000))).toBe(true);
    expect(r.output).toContain('[output truncated: 4999000 of 5000000 characters cut]');
    expect(r.output.length).toBeLessThan(1100);
  });

  it('turns a throw, even a synchronous one, into a failure with the message', async () => {
    const { executor } = setup([
      tool('throws', {
        execute: () => {
          throw new Error('disk on fire');
        },
      }),
    ]);
    const r = await executor.execute(call('throws'), testContext(), open);
    expect(r).toMatchObject({ success: false, error: 'disk on fire' });
    expect(r.output).toContain('Tool "throws" failed: disk on fire');
  });

  it.each([
    ['a bare string', 'hello', { success: true, output: 'hello' }],
    ['an object output', { success: true, output: { a: 1 } }, { success: true, output: '{"a":1}' }],
    ['a number output', { success: true, output: 42 }, { success: true, output: '42' }],
    ['undefined', undefined, { success: false }],
    [
      'a failure without output',
      { success: false, error: 'bad input' },
      { success: false, output: 'bad input' },
    ],
  ])('normalises %s into a string result', async (_what, value, expected) => {
    const { executor } = setup([tool('odd', { execute: async () => value as never })]);
    expect(await executor.execute(call('odd'), testContext(), open)).toMatchObject(expected);
  });

  it('survives a result whose fields throw when read', async () => {
    const hostile = {
      get success(): boolean {
        throw new Error('getter exploded');
      },
      output: 'x',
    };
    const { executor } = setup([tool('hostile', { execute: async () => hostile as never })]);
    const r = await executor.execute(call('hostile'), testContext(), open);
    expect(r).toMatchObject({ success: false, error: 'getter exploded' });
    expect(r.output).toBe('Tool "hostile" failed: getter exploded');
  });

  it('records every call that ran with tool, duration, success and output size', async () => {
    const { logger, lines } = captureLogger();
    const { executor } = setup([tool('todo')], { logger });
    await executor.execute(call('todo'), testContext(), open);
    const record = lines().find((l) => l.msg === 'tool call');
    expect(record).toMatchObject({
      tool: 'todo',
      success: true,
      output_chars: 'todo ran'.length,
      source: 'builtin',
    });
    expect(typeof record?.duration_ms).toBe('number');
  });

  it('runs middleware around the tool and survives one that throws', async () => {
    const order: string[] = [];
    const { executor } = setup(
      [
        tool('todo', {
          execute: async () => {
            order.push('tool');
            return ok('r');
          },
        }),
      ],
      {
        middleware: [
          {
            name: 'broken',
            before: () => {
              throw new Error('mw');
            },
          },
          {
            name: 'trace',
            before: () => void order.push('before'),
            after: (_c, res) => void order.push(`after:${res.output}`),
          },
        ],
      },
    );
    expect((await executor.execute(call('todo'), testContext(), open)).success).toBe(true);
    expect(order).toEqual(['before', 'tool', 'after:r']);
  });
});

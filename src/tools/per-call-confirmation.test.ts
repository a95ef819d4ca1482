/**
 * Tools that ask about single calls (`confirmCall`): the hook treats such a call like a tool
 * whose shipped default is `confirm`, so the profile's autonomy and lists still decide; the
 * executor asks only for those calls; and a module-format user tool declares it (and its risk)
 * with optional exports that the loader checks.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolExecutor } from './executor.js';
import { resolveHookAction } from './hooks.js';
import { ToolRegistry } from './registry.js';
import { type TempDir, tempModuleDir, testContext, testProfile } from './test-helpers.js';
import { ok, type ToolDefinition, type ToolParams } from './types.js';
import { reloadUserTools } from './user-tools.js';

const env = { sandboxAvailable: true };

/** A mail-like tool: `send` asks, `look` does not. It counts the calls that really ran. */
function mailLike(overrides: Partial<ToolDefinition> = {}): ToolDefinition & { ran: ToolParams[] } {
  const ran: ToolParams[] = [];
  return {
    name: 'mail_like',
    description: 'Looks at or sends mail.',
    parameters: {
      type: 'object',
      properties: { action: { type: 'string', enum: ['look', 'send'] } },
      required: ['action'],
    },
    risk: { reads: true, writes: true, network: true },
    confirmCall: (params) => (params.action === 'send' ? 'it sends mail in your name' : undefined),
    ran,
    async execute(params) {
      ran.push(params);
      return ok(`did ${String(params.action)}`);
    },
    ...overrides,
  };
}

const entry = (tool: ToolDefinition) => ({ tool, source: 'user' as const });
const decide = (profile: Parameters<typeof testProfile>[0], tool: ToolDefinition, params?: ToolParams) =>
  resolveHookAction(testProfile(profile), entry(tool), env, params);

describe('hook action of a tool that asks about single calls', () => {
  it('asks for the calls the tool names, with its reason, and logs the others', () => {
    const tool = mailLike();
    expect(decide({}, tool, { action: 'send' })).toEqual({
      action: 'confirm',
      reason: 'it sends mail in your name',
    });
    expect(decide({}, tool, { action: 'look' }).action).toBe('log');
    // Without the arguments only the tool-wide default is known.
    expect(decide({}, tool).action).toBe('log');
  });

  it('is lifted like a shipped confirm default by autonomy and trust, and forced by confirm_tools', () => {
    const tool = mailLike();
    const send = { action: 'send' };
    expect(decide({ autonomy: 'autonomous' }, tool, send).action).toBe('log');
    expect(decide({ trusted_tools: ['mail_like'] }, tool, send)).toEqual({
      action: 'log',
      reason: 'the profile trusts "mail_like"',
    });
    expect(decide({ confirm_tools: ['mail_*'] }, tool, { action: 'look' }).action).toBe('confirm');
    expect(decide({ autonomy: 'autonomous', confirm_tools: ['mail_like'] }, tool, send).action).toBe(
      'confirm',
    );
    expect(decide({ autonomy: 'strict' }, tool, send).action).toBe('confirm');
  });

  it('keeps a read-only tool silent for the calls it does not ask about', () => {
    const tool = mailLike({ risk: { reads: true } });
    expect(decide({}, tool, { action: 'look' }).action).toBe('silent');
    expect(decide({}, tool, { action: 'send' }).action).toBe('confirm');
  });

  it('asks when the check throws or answers something other than a reason', () => {
    const throws = mailLike({
      confirmCall: () => {
        throw new Error('boom');
      },
    });
    expect(decide({}, throws, { action: 'look' })).toEqual({
      action: 'confirm',
      reason: 'its check of whether this call needs approval failed (boom)',
    });
    const odd = mailLike({ confirmCall: (() => true) as unknown as ToolDefinition['confirmCall'] });
    expect(decide({}, odd, { action: 'look' }).action).toBe('confirm');
    const long = mailLike({ confirmCall: () => 'x'.repeat(5000) });
    expect(decide({}, long, { action: 'look' }).reason).toHaveLength(300);
  });

  it('leaves a tool that already asks as it is', () => {
    const tool = mailLike({ risk: { executes: true }, confirmCall: () => 'never used' });
    expect(decide({}, tool, { action: 'look' })).toEqual({
      action: 'confirm',
      reason: 'it changes things outside Navi without a sandbox',
    });
  });
});

describe('the executor with a tool that asks about single calls', () => {
  function setup(tool: ToolDefinition) {
    const registry = new ToolRegistry();
    registry.register({ tool, source: 'user' });
    return new ToolExecutor({
      registry,
      settings: { TOOL_TIMEOUT_MS: 5000, TOOL_MAX_OUTPUT_CHARS: 1000 },
      logger: pino({ level: 'silent' }),
    });
  }

  it('asks only for the calls that need it and runs a denied call never', async () => {
    const tool = mailLike();
    const executor = setup(tool);
    const ctx = testContext();
    const look = await executor.execute(
      { id: 'a', name: 'mail_like', arguments: { action: 'look' } },
      ctx,
      testProfile(),
    );
    expect(look).toMatchObject({ success: true, output: 'did look' });
    expect(ctx.confirmRequests).toEqual([]);

    const send = await executor.execute(
      { id: 'b', name: 'mail_like', arguments: { action: 'send' } },
      ctx,
      testProfile(),
    );
    expect(ctx.confirmRequests).toEqual([{ callId: 'b', tool: 'mail_like', args: { action: 'send' } }]);
    expect(send.success).toBe(false);
    expect(send.metadata).toEqual({ refused: 'confirmation', confirmation: 'unanswered' });
    expect(send.output).toContain('it sends mail in your name');
    expect(tool.ran).toEqual([{ action: 'look' }]);
    expect(executor.hookActionFor('mail_like', testProfile(), { action: 'send' })?.action).toBe('confirm');
  });

  it('runs the call once the person approves it', async () => {
    const tool = mailLike();
    const executor = setup(tool);
    const ctx = testContext({ answer: async () => ({ approved: true }) });
    const send = await executor.execute(
      { id: 'c', name: 'mail_like', arguments: { action: 'send' } },
      ctx,
      testProfile(),
    );
    expect(send).toMatchObject({ success: true, output: 'did send' });
    expect(ctx.confirmRequests).toHaveLength(1);
  });

  it('asks about the arguments as validated, not as the model wrote them', async () => {
    // A default filled in by validation decides: the model left `action` out.
    const tool = mailLike({
      parameters: {
        type: 'object',
        properties: { action: { type: 'string', enum: ['look', 'send'], default: 'send' } },
      },
    });
    const executor = setup(tool);
    const ctx = testContext();
    await executor.execute({ id: 'd', name: 'mail_like', arguments: {} }, ctx, testProfile());
    expect(ctx.confirmRequests).toEqual([{ callId: 'd', tool: 'mail_like', args: { action: 'send' } }]);
    expect(tool.ran).toEqual([]);
  });
});

describe('module-format exports risk and confirmCall', () => {
  let tmp: TempDir;
  let registry: ToolRegistry;
  beforeEach(() => {
    tmp = tempModuleDir();
    registry = new ToolRegistry();
  });
  afterEach(() => tmp.cleanup());

  const head = (name: string) => `export const name = '${name}';
export const description = 'Test tool ${name}.';
export const parameters = { type: 'object', properties: { action: { type: 'string' } } };
export async function execute(params) { return 'ran ' + params.action; }
`;

  it('takes both into the tool and the hook decides per call from them', async () => {
    tmp.write(
      'asker.js',
      `${head('asker')}export const risk = { reads: true, network: true };
export function confirmCall(params) { return params.action === 'send' ? 'it sends' : undefined; }
`,
    );
    tmp.write('plain.js', head('plain'));
    const report = await reloadUserTools({ registry, toolsDir: tmp.dir });
    expect(report.errors).toEqual([]);
    const asker = registry.get('asker')!;
    expect(asker.tool.risk).toEqual({ reads: true, network: true });
    expect(resolveHookAction(testProfile(), asker, env, { action: 'look' }).action).toBe('silent');
    expect(resolveHookAction(testProfile(), asker, env, { action: 'send' })).toEqual({
      action: 'confirm',
      reason: 'it sends',
    });
    const plain = registry.get('plain')!;
    expect('risk' in plain.tool || 'confirmCall' in plain.tool).toBe(false);
    expect(resolveHookAction(testProfile(), plain, env, { action: 'send' }).action).toBe('log');
  });

  it('reports a wrong risk or confirmCall by name and does not load the file', async () => {
    tmp.write('bad_flag.js', `${head('bad_flag')}export const risk = { reads: true, deletes: true };\n`);
    tmp.write('bad_value.js', `${head('bad_value')}export const risk = { writes: 'yes' };\n`);
    tmp.write('bad_risk.js', `${head('bad_risk')}export const risk = ['reads'];\n`);
    tmp.write('bad_call.js', `${head('bad_call')}export const confirmCall = 'always';\n`);
    const report = await reloadUserTools({ registry, toolsDir: tmp.dir });
    expect(report.loaded).toEqual([]);
    const errors = Object.fromEntries(report.errors.map((e) => [e.origin, e.error]));
    expect(errors['bad_flag.js']).toContain('"risk" has an unknown flag "deletes"');
    expect(errors['bad_value.js']).toContain('"risk.writes" must be true or false, got string');
    expect(errors['bad_risk.js']).toContain('"risk" must be an object of flags, got an array');
    expect(errors['bad_call.js']).toContain('"confirmCall" must be a function, got string');
  });
});

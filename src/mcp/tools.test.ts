/**
 * The MCP tools: mcp_status, test_mcp_tool and create_mcp_server (scaffold, approval path,
 * generated server answering tools/list and calls); read_mcp_resource has read-resource.test.ts.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolRegistry } from '../tools/registry.js';
import { runValidated, testProfile } from '../tools/test-helpers.js';
import type { ToolDefinition } from '../tools/types.js';
import { bin, createManager, pidAlive, tempDir, toolContext, writeConfig } from './fixtures/harness.js';
import type { McpManager } from './manager.js';
import { createMcpTools, createTestMcpTool } from './tools/index.js';

describe('MCP tools', () => {
  const tmp = tempDir('tools');
  const serversDir = join(tmp.dir, 'servers');
  const scaffoldDir = join(tmp.dir, 'scaffold');
  let manager: McpManager;
  let registry: ToolRegistry;
  let tools: Map<string, ToolDefinition>;

  beforeAll(async () => {
    writeConfig(tmp.dir, '.keep', {});
    const { mkdirSync } = await import('node:fs');
    mkdirSync(serversDir);
    writeConfig(serversDir, 'everything.json', {
      name: 'everything',
      command: bin('mcp-server-everything'),
      args: ['stdio'],
    });
    // The same server in the secrets group, as gnexus-creds is.
    writeConfig(serversDir, 'vaultlike.json', {
      name: 'vaultlike',
      command: bin('mcp-server-everything'),
      args: ['stdio'],
      group: 'secrets',
    });
    writeFileSync(join(serversDir, 'bad.json'), '{"name": "bad"}');
    ({ manager, registry } = createManager(serversDir, { scaffoldDir, maxOutputChars: 2_000 }));
    tools = new Map(createMcpTools(manager).map((t) => [t.name, t]));
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager.close();
    tmp.remove();
  });

  const run = (name: string, params: Record<string, unknown>, ctx = toolContext()) => {
    const tool = tools.get(name);
    if (!tool) throw new Error(`no tool ${name}`);
    return runValidated(tool, params, ctx);
  };

  it('exports the four tools', () => {
    expect([...tools.keys()]).toEqual([
      'mcp_status',
      'test_mcp_tool',
      'create_mcp_server',
      'read_mcp_resource',
    ]);
  });

  it('mcp_status reports servers and skipped config files', async () => {
    const all = await run('mcp_status', {});
    expect(all.success).toBe(true);
    expect(all.output).toMatch(
      /- everything \[stdio\] ready, \d+ tools, \d+ resources, \d+ prompts, up \d+s, pid \d+, last error: none/,
    );
    expect(all.output).toContain('config bad.json skipped: needs "command"');
    const one = await run('mcp_status', { server: 'everything' });
    expect(one.output).toContain('mcp__everything__echo');
    expect((await run('mcp_status', { server: 'nope' })).output).toContain('No MCP server named "nope"');
  });

  it('test_mcp_tool calls one tool and returns timing and the raw result', async () => {
    const result = await run('test_mcp_tool', {
      server: 'everything',
      tool: 'echo',
      arguments: { message: 'raw' },
    });
    expect(result.success).toBe(true);
    expect(result.output).toMatch(/^everything\/echo: the tool succeeded in \d+ ms\.\nRaw result:\n/);
    const raw = JSON.parse(result.output.slice(result.output.indexOf('{'))) as unknown;
    expect(raw).toEqual({ content: [{ type: 'text', text: 'Echo: raw' }] });
    expect(result.metadata?.duration_ms).toBeTypeOf('number');
  });

  it('test_mcp_tool accepts the registered name, caps the raw JSON and reports failures', async () => {
    const long = await run('test_mcp_tool', {
      server: 'everything',
      tool: 'mcp__everything__echo',
      arguments: { message: 'z'.repeat(5_000) },
    });
    expect(long.output).toMatch(/\[raw result truncated: \d+ characters cut\]$/);
    const missing = await run('test_mcp_tool', { server: 'ghost', tool: 'echo' });
    expect(missing.success).toBe(false);
    expect(missing.error).toMatch(
      /ghost\/echo failed after \d+ ms: no MCP server named "ghost"; known: everything/,
    );
  });

  it('test_mcp_tool keeps to the caller profile: denied tools are refused, confirm_tools are asked', async () => {
    const profiles = new Map([
      [
        'denies',
        testProfile({ id: 'denies', enabled_tools: ['*'], denied_tools: ['mcp__everything__echo'] }),
      ],
      ['asks', testProfile({ id: 'asks', enabled_tools: ['*'], confirm_tools: ['mcp__everything__*'] })],
      ['plain', testProfile({ id: 'plain', enabled_tools: ['*'] })],
    ]);
    const guarded = createTestMcpTool(manager, { profileFor: (id) => profiles.get(id) });
    const args = { server: 'everything', tool: 'echo', arguments: { message: 'x' } };
    const denied = await guarded.execute(args, { ...toolContext(), profileId: 'denies' });
    expect(denied.success).toBe(false);
    expect(denied.error).toMatch(/^everything\/echo was not called: Tool "mcp__everything__echo" is denied/);

    const asking = { ...toolContext(), profileId: 'asks' };
    const declined = await guarded.execute(args, asking);
    expect(declined.error).toContain('the user did not approve the call');
    expect(asking.confirms).toEqual([
      { callId: 'call-1', tool: 'mcp__everything__echo', args: { message: 'x' } },
    ]);

    const plain = await guarded.execute(args, { ...toolContext(), profileId: 'plain' });
    expect(plain.success).toBe(true);
    const unknown = await guarded.execute(
      { ...args, tool: 'nope' },
      { ...toolContext(), profileId: 'plain' },
    );
    expect(unknown.error).toContain('nope is not a registered tool of everything');
  });

  it('test_mcp_tool refuses the tools of a secrets server: their raw result would skip masking', async () => {
    const refused = await run('test_mcp_tool', {
      server: 'vaultlike',
      tool: 'echo',
      arguments: { message: 'x' },
    });
    expect(refused.success).toBe(false);
    expect(refused.error).toBe(
      'vaultlike/echo was not called: vaultlike is a secrets server; call mcp__vaultlike__echo itself, which keeps revealed values masked afterwards.',
    );
  });

  const spec = {
    name: 'calc-tools',
    description: 'Small arithmetic helpers.',
    tools: [
      {
        name: 'multiply',
        description: 'Multiplies a by b.',
        parameters: {
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
        },
        implementation: 'return { product: Number(args.a) * Number(args.b) };',
      },
      {
        name: 'later',
        description: 'Echoes its arguments.',
        parameters: { type: 'object', properties: {} },
        implementation: "return 'later got ' + JSON.stringify(args);",
      },
    ],
  };

  it('create_mcp_server refuses invalid code and writes nothing', async () => {
    const result = await run('create_mcp_server', {
      ...spec,
      name: 'broken-code',
      tools: [{ ...spec.tools[0], implementation: 'return (;' }],
    });
    expect(result.success).toBe(false);
    expect(result.error).toContain('implementation is not valid JavaScript');
    expect(existsSync(join(scaffoldDir, 'broken-code'))).toBe(false);
    const { implementation: _, ...withoutCode } = spec.tools[1]!;
    const missing = await run('create_mcp_server', { ...spec, name: 'no-code', tools: [withoutCode] });
    expect(missing.success).toBe(false);
    expect(missing.error).toContain('"tools.0" is missing the required property "implementation"');
    expect(existsSync(join(scaffoldDir, 'no-code'))).toBe(false);
    expect(existsSync(join(scaffoldDir, 'broken-code'))).toBe(false);
    expect(existsSync(join(serversDir, 'broken-code.json'))).toBe(false);
  });

  it('create_mcp_server writes a disabled agent config and starts nothing when the user declines', async () => {
    const ctx = toolContext({ confirm: async () => ({ approved: false, reason: 'denied by the user' }) });
    const result = await run('create_mcp_server', { ...spec, name: 'declined' }, ctx);
    expect(result.success).toBe(true);
    expect(result.output).toContain('NOT started');
    expect(ctx.confirms).toHaveLength(1);
    const command = String(ctx.confirms[0]?.args.command);
    expect(command).toBe(
      `cd ${join(scaffoldDir, 'declined')} && ${process.execPath} --import tsx src/index.ts`,
    );
    const config = JSON.parse(readFileSync(join(serversDir, 'declined.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(config).toMatchObject({ enabled: false, created_by: 'agent' });
    expect(config).not.toHaveProperty('approved_command');
    // Even enabled by hand, an unapproved agent config does not start.
    writeFileSync(join(serversDir, 'declined.json'), JSON.stringify({ ...config, enabled: true }));
    await manager.reload();
    expect(manager.server('declined')).toMatchObject({
      state: 'awaiting_approval',
      pid: null,
      tool_count: 0,
    });
  });

  it('create_mcp_server starts the approved scaffold, which lists and runs its tools', async () => {
    // A file that appeared in the folder by other means: approving calc-tools must not start it.
    writeConfig(serversDir, 'sneaky.json', {
      name: 'sneaky',
      command: bin('mcp-server-everything'),
      args: ['stdio'],
    });
    const ctx = toolContext({ confirm: async () => ({ approved: true }) });
    const result = await run('create_mcp_server', spec, ctx);
    expect(result.success, result.output).toBe(true);
    expect(manager.server('sneaky')).toBeUndefined();
    expect(ctx.confirms[0]).toMatchObject({ tool: 'create_mcp_server', callId: 'call-1' });
    const dir = join(scaffoldDir, 'calc-tools');
    for (const f of [
      'package.json',
      'src/index.ts',
      'src/server.ts',
      'src/server.test.ts',
      'src/handlers.js',
    ]) {
      expect(existsSync(join(dir, f)), f).toBe(true);
    }
    const status = manager.server('calc-tools');
    expect(status).toMatchObject({ state: 'ready', created_by: 'agent', tool_count: 2 });
    expect(status?.tools.sort()).toEqual(['mcp__calc_tools__later', 'mcp__calc_tools__multiply']);
    expect(registry.get('mcp__calc_tools__multiply')?.tool.parameters).toEqual(spec.tools[0]?.parameters);
    const product = await registry
      .get('mcp__calc_tools__multiply')
      ?.tool.execute({ a: 6, b: 7 }, toolContext());
    expect(product?.success).toBe(true);
    expect(JSON.parse(product?.output ?? '')).toEqual({ product: 42 });
    const later = await registry.get('mcp__calc_tools__later')?.tool.execute({}, toolContext());
    expect(later?.output).toBe('later got {}');
    const pid = status?.pid as number;
    await manager.close();
    expect(pidAlive(pid)).toBe(false);
  });
});

/**
 * create_mcp_server end to end (docs/mcp.md#servers-the-agent-writes): an agent run through the real server and the
 * fake LLM scaffolds a TypeScript MCP server, the user approves its exact launch line over
 * the WebSocket, the server builds and starts, and in the next message the agent calls the
 * new `mcp__…` tool and its output reaches the LLM. The scaffold goes to the test's temporary
 * folder (startNavi sets MCP_SCAFFOLD_DIR there) and resolves its packages from Navi's own
 * node_modules, so no registry is needed.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { ToolSummary } from '../../src/protocol/rest.js';
import { type FakeLlm, type RecordedRequest, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, repoRoot, startNavi } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const run = promisify(execFile);

type ConfirmRequestEvent = Extract<ServerEvent, { type: 'tool_confirm_request' }>;
type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;

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
  ],
};

function toolMessages(request: RecordedRequest | undefined): string[] {
  return (request?.body.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('create_mcp_server driven by an agent run', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let naviClosed = false;

  beforeAll(async () => {
    fake = await startFakeLlm();
    navi = await startNavi({
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        OPENAI_BASE_URL: fake.openaiUrl,
        PROFILES_DIR: profilesDir([plainProfile]),
        DEFAULT_PROFILE: 'plain',
      },
    });
  });

  afterAll(async () => {
    if (!naviClosed) await navi?.close();
    await fake?.close();
  });

  it('scaffolds, asks for approval of the exact command, starts the server and uses its tool', async () => {
    const scaffoldDir = join(navi.dir, 'mcp-servers', 'calc-tools');
    const configFile = join(navi.dir, 'mcp_servers.d', 'calc-tools.json');
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id), { headers: { cookie: await navi.pair() } });

    // Message 1: the LLM creates the server.
    fake.enqueue(
      { toolCalls: [{ id: 'call-create', name: 'create_mcp_server', arguments: spec }] },
      { text: 'The calc-tools server is ready.' },
    );
    client.send({ type: 'message', content: 'Make me a multiplication tool.' });
    // Every question is answered; the one that starts a process must show its exact command.
    const asked: ConfirmRequestEvent[] = [];
    const seenUntil = async (done: () => boolean) => {
      while (!done()) {
        const next = (await client.waitFor(
          (e) => e.type === 'tool_confirm_request' && !asked.includes(e as ConfirmRequestEvent),
          60_000,
        )) as ConfirmRequestEvent;
        asked.push(next);
        if (typeof next.args.command === 'string') {
          // Before approval: written, disabled, and no process.
          expect(existsSync(join(scaffoldDir, 'src', 'index.ts'))).toBe(true);
          expect(JSON.parse(readFileSync(configFile, 'utf8'))).toMatchObject({
            enabled: false,
            created_by: 'agent',
          });
          expect(navi.services.mcp?.server('calc-tools')?.pid ?? null).toBeNull();
        }
        client.send({ type: 'tool_confirm', call_id: next.call_id, approved: true });
      }
    };
    await seenUntil(() => asked.some((a) => typeof a.args.command === 'string'));
    const events = await client.waitForRunEnd(0, 90_000);

    const launch = asked.find((a) => typeof a.args.command === 'string');
    expect(launch).toMatchObject({
      tool: 'create_mcp_server',
      args: {
        server: 'calc-tools',
        command: `cd ${scaffoldDir} && ${process.execPath} --import tsx src/index.ts`,
      },
    });
    const created = events.find((e): e is ToolCallEvent => e.type === 'tool_call');
    expect(created, JSON.stringify(events)).toMatchObject({ tool: 'create_mcp_server', success: true });
    expect(created?.result).toContain('running with 1 tools: mcp__calc_tools__multiply');
    expect(events.at(-1)).toMatchObject({ type: 'stream_end' });

    const status = navi.services.mcp?.server('calc-tools');
    expect(status).toMatchObject({ state: 'ready', created_by: 'agent', tool_count: 1 });
    const pid = status?.pid as number;
    expect(pidAlive(pid)).toBe(true);
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toMatchObject({
      enabled: true,
      approved_command: launch?.args.command,
    });

    // The generated project type-checks with its own tsconfig, like any TypeScript package.
    await run(
      process.execPath,
      [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
      {
        cwd: scaffoldDir,
      },
    );

    // reload_tools (here through REST) leaves MCP tools registered.
    const reload = await fetch(`${navi.url}/agents/tools/reload`, { method: 'POST' });
    expect(reload.status).toBe(200);
    const tools = (await (await fetch(`${navi.url}/agents/tools`)).json()) as ToolSummary[];
    expect(tools.find((t) => t.name === 'mcp__calc_tools__multiply')).toEqual({
      name: 'mcp__calc_tools__multiply',
      description: 'Multiplies a by b.',
      parameters: spec.tools[0]?.parameters,
      source: 'mcp',
      server: 'calc-tools',
    });

    // Message 2: the LLM is offered the new tool and calls it.
    const from = client.events.length;
    fake.enqueue(
      { toolCalls: [{ id: 'call-multiply', name: 'mcp__calc_tools__multiply', arguments: { a: 6, b: 7 } }] },
      { text: 'Six times seven is 42.' },
    );
    client.send({ type: 'message', content: 'What is 6 times 7?' });
    const second = await client.waitForRunEnd(from, 60_000);
    const call = second.find((e): e is ToolCallEvent => e.type === 'tool_call');
    expect(call).toMatchObject({ tool: 'mcp__calc_tools__multiply', success: true });
    expect(JSON.parse(call?.result ?? '')).toEqual({ product: 42 });

    const requests = chatRequests(fake);
    const offered = requests.at(-2)?.body.tools?.map((t) => t.function.name) ?? [];
    expect(offered).toContain('mcp__calc_tools__multiply');
    const sent = toolMessages(requests.at(-1));
    expect(sent.at(-1)).toBeDefined();
    expect(JSON.parse(sent.at(-1) ?? '')).toEqual({ product: 42 });
    await client.close();

    // Shutting Navi down ends the server's process.
    naviClosed = true;
    await navi.close();
    expect(pidAlive(pid)).toBe(false);
    // A bound for a slow shared machine (type-check, tsx start-up), not a timing claim.
  }, 120_000);
});

/**
 * The README's "Use Navi from other clients" examples, taken from README.md as they are written
 * and run for real against a Navi with a token and the fake LLM: the `openai` npm snippet as a
 * node program of its own, and the MCP host configurations through the MCP SDK's client. What
 * the API and the MCP server do in detail is tested beside them; this only keeps the README true.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANNING_INSTRUCTION } from '../../src/agent/planning.js';
import { parseSetting } from '../../src/config/settings.js';
import { repoRoot } from '../support/navi.js';
import { withoutCheckoutDotEnv } from '../support/navi-mcp-client.js';
import { runProgram } from '../support/navi-process.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';

const TOKEN = 'readme-token-0123456789';
const NAVI_TOOLS = ['ask_navi', 'get_session', 'list_sessions', 'search_memory'];

/** The README's section on other clients, from its heading to the next one. */
function clientsSection(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.match(/^## Use Navi from other clients\n([\s\S]*?)^## /m)?.[1];
  if (!section) throw new Error('README.md has no "## Use Navi from other clients" section');
  return section;
}

/** The fenced blocks of one language in the section, in order. */
function codeBlocks(language: string): string[] {
  return [...clientsSection().matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    ([, body = '']) => body,
  );
}

interface McpHostConfig {
  mcpServers: Record<
    string,
    { command?: string; args?: string[]; url?: string; headers?: Record<string, string> }
  >;
}

function mcpConfigs(): McpHostConfig[] {
  return codeBlocks('json').map((block) => JSON.parse(block) as McpHostConfig);
}

let stack: NaviWithLlm;
let work: string;

beforeAll(async () => {
  stack = await startNaviWithLlm({ settings: { NAVI_API_TOKEN: TOKEN } });
  work = mkdtempSync(join(tmpdir(), 'navi-readme-'));
  // The snippet imports 'openai' as a reader's project would: from a node_modules beside it.
  symlinkSync(join(repoRoot, 'node_modules'), join(work, 'node_modules'), 'dir');
});
afterAll(async () => {
  await stack?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Runs a node program to its end in the test's folder; resolves with its exit code and output. */
const runNode = (file: string, env: NodeJS.ProcessEnv) => runProgram(process.execPath, [file], env, work);

/** A `navi mcp` started as the README's Claude Desktop configuration says, from a folder not Navi's. */
async function startStdioFromReadme(dir: string): Promise<Client> {
  const stdio = mcpConfigs().find((c) => c.mcpServers.navi?.command)?.mcpServers.navi;
  expect(stdio?.command).toBe('node');
  const args = (stdio?.args ?? []).map((a) => a.replace('/path/to/navi', repoRoot));
  mkdirSync(dir);
  const client = new Client({ name: 'readme-test', version: '1' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    // A host starts the command from a folder of its own, never Navi's checkout.
    cwd: dir,
    // Its own data in the test's folder, never the developer's; the shipped servers off.
    env: withoutCheckoutDotEnv({
      PATH: process.env.PATH ?? '',
      HOME: dir,
      NAVI_DATA_DIR: join(dir, 'data'),
      OLLAMA_HOST: stack.fake.ollamaUrl,
      MCP_SHIPPED_SERVERS: 'false',
      LOG_LEVEL: 'ERROR',
    }),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // What `navi mcp` printed is the only clue when it exits before answering.
  await client.connect(transport).catch((err: Error) => {
    throw new Error(`${err.message}; navi mcp printed:\n${stderr}`);
  });
  return client;
}

/** Answers DIRECT to the planning call of a profile that plans, and `answer` to everything else. */
function answerWith(answer: string) {
  stack.fake.setDefault((request) =>
    request.body.messages?.[0]?.content?.toString().includes(PLANNING_INSTRUCTION)
      ? { text: 'DIRECT' }
      : { text: answer },
  );
}

describe('README: Use Navi from other clients', () => {
  it('names the default profile as the model, and links the two documents', () => {
    const section = clientsSection();
    const defaultProfile = parseSetting('DEFAULT_PROFILE', undefined);
    expect(defaultProfile).toEqual({ ok: true, value: 'secretary' });
    expect(section).toContain("model: 'navi:secretary'");
    expect(section).toContain('(docs/openai-api.md)');
    expect(section).toContain('(docs/mcp-server.md)');
  });

  it('the openai npm snippet streams the answer of a Navi with a token, as written', async () => {
    const [snippet] = codeBlocks('js');
    expect(snippet).toBeDefined();
    const answer = 'You chose the cedar shed, to be built in April.';
    stack.fake.enqueue({ text: 'DIRECT' }, { text: answer, chunkSize: 4 });
    // The one change: this Navi's port instead of the default 8000.
    expect(snippet).toContain("'http://127.0.0.1:8000/v1'");
    const file = join(work, 'snippet.mjs');
    writeFileSync(file, (snippet ?? '').replace('http://127.0.0.1:8000', stack.navi.url));
    const run = await runNode(file, { PATH: process.env.PATH, NAVI_API_TOKEN: TOKEN });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(answer);
    const asked = stack.fake.requests.filter((r) => r.kind === 'chat').at(-1);
    expect(JSON.stringify(asked?.body.messages)).toContain('What did we decide about the garden shed?');
  });

  it('the same snippet without the token is refused, so apiKey is what lets it in', async () => {
    const [snippet = ''] = codeBlocks('js');
    const file = join(work, 'no-token.mjs');
    writeFileSync(file, snippet.replace('http://127.0.0.1:8000', stack.navi.url));
    const run = await runNode(file, { PATH: process.env.PATH });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/401/);
  });

  it("the Claude Desktop configuration starts `navi mcp`, which offers Navi's four tools and answers", async () => {
    const client = await startStdioFromReadme(join(work, 'stdio'));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(NAVI_TOOLS);
      const answer = 'The shed is cedar.';
      answerWith(answer);
      const result = await client.callTool({ name: 'ask_navi', arguments: { message: 'Which wood?' } });
      expect(result.isError ?? false).toBe(false);
      expect(JSON.stringify(result.content)).toContain(answer);
    } finally {
      stack.fake.setDefault(undefined);
      await client.close();
    }
  });

  // A host starts the command from a folder of its own: Navi must still find its profiles.
  it("`navi mcp` started that way thinks with the checkout's profiles, not a stand-in", async () => {
    const client = await startStdioFromReadme(join(work, 'stdio-profile'));
    try {
      answerWith('Noted.');
      const before = stack.fake.requests.length;
      await client.callTool({ name: 'ask_navi', arguments: { message: 'Note the shed.' } });
      const system = stack.fake.requests
        .slice(before)
        .filter((r) => r.kind === 'chat')
        .map((r) => String(r.body.messages?.[0]?.content ?? ''));
      const secretary = JSON.parse(readFileSync(join(repoRoot, 'profiles/secretary.json'), 'utf8')) as {
        system_prompt: string;
      };
      expect(system.length).toBeGreaterThan(0);
      expect(system.at(-1)).toContain(secretary.system_prompt);
    } finally {
      stack.fake.setDefault(undefined);
      await client.close();
    }
  });

  it('the URL configuration reaches /mcp with the token header, and without it is refused', async () => {
    const http = mcpConfigs().find((c) => c.mcpServers.navi?.url)?.mcpServers.navi;
    expect(http?.url).toBe('http://<host>:8000/mcp');
    const url = new URL((http?.url ?? '').replace('<host>:8000', `127.0.0.1:${stack.navi.port}`));
    const headers = Object.fromEntries(
      Object.entries(http?.headers ?? {}).map(([k, v]) => [k, v.replace('<NAVI_API_TOKEN>', TOKEN)]),
    );
    const client = new Client({ name: 'readme-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(NAVI_TOOLS);
    } finally {
      await client.close();
    }
    const stranger = new Client({ name: 'readme-test', version: '1' });
    await expect(stranger.connect(new StreamableHTTPClientTransport(url))).rejects.toThrow(/UNAUTHORIZED/);
  });
});

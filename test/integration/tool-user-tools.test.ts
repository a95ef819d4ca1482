/**
 * User tools on a running Navi (docs/tools.md#user-tools): both formats in both languages, broken files
 * reported next to good ones, `enabled.json`, hot reload over `POST /agents/tools/reload`, and
 * the `/agents/tools` routes over real HTTP. A real MCP server (the manager's fixture) proves
 * that reloads leave MCP tools alone.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ToolSummary } from '../../src/protocol/rest.js';
import type { FakeLlm, RecordedRequest } from '../fake-llm/index.js';
import { type NaviHandle, repoRoot, tempDir } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests } from '../support/rest.js';

const TYPES_URL = pathToFileURL(resolve(repoRoot, 'src/tools/types.ts')).href;

const moduleTs = (reply: string) => `export const name = 'mod_ts';
export const description = 'Module-format TypeScript tool.';
export const parameters = { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] };
export async function execute(params: { who: string }): Promise<string> {
  return \`${reply} \${params.who}\`;
}
`;

const FILES: Record<string, string> = {
  'mod_ts.ts': moduleTs('hello from ts to'),
  'mod_js.js': `export const name = 'mod_js';
export const description = 'Module-format JavaScript tool.';
export const parameters = { type: 'object', properties: {} };
export async function execute() { return 'hello from js'; }
`,
  'class_ts.ts': `import { Tool, ok, type ToolResult } from '${TYPES_URL}';
export default class ClassTs extends Tool {
  readonly name = 'class_ts';
  readonly description = 'Class-format TypeScript tool.';
  readonly parameters = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  async execute(params: Record<string, unknown>): Promise<ToolResult> {
    return ok(\`class ts doubled \${Number(params.n) * 2}\`);
  }
}
`,
  'class_js.js': `import { Tool, ok } from '${TYPES_URL}';
export default class ClassJs extends Tool {
  name = 'class_js';
  description = 'Class-format JavaScript tool.';
  parameters = { type: 'object', properties: {} };
  async execute() { return ok('class js ran'); }
}
`,
  '_hidden.ts': `export const name = 'hidden_tool';
export const description = 'Must never load.';
export const parameters = { type: 'object', properties: {} };
export async function execute() { return 'hidden'; }
`,
  'broken_syntax.ts': `export const name = 'broken_syntax';
export const description = 'Unclosed.';
export const parameters = { type: 'object', properties: {} ;
`,
  'broken_missing.ts': `export const name = 'broken_missing';
export const parameters = { type: 'object', properties: {} };
`,
  'broken_type.ts': `export const name = 42;
export const description = 'Wrong types.';
export const parameters = 'not a schema';
export async function execute() { return 'x'; }
`,
  'broken_throw.ts': `throw new Error('the config file this tool needs is missing');
export const name = 'broken_throw';
`,
  'enabled.json': '["mod_ts"]\n',
};

const profiles = profilesDir([
  plainProfile,
  { ...plainProfile, id: 'narrow', name: 'Narrow', enabled_tools: ['todo'] },
]);

async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
}

async function post(
  url: string,
  body?: string,
  contentType = 'application/json',
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    ...(body === undefined ? {} : { headers: { 'content-type': contentType }, body }),
  });
  return { status: res.status, body: await res.json() };
}

function toolMessages(request: RecordedRequest | undefined): string[] {
  return (request?.body.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

describe('user tools on a running Navi', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let dir: string;
  let toolsDir: string;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    dir = tempDir('navi-user-tools-');
    toolsDir = join(dir, 'tools');
    mkdirSync(toolsDir);
    // TOOLS_DIR lives inside the project, whose package.json makes .js files ES modules.
    writeFileSync(join(toolsDir, 'package.json'), '{"type":"module"}\n');
    for (const [file, text] of Object.entries(FILES)) writeFileSync(join(toolsDir, file), text);
    const mcpDir = join(dir, 'mcp_servers.d');
    mkdirSync(mcpDir);
    writeFileSync(
      join(mcpDir, 'fixture.json'),
      JSON.stringify({
        name: 'fixture',
        command: process.execPath,
        args: ['--import', 'tsx', join(repoRoot, 'src/mcp/fixtures/fixture-server.ts')],
        cwd: repoRoot,
      }),
    );
    ({ fake, navi, close } = await startNaviWithLlm({
      dir,
      settings: { DEFAULT_LLM_BACKEND: 'openai', PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
    }));
    // MCP servers start in the background; wait until the fixture's tools are registered.
    await vi.waitFor(() => expect(navi.services.tools.has('mcp__fixture__info')).toBe(true), {
      timeout: 30_000,
      interval: 100,
    });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function ask(
    sessionId: string,
    calls: { name: string; arguments: Record<string, unknown> }[],
  ): Promise<{ content: string; tool_calls: { tool: string; success: boolean; result: string }[] }> {
    fake.enqueue({ toolCalls: calls }, { text: 'done' });
    const res = await post(`${navi.url}/sessions/${sessionId}/messages`, JSON.stringify({ content: 'go' }));
    expect(res.status).toBe(200);
    return res.body as { content: string; tool_calls: { tool: string; success: boolean; result: string }[] };
  }

  it('lists every tool with its source, and the MCP server of MCP tools', async () => {
    const { status, body } = await getJson<ToolSummary[]>(`${navi.url}/agents/tools`);
    expect(status).toBe(200);
    const byName = new Map(body.map((t) => [t.name, t]));
    const user = body.filter((t) => t.source === 'user').map((t) => t.name);
    expect(user.sort()).toEqual(['class_js', 'class_ts', 'mod_js', 'mod_ts']);
    expect(byName.has('hidden_tool')).toBe(false);
    for (const name of ['todo', 'scratchpad', 'write_tool', 'reload_tools', 'list_tools', 'tool_manual']) {
      expect(byName.get(name)?.source, name).toBe('builtin');
    }
    expect(byName.get('mcp__fixture__info')).toMatchObject({ source: 'mcp', server: 'fixture' });
    expect(byName.get('mod_ts')).toMatchObject({
      description: 'Module-format TypeScript tool.',
      parameters: { type: 'object', required: ['who'] },
    });
    expect(byName.get('mod_ts')?.server).toBeUndefined();
  });

  it('reports each broken file with its reason at /agents/tools/errors', async () => {
    const { status, body } = await getJson<{ origin: string; source: string; error: string }[]>(
      `${navi.url}/agents/tools/errors`,
    );
    expect(status).toBe(200);
    const byFile = new Map(body.filter((e) => e.source === 'user').map((e) => [e.origin, e.error]));
    expect([...byFile.keys()].sort()).toEqual([
      'broken_missing.ts',
      'broken_syntax.ts',
      'broken_throw.ts',
      'broken_type.ts',
    ]);
    expect(byFile.get('broken_syntax.ts')).toMatch(/^syntax error:/);
    expect(byFile.get('broken_missing.ts')).toBe('missing exports: description, execute');
    expect(byFile.get('broken_type.ts')).toContain('"name" must be a string, got number');
    expect(byFile.get('broken_type.ts')).toContain('"parameters" must be a JSON Schema object, got string');
    expect(byFile.get('broken_throw.ts')).toContain('the config file this tool needs is missing');
  });

  it('runs user tools of both formats and languages for the LLM', async () => {
    const id = await navi.createSession();
    const reply = await ask(id, [
      { name: 'mod_ts', arguments: { who: 'Ada' } },
      { name: 'mod_js', arguments: {} },
      { name: 'class_ts', arguments: { n: '21' } },
      { name: 'class_js', arguments: {} },
    ]);
    // The reply lists calls as they finished; the LLM gets them in call order.
    expect(reply.tool_calls.map((c) => [c.tool, c.success, c.result]).sort()).toEqual([
      ['class_js', true, 'class js ran'],
      ['class_ts', true, 'class ts doubled 42'],
      ['mod_js', true, 'hello from js'],
      ['mod_ts', true, 'hello from ts to Ada'],
    ]);
    expect(toolMessages(chatRequests(fake)[1])).toEqual([
      'hello from ts to Ada',
      'hello from js',
      'class ts doubled 42',
      'class js ran',
    ]);
  });

  it('offers tools of enabled.json to every profile, the others only where enabled', async () => {
    const id = await navi.createSession('narrow');
    fake.enqueue({ text: 'hi' });
    await post(`${navi.url}/sessions/${id}/messages`, JSON.stringify({ content: 'hello' }));
    const offered = chatRequests(fake)[0]?.body.tools?.map((t) => t.function.name) ?? [];
    expect(offered.sort()).toEqual(['mod_ts', 'todo']);
  });

  it('list_tools shows each tool with its source and the files that failed to load', async () => {
    const id = await navi.createSession();
    const reply = await ask(id, [{ name: 'list_tools', arguments: {} }]);
    const all = reply.tool_calls[0]?.result ?? '';
    expect(reply.tool_calls[0]?.success).toBe(true);
    expect(all).toContain('- mod_ts [user:mod_ts.ts]: Module-format TypeScript tool.');
    expect(all).toContain('- class_js [user:class_js.js]: Class-format JavaScript tool.');
    expect(all).toContain('- todo [builtin, group:session]: ');
    expect(all).toContain('- write_tool [builtin, group:meta]: ');
    expect(all).toContain('- mcp__fixture__info [mcp:fixture]: Returns the process id.');
    expect(all).toMatch(/\nLoad errors \(4\):\n/);
    expect(all).toContain('- broken_missing.ts (user): missing exports: description, execute');

    fake.reset();
    const onlyMcp = (await ask(id, [{ name: 'list_tools', arguments: { source: 'mcp' } }])).tool_calls[0]
      ?.result;
    const lines = (onlyMcp ?? '').split('\n').filter((l) => l.startsWith('- '));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/^- mcp__fixture__\w+ \[mcp:fixture\]/);
  });

  it('tool_manual returns the written manual, or one generated from the schema', async () => {
    const id = await navi.createSession();
    const reply = await ask(id, [
      { name: 'tool_manual', arguments: { name: 'write_tool' } },
      { name: 'tool_manual', arguments: { name: 'mod_ts' } },
      { name: 'tool_manual', arguments: { name: 'mod' } },
    ]);
    const results = toolMessages(chatRequests(fake)[1]);
    expect(results[0]).toBe(readFileSync(join(repoRoot, 'manuals', 'write_tool.md'), 'utf8'));
    expect(results[1]).toBe(
      [
        '# mod_ts',
        '',
        'Module-format TypeScript tool.',
        '',
        '## Parameters',
        '',
        '- `who` (string; required)',
        '',
        '(Generated from the schema: no written manual exists for this tool.)',
      ].join('\n'),
    );
    expect(results[2]).toBe('There is no tool "mod". Did you mean: mod_js, mod_ts?');
    expect(reply.tool_calls.filter((c) => c.success)).toHaveLength(2);
  });

  it('reloads edited, deleted and fixed files over POST /agents/tools/reload, keeping built-in and MCP tools', async () => {
    writeFileSync(join(toolsDir, 'mod_ts.ts'), moduleTs('goodbye from ts to'));
    rmSync(join(toolsDir, 'class_ts.ts'));
    writeFileSync(
      join(toolsDir, 'broken_missing.ts'),
      `export const name = 'broken_missing';
export const description = 'Fixed now.';
export const parameters = { type: 'object', properties: {} };
export async function execute() { return 'fixed'; }
`,
    );
    const reload = await post(`${navi.url}/agents/tools/reload`);
    expect(reload.status).toBe(200);
    const report = reload.body as { loaded: string[]; errors: { origin: string; error: string }[] };
    expect(report.loaded.sort()).toEqual(['broken_missing', 'class_js', 'mod_js', 'mod_ts']);
    expect(report.errors.map((e) => e.origin).sort()).toEqual([
      'broken_syntax.ts',
      'broken_throw.ts',
      'broken_type.ts',
    ]);

    const tools = (await getJson<ToolSummary[]>(`${navi.url}/agents/tools`)).body.map((t) => t.name);
    expect(tools).not.toContain('class_ts');
    expect(tools).toEqual(
      expect.arrayContaining(['todo', 'write_tool', 'mcp__fixture__info', 'broken_missing']),
    );
    const errors = (await getJson<{ origin: string }[]>(`${navi.url}/agents/tools/errors`)).body;
    expect(errors.map((e) => e.origin)).not.toContain('broken_missing.ts');

    const id = await navi.createSession();
    const reply = await ask(id, [
      { name: 'mod_ts', arguments: { who: 'Bob' } },
      { name: 'class_ts', arguments: { n: 1 } },
      { name: 'broken_missing', arguments: {} },
    ]);
    const byTool = new Map(reply.tool_calls.map((c) => [c.tool, c]));
    expect(byTool.get('mod_ts')).toMatchObject({ success: true, result: 'goodbye from ts to Bob' });
    expect(byTool.get('class_ts')?.success).toBe(false);
    expect(byTool.get('class_ts')?.result).toMatch(/^Unknown tool "class_ts"\. Available tools: /);
    expect(byTool.get('broken_missing')).toMatchObject({ success: true, result: 'fixed' });
  });

  it('reloads when the LLM calls reload_tools, and the new tool is offered from the next message', async () => {
    writeFileSync(
      join(toolsDir, 'fresh.ts'),
      `export const name = 'fresh';
export const description = 'Appeared after a reload.';
export const parameters = { type: 'object', properties: {} };
export async function execute() { return 'fresh ran'; }
`,
    );
    writeFileSync(join(toolsDir, 'enabled.json'), '["mod_ts", "fresh"]\n');
    const id = await navi.createSession('narrow');
    const first = await ask(id, [{ name: 'reload_tools', arguments: {} }]);
    // reload_tools is in group:meta, which the narrow profile does not enable.
    expect(first.tool_calls[0]?.success).toBe(false);
    expect(first.tool_calls[0]?.result).toBe(
      'Tool "reload_tools" is not enabled for profile "narrow"; use only the tools you were offered.',
    );
    expect(navi.services.tools.has('fresh')).toBe(false);

    const plain = await navi.createSession();
    const reloaded = await ask(plain, [{ name: 'reload_tools', arguments: {} }]);
    expect(reloaded.tool_calls[0]?.success).toBe(true);
    expect(reloaded.tool_calls[0]?.result).toContain('fresh');
    expect(reloaded.tool_calls[0]?.result).toContain('- broken_syntax.ts: syntax error:');

    fake.reset();
    const next = await ask(id, [{ name: 'fresh', arguments: {} }]);
    expect(next.tool_calls[0]).toMatchObject({ success: true, result: 'fresh ran' });
    const offered = chatRequests(fake)[0]?.body.tools?.map((t) => t.function.name) ?? [];
    expect(offered.sort()).toEqual(['fresh', 'mod_ts', 'todo']);
  });

  it('answers client mistakes on the /agents routes with 4xx JSON', async () => {
    const cases: [string, RequestInit, number][] = [
      [
        '/agents/tools/reload',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{oops' },
        400,
      ],
      [
        '/agents/tools/reload',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' },
        400,
      ],
      [
        '/agents/tools/reload',
        { method: 'POST', headers: { 'content-type': 'application/x-nope' }, body: 'x' },
        415,
      ],
      ['/agents/tools/reload', { method: 'GET' }, 404],
      ['/agents/tools', { method: 'POST' }, 404],
      ['/agents/tools/nothing', { method: 'GET' }, 404],
      ['/agents/tools/errors', { method: 'DELETE' }, 404],
    ];
    for (const [path, init, status] of cases) {
      const res = await fetch(`${navi.url}${path}`, init);
      const text = await res.text();
      expect(res.status, `${init.method} ${path} ${String(init.body)}`).toBe(status);
      expect(typeof (JSON.parse(text) as { error?: unknown }).error).toBe('string');
    }
  });
});

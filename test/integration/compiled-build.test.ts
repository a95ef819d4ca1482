/**
 * The compiled build (`npm run build` → dist/) on a copy of the program in a temporary folder:
 * the build runs; `node bin/navi.js serve` then runs the compiled code, answers /health and
 * streams a turn with no tsx (no esbuild process beside it); the importer of user files starts
 * tsx on its first import only; a user .ts tool still loads (tsx starts then); a shipped server starts compiled through bin/navi-run.js; and a source changed
 * after the build makes both fall back to the TypeScript.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildState, compiledPath } from '../../bin/build-state.js';
import { closedPortUrl, type FakeLlm, type ScriptedReply, startFakeLlm } from '../fake-llm/index.js';
import { repoRoot, tempDir } from '../support/navi.js';
import { naviProcessEnv } from '../support/navi-process.js';
import { EventClient } from '../support/ws-client.js';

const TYPED_TOOL = `
interface Input { word: string }
export const name = 'shout';
export const description = 'Says a word louder.';
export const parameters = { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] };
export async function execute(input: Input): Promise<string> {
  return input.word.toUpperCase();
}
`;

/** Runs `node <args>` in `cwd` to its end. */
function run(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Command lines of every process below `pid`, read from /proc. */
function descendantCommands(pid: number): string[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Ended while we looked.
    }
  }
  const below = (p: number): boolean => {
    const up = parent.get(p);
    return up === pid || (up !== undefined && up > 1 && below(up));
  };
  const commands: string[] = [];
  for (const p of parent.keys()) {
    if (!below(p)) continue;
    try {
      commands.push(readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // Ended while we looked.
    }
  }
  return commands;
}

describe.runIf(process.platform === 'linux')('the compiled build', () => {
  const root = tempDir('navi-build-');
  let fake: FakeLlm;
  const children = new Set<ChildProcess>();

  /** `node bin/navi.js serve` of the copy; resolves once /health answers. */
  async function serve(name: string): Promise<{ child: ChildProcess; url: string }> {
    const dir = join(root, `run-${name}`);
    mkdirSync(join(dir, 'tools'), { recursive: true });
    const port = Number(new URL(await closedPortUrl()).port);
    const child = spawn(process.execPath, [join(root, 'bin/navi.js'), 'serve'], {
      cwd: dir,
      env: naviProcessEnv({ dir, port, ollamaUrl: fake.ollamaUrl }),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.add(child);
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 300 && child.exitCode === null; i++) {
      if (
        await fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return { child, url };
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`navi (${name}) did not answer /health; exit code ${child.exitCode}`);
  }

  async function turn(url: string, replies: ScriptedReply[], content: string) {
    const created = await fetch(`${url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { session_id } = (await created.json()) as { session_id: string };
    fake.enqueue(...replies);
    const client = await EventClient.connect(`ws://${new URL(url).host}/ws/sessions/${session_id}`);
    client.send({ type: 'message', content });
    const events = await client.waitForRunEnd();
    await client.close();
    return events;
  }

  beforeAll(async () => {
    fake = await startFakeLlm();
    // The copy keeps the sources' times, as a checkout does until a file is edited.
    for (const part of ['src', 'bin', 'mcp_servers.shipped', 'package.json', 'tsconfig.json'])
      cpSync(join(repoRoot, part), join(root, part), { recursive: true, preserveTimestamps: true });
    symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
    // A web client newer than src/protocol: navi serve has nothing to build.
    mkdirSync(join(root, 'web', 'dist'), { recursive: true });
    writeFileSync(join(root, 'web', 'dist', 'index.html'), '<!doctype html><title>Navi</title>');
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await fake?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('builds: every source compiled to dist/ at the same depth, and a stamp saying from what', async () => {
    expect(buildState(root)).toMatchObject({
      current: false,
      reason: expect.stringContaining('no build'),
    });
    // From another folder, as the service unit runs it.
    const built = await run([join(root, 'bin/navi-build.js')], tmpdir());
    expect(built.stderr).toBe('');
    expect(built.code).toBe(0);
    expect(built.stdout).toMatch(/^built dist\/: \d+ files in \d+ ms\n$/);
    const stamp = JSON.parse(readFileSync(join(root, 'dist', 'build-stamp.json'), 'utf8'));
    expect(stamp).toMatchObject({
      sources: expect.any(Number),
      esbuild: expect.any(String),
      node: process.version,
    });
    expect(existsSync(compiledPath('src/servers/navi-ui/main.ts', root))).toBe(true);
    expect(existsSync(join(root, 'dist/machine/fs/navi-paths.js'))).toBe(true);
    expect(readdirSync(join(root, 'dist/cli')).some((f) => f.endsWith('.test.js'))).toBe(false);
    expect(buildState(root)).toEqual({ current: true, reason: `built ${stamp.built_at}` });
  });

  it('serves /health and a streamed turn from the compiled code, without starting tsx', async () => {
    const { child, url } = await serve('plain');
    const events = await turn(url, [{ text: 'Compiled and streaming.', chunkSize: 4 }], 'Hello?');
    expect(events.filter((e) => e.type === 'stream_delta').length).toBeGreaterThan(1);
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Compiled and streaming.' });
    expect(descendantCommands(child.pid ?? 0).filter((c) => c.includes('esbuild'))).toEqual([]);
    child.kill('SIGKILL');
  });

  it('starts tsx for user files on the first import, not before (its hooks thread counted)', async () => {
    const tool = join(root, 'lazy-tool.ts');
    writeFileSync(tool, 'interface Box { n: number }\nexport const box: Box = { n: 7 };\n');
    const script = `
      import { readdirSync } from 'node:fs';
      const { ModuleImporter } = await import(${JSON.stringify(join(root, 'dist/tools/module-import.js'))});
      const threads = () => readdirSync('/proc/self/task').length;
      const before = threads();
      const importer = new ModuleImporter();
      await importer.refresh();
      await new Promise((r) => setTimeout(r, 300));
      const refreshed = threads();
      const mod = await importer.import(${JSON.stringify(tool)});
      console.log(JSON.stringify({ before, refreshed, imported: threads(), n: mod.box.n }));
      await importer.close();`;
    const ran = await run(['--input-type=module', '-e', script], root);
    expect(ran.stderr).toBe('');
    const counts = JSON.parse(ran.stdout) as {
      before: number;
      refreshed: number;
      imported: number;
      n: number;
    };
    expect(counts.n).toBe(7);
    expect(counts.refreshed).toBe(counts.before);
    expect(counts.imported).toBeGreaterThan(counts.refreshed);
  });

  it('still loads and runs a user tool written in TypeScript', async () => {
    const dir = join(root, 'run-tool');
    mkdirSync(join(dir, 'tools'), { recursive: true });
    writeFileSync(join(dir, 'tools', 'shout.ts'), TYPED_TOOL);
    writeFileSync(join(dir, 'tools', 'enabled.json'), '["shout"]');
    const { child, url } = await serve('tool');
    const events = await turn(
      url,
      [{ toolCalls: [{ name: 'shout', arguments: { word: 'hey' } }] }, { text: 'Done.' }],
      'Shout hey.',
    );
    expect(events.find((e) => e.type === 'tool_call')).toMatchObject({ tool: 'shout', success: true });
    expect(JSON.stringify(events)).toContain('HEY');
    child.kill('SIGKILL');
  });

  it('starts a shipped MCP server compiled through bin/navi-run.js', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['bin/navi-run.js', 'src/servers/navi-ui/main.ts'],
      cwd: root,
      stderr: 'inherit',
    });
    const client = new Client({ name: 'compiled-build-test', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const pid = transport.pid;
    expect(pid).not.toBeNull();
    expect(descendantCommands(pid ?? 0).filter((c) => c.includes('esbuild'))).toEqual([]);
    await client.close();
  });

  it('refuses a navi-run.js line with no program, saying what to run', async () => {
    const none = await run(['bin/navi-run.js'], root);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('usage: node bin/navi-run.js src/<program>.ts');
    const outside = await run(['bin/navi-run.js', '../elsewhere.ts'], root);
    expect(outside.code).not.toBe(0);
    expect(outside.stderr).toContain('is not under src/');
  });

  it('--if-stale leaves a current build alone; bad arguments are refused, saying what to give', async () => {
    const stamp = readFileSync(join(root, 'dist', 'build-stamp.json'), 'utf8');
    const again = await run([join(root, 'bin/navi-build.js'), '--if-stale'], tmpdir());
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^dist\/ is current \(built /);
    expect(readFileSync(join(root, 'dist', 'build-stamp.json'), 'utf8')).toBe(stamp);

    const noFolder = await run([join(root, 'bin/navi-build.js'), '--root'], root);
    expect(noFolder.code).toBe(1);
    expect(noFolder.stderr).toContain('--root needs a folder: --root /path/to/navi');
    const unknown = await run([join(root, 'bin/navi-build.js'), '--watch'], root);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('takes --if-stale and --root <folder> only, not --watch');
    const missing = await run([join(root, 'bin/navi-build.js'), '--root', join(root, 'nowhere')], root);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`${join(root, 'nowhere')} holds no src/ folder`);
    expect(existsSync(join(root, 'nowhere'))).toBe(false);
    expect(readFileSync(join(root, 'dist', 'build-stamp.json'), 'utf8')).toBe(stamp);
  });

  it('runs the TypeScript once a source is added or changed after the build', async () => {
    const extra = join(root, 'src/util/added-after-build.ts');
    writeFileSync(extra, 'export const later = 1;\n');
    utimesSync(extra, new Date(2000, 0, 1), new Date(2000, 0, 1));
    expect(buildState(root)).toMatchObject({
      current: false,
      reason: expect.stringContaining('source files'),
    });
    rmSync(extra);
    expect(buildState(root).current).toBe(true);

    // A current stamp whose entry is gone (a build under way) runs the TypeScript, saying so.
    rmSync(compiledPath('src/cli/main.ts', root));
    const help = await run([join(root, 'bin/navi.js'), 'help'], root);
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('show this text') });
    expect(help.stderr).toContain('dist/cli/main.js is missing; running the TypeScript');

    const edited = join(root, 'src/config/settings.ts');
    const later = new Date(Date.now() + 60_000);
    utimesSync(edited, later, later);
    expect(buildState(root)).toEqual({
      current: false,
      reason: 'src/config/settings.ts changed after the last build',
    });
    // Without its compiled entry (removed above), a server that answers ran the TypeScript.
    const { child, url } = await serve('stale');
    const events = await turn(url, [{ text: 'From the sources.' }], 'Hello?');
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'From the sources.' });
    child.kill('SIGKILL');
  });
});

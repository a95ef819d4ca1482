/**
 * The process tool with real subprocesses: starting, reading, killing, the running cap, the
 * output ring, sessions kept apart, and no process group left behind after a session is deleted
 * or Navi stops.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, groupGone, groupMembers } from '../../../test/support/processes.js';
import { needsProgram } from '../../../test/support/requirements.js';
import { type SettingName, testSettings } from '../../config/settings.js';
import { ProcessManager, type ProcessManagerOptions } from '../../machine/sandbox/process-manager.js';
import { findNetworkHelpers } from '../../machine/sandbox/sandbox-network.js';
import { runValidated, testGuard } from '../test-helpers.js';
import type { ToolContext, ToolResult } from '../types.js';
import { createProcessTool, type ProcessToolDeps } from './process.js';
import { isAlive, makeCtx } from './test-support.js';

let base: string;
let root: string;
let managers: ProcessManager[] = [];

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'navi-proc-'));
  root = join(base, 'root');
  mkdirSync(root);
});
afterEach(async () => {
  // Nothing a test started may outlive it, even when the test failed half-way.
  await Promise.all(managers.map((m) => m.close()));
  managers = [];
  rmSync(base, { recursive: true, force: true });
});

function setup(
  env: Partial<Record<SettingName, string>> = {},
  options: Partial<ProcessManagerOptions> = {},
  extra: Partial<ProcessToolDeps> = {},
) {
  const settings = testSettings({ FS_ALLOWED_PATHS: root, NAVI_SANDBOX: 'off', ...env });
  const manager = new ProcessManager({
    maxRunning: settings.PROCESS_MAX_RUNNING,
    outputMaxBytes: settings.PROCESS_OUTPUT_MAX_BYTES,
    killGraceMs: 500,
    ...options,
  });
  managers.push(manager);
  const tool = createProcessTool({ settings, guard: testGuard(settings), manager, ...extra });
  const call = (args: Record<string, unknown>, ctx: ToolContext = makeCtx()): Promise<ToolResult> =>
    runValidated(tool, args, ctx);
  return { manager, tool, call };
}

type Call = ReturnType<typeof setup>['call'];

const idOf = (r: ToolResult) => String(r.metadata?.process_id);
const pidOf = (r: ToolResult) => Number(r.metadata?.pid);

/** Reads output until `text` has appeared in what was read so far; returns all of it. */
async function outputUntil(call: Call, id: string, text: string, ctx?: ToolContext): Promise<string> {
  let seen = '';
  await eventually(async () => {
    seen += (await call({ action: 'output', process_id: id }, ctx)).output;
    return seen.includes(text);
  });
  return seen;
}

describe('process: start, output, status, kill', () => {
  it('starts a command in the background and returns its id and pid', async () => {
    const { call } = setup();
    const r = await call({ action: 'start', command: 'echo hello; sleep 300', cwd: root });
    expect(r.success).toBe(true);
    expect(r.output).toMatch(/^Started p1 \(pid \d+\) in .*, not sandboxed\./);
    expect(r.metadata).toMatchObject({ process_id: 'p1', sandboxed: false, cwd: root });
    expect(isAlive(pidOf(r))).toBe(true);
    expect(await outputUntil(call, 'p1', 'hello')).toContain('p1: running for');
  });

  it('hands out only the output that is new since the last read, stdout and stderr together', async () => {
    const { call } = setup();
    const flag = join(root, 'go');
    const started = await call({
      action: 'start',
      command: `echo one; echo err-one >&2; while [ ! -e ${flag} ]; do sleep 0.05; done; echo two; sleep 300`,
    });
    const id = idOf(started);
    const first = await outputUntil(call, id, 'err-one');
    expect(first).toContain('one\n');
    const quiet = await call({ action: 'output', process_id: id });
    expect(quiet.output).toContain('(no new output since the last read)');
    writeFileSync(flag, '');
    const second = await outputUntil(call, id, 'two');
    expect(second).not.toContain('one');
  });

  it('reports the exit code and runtime once the command ends', async () => {
    const { call } = setup();
    const id = idOf(await call({ action: 'start', command: 'echo bye; exit 3' }));
    await eventually(
      async () => (await call({ action: 'status', process_id: id })).metadata?.state === 'exited',
    );
    const s = await call({ action: 'status', process_id: id });
    expect(s.output).toMatch(/^p\d+: exited with code 3 after [\d.]+ s\ncommand: echo bye; exit 3\n/);
    expect(s.output).toContain('output: 4 bytes in all, 4 not read yet');
    expect(s.metadata).toMatchObject({ exit_code: 3, killed: false, state: 'exited' });
  });

  it('kills the whole process group, background children included, and refuses a second kill', async () => {
    const { call } = setup();
    const r = await call({ action: 'start', command: 'sleep 300 & sleep 300' });
    const pgid = pidOf(r);
    // bash, and both sleeps once bash has started them.
    await eventually(() => groupMembers(pgid).length >= 3);
    const k = await call({ action: 'kill', process_id: idOf(r) });
    expect(k.success).toBe(true);
    expect(k.output).toMatch(
      /^Killed p\d+ and its whole process group: killed by SIGTERM after .* \(killed on request\)\.$/,
    );
    await eventually(() => groupGone(pgid));
    const again = await call({ action: 'kill', process_id: idOf(r) });
    expect(again.success).toBe(false);
    expect(again.output).toContain('is not running');
    expect(again.output).toContain('nothing to kill');
  });

  it('follows SIGTERM with SIGKILL for a group that ignores it', async () => {
    const { call } = setup();
    const r = await call({ action: 'start', command: "trap '' TERM; sleep 300 & sleep 300" });
    const pgid = pidOf(r);
    await eventually(() => groupMembers(pgid).length >= 3);
    const k = await call({ action: 'kill', process_id: idOf(r) });
    expect(k.output).toContain('SIGKILL');
    await eventually(() => groupGone(pgid));
  });

  it('outlives the call that started it: the tool signal does not reach it', async () => {
    const { call } = setup();
    const callSignal = new AbortController();
    const r = await call({ action: 'start', command: 'sleep 300' }, makeCtx({ signal: callSignal.signal }));
    callSignal.abort();
    const s = await call({ action: 'status', process_id: idOf(r) });
    expect(s.metadata).toMatchObject({ state: 'running' });
    expect(isAlive(pidOf(r))).toBe(true);
  });

  it('lists the processes of the conversation with their state', async () => {
    const { call } = setup();
    expect((await call({ action: 'list' })).output).toBe('No background processes in this conversation.');
    await call({ action: 'start', command: 'sleep 300' });
    const done = idOf(await call({ action: 'start', command: 'true' }));
    await eventually(
      async () => (await call({ action: 'status', process_id: done })).metadata?.state === 'exited',
    );
    const list = await call({ action: 'list' });
    expect(list.output).toMatch(
      /^p1 {2}running for .* {2}sleep 300\np2 {2}exited with code 0 after .* {2}true\n/,
    );
    expect(list.output).toContain('1 of 5 processes Navi allows are running now');
  });
});

describe('process: limits', () => {
  it('keeps only the newest output and says how much was overwritten before it was read', async () => {
    const { call } = setup({ PROCESS_OUTPUT_MAX_BYTES: '1024' });
    const id = idOf(
      await call({ action: 'start', command: "head -c 5000 /dev/zero | tr '\\0' a; echo; echo END" }),
    );
    await eventually(
      async () => (await call({ action: 'status', process_id: id })).metadata?.state === 'exited',
    );
    const r = await call({ action: 'output', process_id: id });
    expect(r.output).toContain(
      '[3981 bytes of output were overwritten before they were read: only the last 1024 bytes are kept',
    );
    expect(r.output).toMatch(/a{100}\nEND\n$/);
    expect(r.metadata).toMatchObject({ dropped: 3981, remaining: 0 });
  });

  it('caps what one read hands back and keeps the rest for the next', async () => {
    const { call } = setup({}, {}, { readMaxBytes: 100 });
    const id = idOf(await call({ action: 'start', command: "head -c 250 /dev/zero | tr '\\0' b" }));
    await eventually(
      async () => (await call({ action: 'status', process_id: id })).metadata?.state === 'exited',
    );
    const first = await call({ action: 'output', process_id: id });
    expect(first.output).toContain(
      `${'b'.repeat(100)}\n[150 more bytes are waiting; call output again to read them]`,
    );
    await call({ action: 'output', process_id: id });
    const last = await call({ action: 'output', process_id: id });
    expect(last.metadata).toMatchObject({ remaining: 0 });
    expect(last.output).toContain('b'.repeat(50));
  });

  it('reads no more than the executor would let through, so nothing is cut unseen', async () => {
    const { call } = setup();
    const ctx = makeCtx({ settings: testSettings({ TOOL_MAX_OUTPUT_CHARS: '1500' }) });
    const id = idOf(await call({ action: 'start', command: "head -c 1800 /dev/zero | tr '\\0' c" }, ctx));
    await eventually(
      async () => (await call({ action: 'status', process_id: id }, ctx)).metadata?.state === 'exited',
    );
    const first = await call({ action: 'output', process_id: id }, ctx);
    expect(first.output.length).toBeLessThan(1500);
    expect(first.metadata).toMatchObject({ remaining: 1300 });
    const second = await call({ action: 'output', process_id: id }, ctx);
    expect(second.metadata).toMatchObject({ remaining: 800 });
  });

  it('refuses to start beyond PROCESS_MAX_RUNNING, across sessions, and says how to free a slot', async () => {
    const { call } = setup({ PROCESS_MAX_RUNNING: '2' });
    const a = makeCtx({ sessionId: 'a' });
    const b = makeCtx({ sessionId: 'b' });
    const first = await call({ action: 'start', command: 'sleep 300' }, a);
    await call({ action: 'start', command: 'sleep 300' }, b);
    const refused = await call({ action: 'start', command: 'echo never' }, a);
    expect(refused.success).toBe(false);
    expect(refused.output).toContain('2 background processes are already running');
    expect(refused.output).toContain('PROCESS_MAX_RUNNING=2');
    expect(refused.output).toContain('1 of them belong to this conversation');
    expect(refused.output).toContain('"kill"');
    await call({ action: 'kill', process_id: idOf(first) }, a);
    expect((await call({ action: 'start', command: 'sleep 300' }, a)).success).toBe(true);
  });
});

describe('process: the same rules as terminal', () => {
  it('refuses commands outside TERMINAL_ALLOWED_COMMANDS before starting anything', async () => {
    const { call, manager } = setup({ TERMINAL_ALLOWED_COMMANDS: 'echo,sleep' });
    const r = await call({ action: 'start', command: `sleep 300 & touch ${join(root, 'x')}` });
    expect(r.output).toBe('Refused: "touch" is not an allowed command. Allowed: echo, sleep.');
    const sub = await call({ action: 'start', command: 'echo $(id)' });
    expect(sub.output).toContain('command substitution');
    expect(manager.running()).toBe(0);
    expect(readdirSync(root)).toEqual([]);
    expect((await call({ action: 'start', command: 'sleep 300' })).success).toBe(true);
  });

  it('refuses a working folder outside the allowed folders', async () => {
    const { call, manager } = setup();
    const r = await call({ action: 'start', command: 'pwd', cwd: '/etc' });
    expect(r.output).toContain('Working directory refused');
    expect(r.output).toContain(`outside the allowed folders (${root})`);
    expect(manager.running()).toBe(0);
  });

  it('declares the same risk as terminal and passes no secrets to the command', async () => {
    const { tool, call } = setup(
      {},
      {},
      { env: { PATH: process.env.PATH, OPENAI_API_KEY: 'sk-very-secret', HOME: root } },
    );
    expect(tool.risk).toEqual({ reads: true, writes: true, executes: true, network: true, sandboxed: true });
    expect(tool.group).toBe('runtime');
    const id = idOf(await call({ action: 'start', command: 'env; echo END' }));
    expect(await outputUntil(call, id, 'END')).not.toContain('sk-very-secret');
  });

  it('is refused to subagents, whose session ends with them', async () => {
    const { call, manager } = setup();
    const r = await call({ action: 'start', command: 'sleep 300' }, makeCtx({ isSubagent: true, depth: 1 }));
    expect(r.output).toContain('A subagent cannot start background processes');
    expect(manager.running()).toBe(0);
  });
});

describe('process: sessions and cleanup', () => {
  it('shows a session only its own processes', async () => {
    const { call } = setup();
    const a = makeCtx({ sessionId: 'a' });
    const b = makeCtx({ sessionId: 'b' });
    const id = idOf(await call({ action: 'start', command: 'echo private-to-a; sleep 300' }, a));
    expect((await call({ action: 'list' }, b)).output).toBe('No background processes in this conversation.');
    for (const action of ['status', 'output', 'kill']) {
      const r = await call({ action, process_id: id }, b);
      expect(r.success, action).toBe(false);
      expect(r.output, action).toBe(
        `No process "${id}" in this conversation. It has none; start one with action "start".`,
      );
    }
    expect(await outputUntil(call, id, 'private-to-a', a)).toContain('private-to-a');
  });

  it('kills every process group of a deleted session and leaves the others running', async () => {
    const { call, manager } = setup();
    const a = makeCtx({ sessionId: 'a' });
    const b = makeCtx({ sessionId: 'b' });
    const doomed = pidOf(await call({ action: 'start', command: 'sleep 300 & sleep 300' }, a));
    const alsoDoomed = pidOf(await call({ action: 'start', command: 'sleep 300' }, a));
    const kept = pidOf(await call({ action: 'start', command: 'sleep 300' }, b));
    await eventually(() => groupMembers(doomed).length >= 3);
    await manager.killOwner('a');
    await eventually(() => groupGone(doomed) && groupGone(alsoDoomed));
    expect(groupGone(kept)).toBe(false);
    expect((await call({ action: 'list' }, a)).output).toBe('No background processes in this conversation.');
  });

  it('kills every process group when Navi stops, and starts nothing after', async () => {
    const { call, manager } = setup();
    const pgids = [
      pidOf(await call({ action: 'start', command: 'sleep 300 & sleep 300' }, makeCtx({ sessionId: 'a' }))),
      pidOf(await call({ action: 'start', command: "trap '' TERM; sleep 300" }, makeCtx({ sessionId: 'b' }))),
    ];
    await eventually(() => groupMembers(pgids[0] as number).length >= 3);
    await manager.close();
    await eventually(() => pgids.every(groupGone));
    const late = await call({ action: 'start', command: 'sleep 300' });
    expect(late.output).toContain('shutting down');
  });
});

describe('process: bad input', () => {
  it('says what is missing, wrong or unknown for every action', async () => {
    const { call } = setup();
    expect((await call({ action: 'start' })).output).toBe(
      'Action "start" needs "command" (a bash command line).',
    );
    expect((await call({ action: 'start', command: '   ' })).output).toContain('non-empty command line');
    const typed = await call({ action: 'start', command: { rm: '-rf' } });
    expect(typed.success).toBe(false);
    expect(typed.output).toContain('command');
    const unknownAction = await call({ action: 'restart', process_id: 'p1' });
    expect(unknownAction.success).toBe(false);
    expect(unknownAction.output).toContain('start');
    const extra = await call({ action: 'list', signal: 'SIGKILL' });
    expect(extra.success).toBe(false);
    for (const action of ['status', 'output', 'kill']) {
      const missing = await call({ action });
      expect(missing.output, action).toBe(
        `Action "${action}" needs "process_id" (e.g. "p1"); action "list" shows this conversation's.`,
      );
      const unknown = await call({ action, process_id: 'p99' });
      expect(unknown.output, action).toContain('No process "p99" in this conversation.');
    }
  });

  it('refuses a huge command and a hostile id without echoing them back whole', async () => {
    const { call, manager } = setup();
    const huge = await call({ action: 'start', command: `echo ${'x'.repeat(20_000)}` });
    expect(huge.output).toBe(
      'The command is 20005 characters; at most 10000 are accepted. Write a long script to a file and start that file instead.',
    );
    expect(manager.running()).toBe(0);
    const hostile = await call({ action: 'output', process_id: `../../proc/1\n${'y'.repeat(50_000)}` });
    expect(hostile.success).toBe(false);
    expect(hostile.output.length).toBeLessThan(200);
  });

  it('reports a program that cannot be started as a failure, not a crash', async () => {
    const { call, manager } = setup({}, {}, { bashPath: join(base, 'no-such-bash') });
    const r = await call({ action: 'start', command: 'echo hi' });
    expect(r.success).toBe(false);
    expect(r.output).toContain('Could not start');
    expect(r.output).toContain('ENOENT');
    expect(manager.running()).toBe(0);
  });
});

describe.skipIf(!needsProgram('bwrap', 'process sandbox tests'))('process (bubblewrap)', () => {
  /** Live processes whose command line holds `marker` (inside the sandbox they have a group of their own). */
  function processesWith(marker: string): number[] {
    const found: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
        if (cmd.startsWith('sleep ') && cmd.includes(marker) && isAlive(Number(entry)))
          found.push(Number(entry));
      } catch {
        // exited meanwhile
      }
    }
    return found;
  }

  const sandboxed = () =>
    setup({
      NAVI_SANDBOX: 'required',
      DB_PATH: join(base, 'navi.db'),
      SESSION_FILES_DIR: join(base, 'files'),
    });

  it('runs inside the sandbox: the allowed folder writable, the rest read-only, no network', async () => {
    const { call } = sandboxed();
    const r = await call({
      action: 'start',
      command: `echo ok > ${join(root, 'w.txt')}; touch ${join(base, 'outside.txt')} /usr/navi-process-x 2>&1; (echo > /dev/tcp/127.0.0.1/9) 2>/dev/null || echo NO-NETWORK; echo END`,
    });
    expect(r.metadata).toMatchObject({ sandboxed: true, network: 'none' });
    expect(r.output).toContain('sandboxed without network');
    const out = await outputUntil(call, idOf(r), 'END');
    expect(out).toContain('Read-only file system');
    expect(out).toContain('NO-NETWORK');
    expect(readFileSync(join(root, 'w.txt'), 'utf8')).toBe('ok\n');
    expect(existsSync(join(base, 'outside.txt'))).toBe(false);
  });

  it('starts with outbound network only once the network is fenced in, and never reaches the host loopback', async () => {
    if (!needsProgram('slirp4netns', 'process sandbox with network')) return;
    const { call } = setup(
      { NAVI_SANDBOX: 'required', DB_PATH: join(base, 'navi.db'), SESSION_FILES_DIR: join(base, 'files') },
      {},
      { networkAllowed: () => true },
    );
    const r = await call({
      action: 'start',
      command:
        'ip -4 addr show tap0 | grep -c 10.0.2.100; (echo > /dev/tcp/127.0.0.1/9) 2>/dev/null || echo NO-LOOPBACK; echo END',
    });
    expect(r.metadata).toMatchObject({ sandboxed: true, network: 'outbound' });
    const out = await outputUntil(call, idOf(r), 'END');
    expect(out).toContain('1\n');
    expect(out).toContain('NO-LOOPBACK');
  });

  it('reports a sandbox network that cannot be set up, and runs nothing', async () => {
    const helpers = findNetworkHelpers();
    if ('missing' in helpers) {
      expect(needsProgram(helpers.missing[0] as string, 'process sandbox network set-up')).toBe(false);
      return;
    }
    const { call, manager } = setup(
      { NAVI_SANDBOX: 'required', DB_PATH: join(base, 'navi.db'), SESSION_FILES_DIR: join(base, 'files') },
      {},
      { networkAllowed: () => true, networkHelpers: { ...helpers, slirp4netns: '/bin/false' } },
    );
    const r = await call({ action: 'start', command: `touch ${join(root, 'ran')}` });
    expect(r.success).toBe(false);
    expect(r.output).toContain("The command was not run: the sandbox's network could not be set up safely");
    expect(existsSync(join(root, 'ran'))).toBe(false);
    expect(manager.running()).toBe(0);
    expect((await call({ action: 'list' })).output).toBe('No background processes in this conversation.');
  });

  it('leaves nothing of the sandbox behind after kill and after the session is deleted', async () => {
    const { call, manager } = sandboxed();
    const marker = `${300 + Math.floor(Math.random() * 1000)}.${process.pid}`;
    const a = makeCtx({ sessionId: 'a' });
    const first = await call({ action: 'start', command: `sleep ${marker} & sleep ${marker}` }, a);
    await call({ action: 'start', command: `sleep ${marker}` }, a);
    await eventually(() => processesWith(marker).length >= 3);
    await call({ action: 'kill', process_id: idOf(first) }, a);
    await eventually(() => processesWith(marker).length === 1);
    await manager.killOwner('a');
    await eventually(() => processesWith(marker).length === 0);
  });
});

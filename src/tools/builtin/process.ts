/**
 * `process`: starts a bash command line in the background and looks after it: its state, its
 * output since the last look, killing it, listing the conversation's processes. Commands are
 * checked, confined and sandboxed exactly as `terminal`'s (`ShellLauncher`); the processes live
 * in the one `ProcessManager` of Navi, belong to the session that started them, outlive the run
 * and the call (the tool's time limit does not apply to them) and end with the session or Navi.
 */
import { z } from 'zod';
import type { ProcessInfo, ProcessManager } from '../../machine/sandbox/process-manager.js';
import { setupFailure } from '../../machine/sandbox/sandbox-launch.js';
import { ShellLauncher } from '../../machine/sandbox/shell-launch.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok, type ToolContext, type ToolResult } from '../types.js';
import type { TerminalToolDeps } from './terminal.js';

/** What `process` shares with `terminal` (settings, guard, sandbox, network), plus its own. */
export interface ProcessToolDeps
  extends Omit<TerminalToolDeps, 'defaultTimeoutMs' | 'maxTimeoutMs' | 'maxOutputBytes'> {
  /** The one manager of Navi's background processes. */
  manager: ProcessManager;
  /**
   * Output handed back by one `output` call, at most. Default 30 000 bytes; less when
   * TOOL_MAX_OUTPUT_CHARS (from the call's settings) would cut the answer.
   */
  readMaxBytes?: number;
  /** Longest command line accepted. Default 10 000 characters. */
  maxCommandChars?: number;
}

const actions = ['start', 'status', 'output', 'kill', 'list'] as const;

const parameters = z.strictObject({
  action: z.enum(actions).describe('What to do.'),
  command: z.string().optional().describe('start: the command line (bash syntax).'),
  cwd: z.string().optional().describe('start: working directory, inside the allowed folders.'),
  process_id: z.string().optional().describe('status/output/kill: the id start returned, e.g. "p1".'),
});

type Params = z.output<typeof parameters>;

export function createProcessTool(deps: ProcessToolDeps): TypedTool<typeof parameters> {
  const { manager } = deps;
  const readMax = deps.readMaxBytes ?? 30_000;
  const maxCommand = deps.maxCommandChars ?? 10_000;
  const shell = new ShellLauncher(deps);
  const allowed = shell.allowedPrograms();

  async function start(p: Params, ctx: ToolContext): Promise<ToolResult> {
    const { command } = p;
    if (command === undefined) return fail('Action "start" needs "command" (a bash command line).');
    if (command.length > maxCommand)
      return fail(
        `The command is ${command.length} characters; at most ${maxCommand} are accepted. ` +
          'Write a long script to a file and start that file instead.',
      );
    // A subagent's session id dies with it: nothing would own the process or end it.
    if (ctx.isSubagent)
      return fail(
        'A subagent cannot start background processes: they would outlive it with nobody to stop them. ' +
          'Use terminal here, or let the main conversation start the process.',
      );
    const plan = await shell.plan({
      command,
      ...(p.cwd !== undefined ? { cwd: p.cwd } : {}),
      networkAllowed: deps.networkAllowed?.(ctx.profileId) ?? false,
      log: ctx.log,
    });
    if (!plan.ok) return fail(plan.reason);
    const network = plan.launch?.network ?? 'unsandboxed';
    const started = await manager.start(ctx.sessionId, {
      command,
      program: plan.program,
      args: plan.args,
      cwd: plan.cwd,
      env: plan.env,
      sandboxed: plan.sandboxed,
      network,
      ...(plan.launch ? { extraFds: plan.launch.extraFds } : {}),
      ...(plan.launch?.prepare ? { prepare: plan.launch.prepare } : {}),
    });
    if (!started.ok) return fail(started.setup ? setupFailure(started.reason) : started.reason);
    const { info } = started;
    const text = [
      ...(plan.launch?.notes ?? []),
      `Started ${info.id} (pid ${info.pid}) in ${info.cwd}, ${where(info)}.`,
      `Read what it prints with {"action": "output", "process_id": "${info.id}"}; end it with "kill". ` +
        'It keeps running after this answer, until it exits, is killed, or the conversation is deleted.',
    ].join('\n');
    return ok(text, {
      process_id: info.id,
      pid: info.pid,
      sandboxed: info.sandboxed,
      network,
      cwd: info.cwd,
    });
  }

  function status(p: Params, ctx: ToolContext): ToolResult {
    const found = lookUp(p, ctx);
    if ('error' in found) return found.error;
    const { info } = found;
    const lines = [
      `${info.id}: ${stateLine(info)}`,
      `command: ${info.command}`,
      `cwd: ${info.cwd}; pid ${info.pid}; ${where(info)}`,
      `output: ${info.outputBytes} bytes in all, ${info.unreadBytes} not read yet`,
    ];
    if (info.setupError !== undefined) lines.push(setupFailure(info.setupError));
    return ok(lines.join('\n'), summary(info));
  }

  function output(p: Params, ctx: ToolContext): ToolResult {
    const found = lookUp(p, ctx);
    if ('error' in found) return found.error;
    // What the executor would cut from the answer must stay in the ring for the next read.
    const toolMax = ctx.settings?.TOOL_MAX_OUTPUT_CHARS;
    const cap = toolMax === undefined ? readMax : Math.min(readMax, Math.max(64, toolMax - 1000));
    const read = manager.read(ctx.sessionId, found.info.id, cap);
    if (!read) return fail(`No process "${found.info.id}" in this conversation.`);
    const { info } = read;
    const head = `${info.id}: ${stateLine(info)}`;
    const parts = [head];
    if (read.dropped > 0)
      parts.push(
        `[${read.dropped} bytes of output were overwritten before they were read: only the last ` +
          `${manager.outputCapacity} bytes are kept; read more often to see everything]`,
      );
    if (read.text === '' && read.dropped === 0) parts.push('(no new output since the last read)');
    else if (read.text !== '') parts.push(read.text);
    if (read.remaining > 0)
      parts.push(`[${read.remaining} more bytes are waiting; call output again to read them]`);
    return ok(parts.join('\n'), {
      ...summary(info),
      dropped: read.dropped,
      remaining: read.remaining,
    });
  }

  async function kill(p: Params, ctx: ToolContext): Promise<ToolResult> {
    const found = lookUp(p, ctx);
    if ('error' in found) return found.error;
    const outcome = await manager.kill(ctx.sessionId, found.info.id);
    if (!outcome.ok) return fail(`No process "${found.info.id}" in this conversation.`);
    const { info } = outcome;
    if (outcome.alreadyExited)
      return fail(`${info.id} is not running (${stateLine(info)}); there is nothing to kill.`, summary(info));
    return ok(`Killed ${info.id} and its whole process group: ${stateLine(info)}.`, summary(info));
  }

  function list(ctx: ToolContext): ToolResult {
    const mine = manager.list(ctx.sessionId);
    if (mine.length === 0) return ok('No background processes in this conversation.', { processes: [] });
    const lines = mine.map((info) => `${info.id}  ${stateLine(info)}  ${shorten(info.command)}`);
    const limit = `${manager.running()} of ${manager.maxRunning} processes Navi allows are running now (all conversations).`;
    return ok([...lines, limit].join('\n'), { processes: mine.map(summary) });
  }

  /** The caller's process named by `process_id`, or the failure that says what to pass. */
  function lookUp(p: Params, ctx: ToolContext): { info: ProcessInfo } | { error: ToolResult } {
    const id = p.process_id?.trim();
    if (!id)
      return {
        error: fail(
          `Action "${p.action}" needs "process_id" (e.g. "p1"); action "list" shows this conversation's.`,
        ),
      };
    const info = manager.get(ctx.sessionId, id);
    if (info) return { info };
    const known = manager.list(ctx.sessionId).map((i) => i.id);
    return {
      error: fail(
        `No process "${shorten(id, 40)}" in this conversation. ` +
          (known.length > 0
            ? `Its processes: ${known.join(', ')}.`
            : 'It has none; start one with action "start".'),
      ),
    };
  }

  return defineTool({
    name: 'process',
    group: 'runtime',
    // Starting runs commands as terminal does; the executor asks the same questions.
    risk: { reads: true, writes: true, executes: true, network: true, sandboxed: true },
    description:
      'Run a shell command line in the background (a server, a long build, a watcher) and look after it: ' +
      'start returns an id such as "p1"; status, output (what it printed since the last read), kill ' +
      '(the whole process group) and list. ' +
      (allowed ? `Only these programs may be used: ${allowed.join(', ')}. ` : '') +
      'Commands run like terminal commands (same sandbox), but keep running after the call; they end when ' +
      'killed, when they exit, or when the conversation is deleted. For a command whose result you wait for, use terminal.',
    parameters,
    async execute(params, ctx) {
      switch (params.action) {
        case 'start':
          return start(params, ctx);
        case 'status':
          return status(params, ctx);
        case 'output':
          return output(params, ctx);
        case 'kill':
          return kill(params, ctx);
        case 'list':
          return list(ctx);
      }
    },
  });
}

/** Where the process runs, in words. */
function where(info: ProcessInfo): string {
  if (!info.sandboxed) return 'not sandboxed';
  return info.network === 'outbound' ? 'sandboxed with outbound network' : 'sandboxed without network';
}

/** `running for 12 s`, `exited with code 0 after 3.5 s`, `killed by SIGTERM after 2 min`… */
function stateLine(info: ProcessInfo): string {
  if (info.state === 'running') return `running for ${duration(info.runtimeMs)}`;
  const after = duration(info.runtimeMs);
  if (info.setupError !== undefined) return `never ran: the sandbox could not be set up (after ${after})`;
  const how =
    info.exitCode !== null ? `exited with code ${info.exitCode}` : `killed by ${info.signal ?? 'a signal'}`;
  return `${how} after ${after}${info.killed ? ' (killed on request)' : ''}`;
}

function duration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function shorten(text: string, max = 200): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The fields a client may show for a process. */
function summary(info: ProcessInfo): Record<string, unknown> {
  return {
    process_id: info.id,
    state: info.state,
    pid: info.pid,
    exit_code: info.exitCode,
    signal: info.signal,
    killed: info.killed,
    started_at: new Date(info.startedAt).toISOString(),
    ...(info.endedAt !== undefined ? { ended_at: new Date(info.endedAt).toISOString() } : {}),
    command: shorten(info.command, 500),
  };
}

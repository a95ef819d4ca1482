/**
 * `terminal`: runs a bash command line. With TERMINAL_ALLOWED_COMMANDS restricted,
 * every executable of the line must be on the list (see `command-check.ts`). The command runs
 * in its own process group under a time limit, inside bubblewrap when NAVI_SANDBOX allows it.
 */

import { z } from 'zod';
import type { PathGuard } from '../../machine/fs/path-guard.js';
import type { BwrapSandbox } from '../../machine/sandbox/bwrap.js';
import { runProcess, withDropNote } from '../../machine/sandbox/run-process.js';
import { setupFailure } from '../../machine/sandbox/sandbox-launch.js';
import type { NetworkHelpers } from '../../machine/sandbox/sandbox-network.js';
import { ShellLauncher, type ShellSettings } from '../../machine/sandbox/shell-launch.js';
import type { SshHostsFile } from '../../machine/ssh/hosts-file.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

export type { SandboxSettings } from '../../machine/sandbox/shell-launch.js';

export type TerminalSettings = ShellSettings;

export interface TerminalToolDeps {
  settings: TerminalSettings;
  /** Every path goes through it; the composition root passes the one guard all file tools share. */
  guard: PathGuard;
  /** Whether the profile may use the network (profile `network_access`); default: no network. */
  networkAllowed?: (profileId: string) => boolean;
  /** Replaces the search for slirp4netns, unshare, nsenter and ip (tests of a machine without them). */
  networkHelpers?: NetworkHelpers | { missing: string[] };
  /** Extra files hidden inside the sandbox (SSH keys…). */
  hiddenPaths?: readonly string[];
  bwrapPath?: string;
  /** Probe results and warnings, shared with the other sandboxed tool; a fresh one when absent. */
  sandbox?: BwrapSandbox;
  /** SSH_HOSTS_FILE, whose key files are hidden; shared with ssh_exec; a fresh reader when absent. */
  hosts?: SshHostsFile;
  bashPath?: string;
  env?: NodeJS.ProcessEnv;
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  maxOutputBytes?: number;
}

/** Formats a captured run the same way for terminal and code_exec. */
export function formatRun(run: {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutDropped: number;
  stderrDropped: number;
}): string {
  const status =
    run.exitCode !== null ? `exit code ${run.exitCode}` : `killed by ${run.signal ?? 'a signal'}`;
  const parts = [status];
  if (run.stdout || run.stdoutDropped)
    parts.push(`--- stdout ---\n${withDropNote(run.stdout, run.stdoutDropped)}`);
  if (run.stderr || run.stderrDropped)
    parts.push(`--- stderr ---\n${withDropNote(run.stderr, run.stderrDropped)}`);
  return parts.join('\n');
}

/** The parameters, with the time limits this instance allows. */
function parametersFor(defaultTimeoutMs: number, maxTimeoutMs: number) {
  return z.strictObject({
    command: z.string().describe('The command line (bash syntax).'),
    cwd: z.string().optional().describe('Working directory, inside the allowed folders.'),
    timeout_seconds: z
      .number()
      .min(1)
      .max(maxTimeoutMs / 1000)
      .optional()
      .describe(`Time limit (default ${defaultTimeoutMs / 1000} s).`),
  });
}

export function createTerminalTool(deps: TerminalToolDeps): TypedTool<ReturnType<typeof parametersFor>> {
  const _settings = deps.settings;
  const defaultTimeout = deps.defaultTimeoutMs ?? 60_000;
  const maxTimeout = deps.maxTimeoutMs ?? 600_000;
  const maxOutput = deps.maxOutputBytes ?? 100_000;
  const shell = new ShellLauncher(deps);
  const allowed = shell.allowedPrograms();

  return defineTool({
    name: 'terminal',
    group: 'runtime',
    risk: { reads: true, writes: true, executes: true, network: true, sandboxed: true },
    description:
      'Run a shell command line with bash and get its stdout, stderr and exit code. ' +
      (allowed ? `Only these programs may be used: ${allowed.join(', ')}. ` : '') +
      'The whole process group is killed at the timeout; background processes do not outlive the call.',
    parameters: parametersFor(defaultTimeout, maxTimeout),
    async execute(params, ctx) {
      const plan = await shell.plan({
        command: params.command,
        ...(params.cwd !== undefined ? { cwd: params.cwd } : {}),
        networkAllowed: deps.networkAllowed?.(ctx.profileId) ?? false,
        log: ctx.log,
      });
      if (!plan.ok) return fail(plan.reason);
      const { program, launch, cwd } = plan;
      const seconds = params.timeout_seconds ?? defaultTimeout / 1000;
      const timeoutMs = Math.min(Math.max(1000, seconds * 1000), maxTimeout);
      let run: Awaited<ReturnType<typeof runProcess>>;
      try {
        run = await runProcess({
          command: program,
          args: plan.args,
          cwd,
          env: plan.env,
          timeoutMs,
          signal: ctx.signal,
          maxOutputBytes: maxOutput,
          extraFds: launch?.extraFds ?? 0,
          ...(launch?.prepare ? { prepare: launch.prepare } : {}),
        });
      } catch (err) {
        return fail(`Could not start ${program}: ${(err as Error).message}`);
      }
      const meta = {
        exit_code: run.exitCode,
        timed_out: run.timedOut,
        sandboxed: plan.sandboxed,
        network: launch?.network ?? 'unsandboxed',
        cwd,
      };
      if (run.setupError !== undefined && !run.timedOut && !run.aborted)
        return fail(`${setupFailure(run.setupError)}\n${formatRun(run)}`, meta);
      const text = [...(launch?.notes ?? []), formatRun(run)].join('\n');
      if (run.timedOut)
        return fail(`Timed out after ${timeoutMs / 1000} s; the process group was killed.\n${text}`, meta);
      if (run.aborted) return fail(`Stopped; the process group was killed.\n${text}`, meta);
      return run.exitCode === 0 ? ok(text, meta) : fail(text, meta);
    },
  });
}

/**
 * `terminal`: runs a bash command line. With TERMINAL_ALLOWED_COMMANDS restricted,
 * every executable of the line must be on the list (see `command-check.ts`). The command runs
 * in its own process group under a time limit, inside bubblewrap when NAVI_SANDBOX allows it.
 */

import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
import type { NaviPathSettings } from '../../machine/fs/navi-paths.js';
import { naviControlFolders } from '../../machine/fs/navi-paths.js';
import { type PathGuard, PathRefusedError } from '../../machine/fs/path-guard.js';
import { BwrapSandbox, naviPrivatePaths, safeEnv } from '../../machine/sandbox/bwrap.js';
import { checkCommandLine } from '../../machine/sandbox/command-check.js';
import { homeFolders } from '../../machine/sandbox/credential-paths.js';
import { runProcess, withDropNote } from '../../machine/sandbox/run-process.js';
import { type SandboxLaunch, sandboxLaunch, setupFailure } from '../../machine/sandbox/sandbox-launch.js';
import type { NetworkHelpers } from '../../machine/sandbox/sandbox-network.js';
import { SshHostsFile } from '../../machine/ssh/hosts-file.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

/** What the sandbox needs: Navi's own files and folders stay hidden or read-only inside it. */
export type SandboxSettings = NaviPathSettings &
  Pick<Settings, 'NAVI_SANDBOX' | 'SESSION_FILES_DIR' | 'HTTP_ALLOW_PRIVATE'>;

export type TerminalSettings = SandboxSettings & Pick<Settings, 'TERMINAL_ALLOWED_COMMANDS'>;

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
  const settings = deps.settings;
  const { guard } = deps;
  const defaultTimeout = deps.defaultTimeoutMs ?? 60_000;
  const maxTimeout = deps.maxTimeoutMs ?? 600_000;
  const maxOutput = deps.maxOutputBytes ?? 100_000;
  const restricted = !settings.TERMINAL_ALLOWED_COMMANDS.includes('*');
  const sandboxes = deps.sandbox ?? new BwrapSandbox();
  const hostsFile = deps.hosts ?? new SshHostsFile(settings.SSH_HOSTS_FILE);

  return defineTool({
    name: 'terminal',
    group: 'runtime',
    risk: { reads: true, writes: true, executes: true, network: true, sandboxed: true },
    description:
      'Run a shell command line with bash and get its stdout, stderr and exit code. ' +
      (restricted
        ? `Only these programs may be used: ${settings.TERMINAL_ALLOWED_COMMANDS.join(', ')}. `
        : '') +
      'The whole process group is killed at the timeout; background processes do not outlive the call.',
    parameters: parametersFor(defaultTimeout, maxTimeout),
    async execute(params, ctx) {
      const { command } = params;
      if (command.trim() === '') return fail('Parameter "command" must be a non-empty command line.');
      const check = checkCommandLine(command, settings.TERMINAL_ALLOWED_COMMANDS);
      if (!check.ok) return fail(check.reason);

      let cwd: string;
      try {
        cwd = await guard.resolve(params.cwd ?? guard.baseDir);
      } catch (err) {
        if (err instanceof PathRefusedError) return fail(`Working directory refused. ${err.message}`);
        throw err;
      }

      const sandbox = await sandboxes.decide(settings.NAVI_SANDBOX, deps.bwrapPath, ctx.log);
      if (sandbox.use === 'refuse') return fail(sandbox.message);
      const seconds = params.timeout_seconds ?? defaultTimeout / 1000;
      const timeoutMs = Math.min(Math.max(1000, seconds * 1000), maxTimeout);
      const hostEnv = deps.env ?? process.env;
      const env = safeEnv(hostEnv);
      const bash = deps.bashPath ?? 'bash';
      let program = bash;
      let args = ['-c', command];
      let launch: SandboxLaunch | undefined;
      if (sandbox.use === 'bwrap') {
        launch = sandboxLaunch({
          bwrapPath: sandbox.path,
          mounts: {
            // The allowed roots are mounted writable below; `*` shows the rest read-only.
            visible: guard.unrestricted ? 'all' : [],
            writable: [cwd, ...guard.roots],
            readOnly: naviControlFolders(settings).map((folder) => folder.path),
            hidden: naviPrivatePaths({
              dbPath: settings.DB_PATH,
              sessionFilesDir: settings.SESSION_FILES_DIR,
              sshHostsFile: settings.SSH_HOSTS_FILE,
              // The SSH keys ssh_exec uses are Navi's secrets too.
              extra: [...(deps.hiddenPaths ?? []), ...(await hostsFile.keyPaths())],
            }),
            homes: homeFolders([hostEnv.HOME]),
            programs: [process.execPath],
            path: env.PATH,
            tmpfsTmp: true,
          },
          cwd,
          env,
          networkAllowed: deps.networkAllowed?.(ctx.profileId) ?? false,
          privatePolicy: settings.HTTP_ALLOW_PRIVATE,
          ...(deps.networkHelpers ? { helpers: deps.networkHelpers } : {}),
        });
        program = launch.program;
        args = [...launch.args, bash, '-c', command];
      }
      let run: Awaited<ReturnType<typeof runProcess>>;
      try {
        run = await runProcess({
          command: program,
          args,
          cwd,
          env,
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
        sandboxed: sandbox.use === 'bwrap',
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

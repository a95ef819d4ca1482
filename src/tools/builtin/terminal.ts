/**
 * `terminal` (DESIGN §9): runs a bash command line. With TERMINAL_ALLOWED_COMMANDS restricted,
 * every executable of the line must be on the list (see `command-check.ts`). The command runs
 * in its own process group under a time limit, inside bubblewrap when NAVI_SANDBOX allows it.
 */
import type { Settings } from '../../config/settings.js';
import { PathGuard, PathRefusedError } from '../fs/path-guard.js';
import { bwrapArgs, decideSandbox, naviPrivatePaths, safeEnv } from '../sandbox/bwrap.js';
import { checkCommandLine } from '../sandbox/command-check.js';
import { runProcess, withDropNote } from '../sandbox/run-process.js';
import { sshKeyPaths } from '../ssh/hosts-file.js';
import { fail, ok, type ToolDefinition, type ToolResult } from '../types.js';

export type TerminalSettings = Pick<
  Settings,
  | 'TERMINAL_ALLOWED_COMMANDS'
  | 'FS_ALLOWED_PATHS'
  | 'NAVI_SANDBOX'
  | 'DB_PATH'
  | 'SESSION_FILES_DIR'
  | 'SSH_HOSTS_FILE'
>;

export interface TerminalToolDeps {
  settings: TerminalSettings;
  guard?: PathGuard;
  /** Whether the profile may use the network (profile `network_access`); default: allowed. */
  networkAllowed?: (profileId: string) => boolean;
  /** Extra files hidden inside the sandbox (SSH keys…). */
  hiddenPaths?: readonly string[];
  bwrapPath?: string;
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

export function createTerminalTool(deps: TerminalToolDeps): ToolDefinition {
  const settings = deps.settings;
  const guard = deps.guard ?? new PathGuard({ roots: settings.FS_ALLOWED_PATHS });
  const defaultTimeout = deps.defaultTimeoutMs ?? 60_000;
  const maxTimeout = deps.maxTimeoutMs ?? 600_000;
  const maxOutput = deps.maxOutputBytes ?? 100_000;
  const restricted = !settings.TERMINAL_ALLOWED_COMMANDS.includes('*');

  return {
    name: 'terminal',
    group: 'runtime',
    description:
      'Run a shell command line with bash and get its stdout, stderr and exit code. ' +
      (restricted
        ? `Only these programs may be used: ${settings.TERMINAL_ALLOWED_COMMANDS.join(', ')}. `
        : '') +
      'The whole process group is killed at the timeout; background processes do not outlive the call.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command line (bash syntax).' },
        cwd: { type: 'string', description: 'Working directory, inside the allowed folders.' },
        timeout_seconds: {
          type: 'number',
          minimum: 1,
          maximum: maxTimeout / 1000,
          description: `Time limit (default ${defaultTimeout / 1000} s).`,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    async execute(params, ctx): Promise<ToolResult> {
      const command = typeof params.command === 'string' ? params.command : '';
      if (command.trim() === '') return fail('Parameter "command" must be a non-empty command line.');
      const check = checkCommandLine(command, settings.TERMINAL_ALLOWED_COMMANDS);
      if (!check.ok) return fail(check.reason);

      let cwd: string;
      try {
        cwd = await guard.resolve(typeof params.cwd === 'string' ? params.cwd : guard.baseDir);
      } catch (err) {
        if (err instanceof PathRefusedError) return fail(`Working directory refused. ${err.message}`);
        throw err;
      }

      const sandbox = await decideSandbox(settings.NAVI_SANDBOX, deps.bwrapPath, ctx.log);
      if (sandbox.use === 'refuse') return fail(sandbox.message);
      const seconds =
        typeof params.timeout_seconds === 'number' ? params.timeout_seconds : defaultTimeout / 1000;
      const timeoutMs = Math.min(Math.max(1000, seconds * 1000), maxTimeout);
      const env = safeEnv(deps.env ?? process.env);
      const bash = deps.bashPath ?? 'bash';
      let program = bash;
      let args = ['-c', command];
      if (sandbox.use === 'bwrap') {
        program = sandbox.path;
        args = [
          ...bwrapArgs({
            writable: [cwd, ...guard.roots],
            hidden: naviPrivatePaths({
              dbPath: settings.DB_PATH,
              sessionFilesDir: settings.SESSION_FILES_DIR,
              sshHostsFile: settings.SSH_HOSTS_FILE,
              // The SSH keys ssh_exec uses are Navi's secrets too.
              extra: [...(deps.hiddenPaths ?? []), ...(await sshKeyPaths(settings.SSH_HOSTS_FILE))],
            }),
            network: deps.networkAllowed?.(ctx.profileId) ?? true,
            cwd,
            tmpfsTmp: true,
            env,
          }),
          bash,
          '-c',
          command,
        ];
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
        });
      } catch (err) {
        return fail(`Could not start ${program}: ${(err as Error).message}`);
      }
      const meta = {
        exit_code: run.exitCode,
        timed_out: run.timedOut,
        sandboxed: sandbox.use === 'bwrap',
        cwd,
      };
      const text = formatRun(run);
      if (run.timedOut)
        return fail(`Timed out after ${timeoutMs / 1000} s; the process group was killed.\n${text}`, meta);
      if (run.aborted) return fail(`Stopped; the process group was killed.\n${text}`, meta);
      return run.exitCode === 0 ? ok(text, meta) : fail(text, meta);
    },
  };
}

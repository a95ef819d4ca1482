/**
 * `code_exec`: runs Python 3 in a fresh temporary folder under a time limit, a
 * memory cap (`ulimit -v`), a file-size cap and an output cap (the run is killed when its
 * output overflows), inside bubblewrap when NAVI_SANDBOX allows: nothing writable but its
 * folder, no network unless the profile allows it. Returns the output, the exit code and the
 * absolute paths of the files the program wrote (kept for a while for `share_file`).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { z } from 'zod';
import { walk } from '../../machine/fs/fs-ops.js';
import { naviControlFolders } from '../../machine/fs/navi-paths.js';
import { PathGuard } from '../../machine/fs/path-guard.js';
import { BwrapSandbox, naviPrivatePaths, safeEnv } from '../../machine/sandbox/bwrap.js';
import { homeFolders } from '../../machine/sandbox/credential-paths.js';
import { runProcess } from '../../machine/sandbox/run-process.js';
import { type SandboxLaunch, sandboxLaunch, setupFailure } from '../../machine/sandbox/sandbox-launch.js';
import type { NetworkHelpers } from '../../machine/sandbox/sandbox-network.js';
import { ScratchDirs } from '../../machine/sandbox/scratch-dirs.js';
import { SshHostsFile } from '../../machine/ssh/hosts-file.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';
import { formatRun, type SandboxSettings } from './terminal.js';

export type CodeExecSettings = SandboxSettings;

export interface CodeExecToolDeps {
  settings: CodeExecSettings;
  scratch?: ScratchDirs;
  /** Whether the profile may use the network (profile `network_access`); default: no network. */
  networkAllowed?: (profileId: string) => boolean;
  /** Replaces the search for slirp4netns, unshare, nsenter and ip (tests of a machine without them). */
  networkHelpers?: NetworkHelpers | { missing: string[] };
  hiddenPaths?: readonly string[];
  python?: string;
  bwrapPath?: string;
  /** Probe results and warnings, shared with the other sandboxed tool; a fresh one when absent. */
  sandbox?: BwrapSandbox;
  /** SSH_HOSTS_FILE, whose key files are hidden; shared with ssh_exec; a fresh reader when absent. */
  hosts?: SshHostsFile;
  bashPath?: string;
  env?: NodeJS.ProcessEnv;
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  memoryMb?: number;
  maxOutputBytes?: number;
  maxFileMb?: number;
}

/** The real interpreter behind `python` (shims resolved), or why there is none. */
export function findPython(python: string, env: NodeJS.ProcessEnv): Promise<string | { error: string }> {
  return new Promise((done) => {
    execFile(python, ['-c', 'import sys; print(sys.executable)'], { env, timeout: 15_000 }, (err, stdout) => {
      if (!err && stdout.trim() !== '') return done(stdout.trim());
      const missing = (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
      done({
        error: missing
          ? `Python 3 is not installed ("${python}" was not found on PATH); code_exec cannot run. Install python3 or use another tool.`
          : `Python 3 ("${python}") does not start: ${err?.message ?? 'no interpreter path printed'}`,
      });
    });
  });
}

/** The parameters, with the time limit this instance allows. */
function parametersFor(maxTimeoutMs: number) {
  return z.strictObject({
    code: z.string().describe('Python 3 source to run.'),
    timeout_seconds: z
      .number()
      .min(1)
      .max(maxTimeoutMs / 1000)
      .optional()
      .describe('Time limit.'),
  });
}

export function createCodeExecTool(deps: CodeExecToolDeps): TypedTool<ReturnType<typeof parametersFor>> {
  const scratch = deps.scratch ?? new ScratchDirs();
  const defaultTimeout = deps.defaultTimeoutMs ?? 30_000;
  const maxTimeout = deps.maxTimeoutMs ?? 300_000;
  const memoryMb = deps.memoryMb ?? 512;
  const maxOutput = deps.maxOutputBytes ?? 100_000;
  const maxFileMb = deps.maxFileMb ?? 100;
  const sandboxes = deps.sandbox ?? new BwrapSandbox();
  const hostsFile = deps.hosts ?? new SshHostsFile(deps.settings.SSH_HOSTS_FILE);
  // Looked up once per tool: the interpreter does not change while Navi runs.
  let interpreter: Promise<string | { error: string }> | undefined;
  // The allowed roots are visible (read-only) so programs can read the person's data.
  const roots = new PathGuard({ roots: deps.settings.FS_ALLOWED_PATHS });

  return defineTool({
    name: 'code_exec',
    group: 'runtime',
    risk: { reads: true, writes: true, executes: true, network: true, sandboxed: true },
    description:
      'Run a Python 3 program in a fresh temporary folder and get stdout, stderr, the exit code and the ' +
      `files it wrote there (absolute paths, usable with share_file). Limits: ${memoryMb} MB memory, ` +
      `${maxOutput} bytes of output, default ${defaultTimeout / 1000} s.`,
    parameters: parametersFor(maxTimeout),
    async execute(params, ctx) {
      const { code } = params;
      if (code.trim() === '') return fail('Parameter "code" must contain a Python program.');
      const hostEnv = deps.env ?? process.env;
      interpreter ??= findPython(deps.python ?? 'python3', safeEnv(hostEnv));
      const python = await interpreter;
      if (typeof python !== 'string') return fail(python.error);
      const sandbox = await sandboxes.decide(deps.settings.NAVI_SANDBOX, deps.bwrapPath, ctx.log);
      if (sandbox.use === 'refuse') return fail(sandbox.message);

      const dir = scratch.create('navi-code-');
      const script = `${dir}/main.py`;
      writeFileSync(script, code);
      const seconds = params.timeout_seconds ?? defaultTimeout / 1000;
      const timeoutMs = Math.min(Math.max(1000, seconds * 1000), maxTimeout);
      const env = safeEnv(hostEnv, {
        HOME: dir,
        TMPDIR: dir,
        PYTHONUNBUFFERED: '1',
        PYTHONIOENCODING: 'utf-8',
      });
      const bash = deps.bashPath ?? 'bash';
      // ulimit -v caps the address space, -f the size of any file written (1 KiB blocks).
      const inner = [
        bash,
        '-c',
        'ulimit -v "$1" && ulimit -f "$2" || exit 97; exec "$0" -I -B main.py',
        python,
        String(memoryMb * 1024),
        String(maxFileMb * 1024),
      ];
      let command = inner[0] as string;
      let args = inner.slice(1);
      let launch: SandboxLaunch | undefined;
      if (sandbox.use === 'bwrap') {
        launch = sandboxLaunch({
          bwrapPath: sandbox.path,
          mounts: {
            visible: roots.unrestricted ? 'all' : roots.roots,
            writable: [dir],
            readOnly: naviControlFolders(deps.settings).map((folder) => folder.path),
            // The SSH keys ssh_exec uses are Navi's secrets too.
            hidden: naviPrivatePaths(deps.settings, [
              ...(deps.hiddenPaths ?? []),
              ...(await hostsFile.keyPaths()),
            ]),
            homes: homeFolders([hostEnv.HOME]),
            programs: [python, process.execPath],
            path: env.PATH,
            tmpfsTmp: false,
          },
          cwd: dir,
          env,
          networkAllowed: deps.networkAllowed?.(ctx.profileId) ?? false,
          privatePolicy: deps.settings.HTTP_ALLOW_PRIVATE,
          ...(deps.networkHelpers ? { helpers: deps.networkHelpers } : {}),
        });
        command = launch.program;
        args = [...launch.args, ...inner];
      }
      let run: Awaited<ReturnType<typeof runProcess>>;
      try {
        run = await runProcess({
          command,
          args,
          cwd: dir,
          env,
          timeoutMs,
          signal: ctx.signal,
          maxOutputBytes: maxOutput,
          killOnOverflow: true,
          extraFds: launch?.extraFds ?? 0,
          ...(launch?.prepare ? { prepare: launch.prepare } : {}),
        });
      } catch (err) {
        return fail(`Could not start Python: ${(err as Error).message}`);
      }
      const files = await writtenFiles(dir);
      const meta = {
        exit_code: run.exitCode,
        timed_out: run.timedOut,
        sandboxed: sandbox.use === 'bwrap',
        network: launch?.network ?? 'unsandboxed',
        work_dir: dir,
        files,
      };
      if (run.setupError !== undefined && !run.timedOut && !run.aborted)
        return fail(`${setupFailure(run.setupError)}\n${formatRun(run)}`, meta);
      let text = [...(launch?.notes ?? []), formatRun(run)].join('\n');
      if (files.length > 0) {
        text += `\nFiles written (kept for a while; use share_file to give one to the user):\n${files
          .map((f) => `- ${f.path} (${f.size} bytes)`)
          .join('\n')}`;
      }
      if (run.exitCode === 97) return fail(`Could not apply the memory limit.\n${text}`, meta);
      if (run.timedOut)
        return fail(`Timed out after ${timeoutMs / 1000} s; the program was killed.\n${text}`, meta);
      if (run.outputLimitHit)
        return fail(`Output exceeded ${maxOutput} bytes; the program was killed.\n${text}`, meta);
      if (run.aborted) return fail(`Stopped; the program was killed.\n${text}`, meta);
      if (/MemoryError/.test(run.stderr)) {
        return fail(`The program ran out of memory (limit ${memoryMb} MB).\n${text}`, meta);
      }
      return run.exitCode === 0 ? ok(text, meta) : fail(text, meta);
    },
  });
}

async function writtenFiles(dir: string): Promise<Array<{ path: string; size: number }>> {
  const { entries } = await walk(dir, { recursive: true, maxEntries: 200, maxDepth: 8 });
  const files: Array<{ path: string; size: number }> = [];
  for (const e of entries) {
    if (!e.dirent.isFile() || e.relative === 'main.py') continue;
    files.push({ path: e.path, size: (await lstat(e.path)).size });
  }
  return files;
}

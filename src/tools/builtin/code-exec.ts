/**
 * `code_exec` (DESIGN §9): runs Python 3 in a fresh temporary folder under a time limit, a
 * memory cap (`ulimit -v`), a file-size cap and an output cap (the run is killed when its
 * output overflows), inside bubblewrap when NAVI_SANDBOX allows: nothing writable but its
 * folder, no network unless the profile allows it. Returns the output, the exit code and the
 * absolute paths of the files the program wrote (kept for a while for `share_file`).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import type { Settings } from '../../config/settings.js';
import { walk } from '../fs/fs-ops.js';
import { bwrapArgs, decideSandbox, naviPrivatePaths, safeEnv } from '../sandbox/bwrap.js';
import { runProcess } from '../sandbox/run-process.js';
import { ScratchDirs } from '../sandbox/scratch-dirs.js';
import { sshKeyPaths } from '../ssh/hosts-file.js';
import { fail, ok, type ToolDefinition, type ToolResult } from '../types.js';
import { formatRun } from './terminal.js';

export type CodeExecSettings = Pick<
  Settings,
  'NAVI_SANDBOX' | 'DB_PATH' | 'SESSION_FILES_DIR' | 'SSH_HOSTS_FILE'
>;

export interface CodeExecToolDeps {
  settings: CodeExecSettings;
  scratch?: ScratchDirs;
  networkAllowed?: (profileId: string) => boolean;
  hiddenPaths?: readonly string[];
  python?: string;
  bwrapPath?: string;
  bashPath?: string;
  env?: NodeJS.ProcessEnv;
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  memoryMb?: number;
  maxOutputBytes?: number;
  maxFileMb?: number;
}

const pythonCache = new Map<string, Promise<string | { error: string }>>();

/** The real interpreter behind `python` (shims resolved), or why there is none. */
export function findPython(python: string, env: NodeJS.ProcessEnv): Promise<string | { error: string }> {
  let found = pythonCache.get(python);
  if (!found) {
    found = new Promise((done) => {
      execFile(
        python,
        ['-c', 'import sys; print(sys.executable)'],
        { env, timeout: 15_000 },
        (err, stdout) => {
          if (!err && stdout.trim() !== '') return done(stdout.trim());
          const missing = (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
          done({
            error: missing
              ? `Python 3 is not installed ("${python}" was not found on PATH); code_exec cannot run. Install python3 or use another tool.`
              : `Python 3 ("${python}") does not start: ${err?.message ?? 'no interpreter path printed'}`,
          });
        },
      );
    });
    pythonCache.set(python, found);
  }
  return found;
}

export function createCodeExecTool(deps: CodeExecToolDeps): ToolDefinition {
  const scratch = deps.scratch ?? new ScratchDirs();
  const defaultTimeout = deps.defaultTimeoutMs ?? 30_000;
  const maxTimeout = deps.maxTimeoutMs ?? 300_000;
  const memoryMb = deps.memoryMb ?? 512;
  const maxOutput = deps.maxOutputBytes ?? 100_000;
  const maxFileMb = deps.maxFileMb ?? 100;

  return {
    name: 'code_exec',
    group: 'runtime',
    description:
      'Run a Python 3 program in a fresh temporary folder and get stdout, stderr, the exit code and the ' +
      `files it wrote there (absolute paths, usable with share_file). Limits: ${memoryMb} MB memory, ` +
      `${maxOutput} bytes of output, default ${defaultTimeout / 1000} s.`,
    parameters: {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'Python 3 source to run.' },
        timeout_seconds: {
          type: 'number',
          minimum: 1,
          maximum: maxTimeout / 1000,
          description: 'Time limit.',
        },
      },
      required: ['code'],
      additionalProperties: false,
    },
    async execute(params, ctx): Promise<ToolResult> {
      const code = typeof params.code === 'string' ? params.code : '';
      if (code.trim() === '') return fail('Parameter "code" must contain a Python program.');
      const hostEnv = deps.env ?? process.env;
      const python = await findPython(deps.python ?? 'python3', hostEnv);
      if (typeof python !== 'string') return fail(python.error);
      const sandbox = await decideSandbox(deps.settings.NAVI_SANDBOX, deps.bwrapPath, ctx.log);
      if (sandbox.use === 'refuse') return fail(sandbox.message);

      const dir = scratch.create('navi-code-');
      const script = `${dir}/main.py`;
      writeFileSync(script, code);
      const seconds =
        typeof params.timeout_seconds === 'number' ? params.timeout_seconds : defaultTimeout / 1000;
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
      if (sandbox.use === 'bwrap') {
        command = sandbox.path;
        args = [
          ...bwrapArgs({
            writable: [dir],
            hidden: naviPrivatePaths({
              dbPath: deps.settings.DB_PATH,
              sessionFilesDir: deps.settings.SESSION_FILES_DIR,
              sshHostsFile: deps.settings.SSH_HOSTS_FILE,
              // The SSH keys ssh_exec uses are Navi's secrets too.
              extra: [...(deps.hiddenPaths ?? []), ...(await sshKeyPaths(deps.settings.SSH_HOSTS_FILE))],
            }),
            network: deps.networkAllowed?.(ctx.profileId) ?? true,
            cwd: dir,
            tmpfsTmp: false,
            env,
          }),
          ...inner,
        ];
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
        });
      } catch (err) {
        return fail(`Could not start Python: ${(err as Error).message}`);
      }
      const files = await writtenFiles(dir);
      const meta = {
        exit_code: run.exitCode,
        timed_out: run.timedOut,
        sandboxed: sandbox.use === 'bwrap',
        work_dir: dir,
        files,
      };
      let text = formatRun(run);
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
  };
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

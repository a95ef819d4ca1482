/**
 * `ssh_exec` (docs/machine-tools.md#ssh-hosts-file): runs commands on, and copies files to and from, the hosts named in
 * SSH_HOSTS_FILE. The model chooses a host by name only; addresses, users and secrets stay in
 * the file and the environment, and no secret is ever put into a result. Connections are kept
 * per session (SshPool) and closed when idle. Local paths go through the FS_ALLOWED_PATHS guard.
 */
import { constants } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Client, SFTPWrapper } from 'ssh2';
import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
import { type PathGuard, PathRefusedError } from '../../machine/fs/path-guard.js';
import { CappedOutput } from '../../machine/sandbox/capped-output.js';
import { type SshHostConfig, SshHostsError, SshHostsFile } from '../../machine/ssh/hosts-file.js';
import { SshConnectError, type SshLease, SshPool } from '../../machine/ssh/ssh-pool.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok, type ToolContext, type ToolResult } from '../types.js';

export interface SshExecToolDeps {
  settings: Pick<Settings, 'SSH_HOSTS_FILE' | 'FS_ALLOWED_PATHS'>;
  pool?: SshPool;
  /** The hosts file, shared with terminal and code_exec; one of SSH_HOSTS_FILE when absent. */
  hosts?: SshHostsFile;
  /** Every path goes through it; the composition root passes the one guard all file tools share. */
  guard: PathGuard;
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  /** Cap of stdout and of stderr, each. */
  maxOutputBytes?: number;
  maxTransferBytes?: number;
}

const ACTIONS = ['exec', 'upload', 'download', 'hosts'] as const;

/** The parameters, with the time limit this instance allows. */
function parametersFor(maxTimeoutMs: number) {
  return z.strictObject({
    action: z.enum(ACTIONS).optional().describe('What to do (default "exec").'),
    host: z.string().optional().describe('Name of a host from the SSH hosts file.'),
    command: z.string().optional().describe('Shell command to run remotely (exec).'),
    timeout_seconds: z
      .number()
      .min(1)
      .max(maxTimeoutMs / 1000)
      .optional()
      .describe('Time limit (exec).'),
    local_path: z
      .string()
      .optional()
      .describe('Local file, inside the allowed folders (upload source, download target).'),
    remote_path: z.string().optional().describe('Remote file (upload target, download source).'),
  });
}

type Params = z.output<ReturnType<typeof parametersFor>>;

interface ExecOutcome {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal?: string;
  timedOut: boolean;
}

function runRemote(
  client: Client,
  command: string,
  timeoutMs: number,
  maxBytes: number,
  signal: AbortSignal,
): Promise<ExecOutcome> {
  return new Promise((done, reject) => {
    client.exec(command, (err, stream) => {
      if (err) {
        reject(err);
        return;
      }
      const out = new CappedOutput(maxBytes);
      const errOut = new CappedOutput(maxBytes);
      let exitCode: number | null = null;
      let exitSignal: string | undefined;
      let timedOut = false;
      const stop = () => {
        // OpenSSH ignores most channel signals; closing the channel is what ends the remote command.
        stream.signal('KILL');
        stream.close();
      };
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, timeoutMs);
      const onAbort = () => stop();
      signal.addEventListener('abort', onAbort, { once: true });
      stream.on('data', (chunk: Buffer) => out.push(chunk));
      stream.stderr.on('data', (chunk: Buffer) => errOut.push(chunk));
      stream.on('exit', (code: number | null, sig?: string) => {
        exitCode = typeof code === 'number' ? code : null;
        if (sig) exitSignal = sig;
      });
      stream.on('close', () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        done({
          stdout: out.textWithNote(),
          stderr: errOut.textWithNote(),
          exitCode,
          ...(exitSignal ? { signal: exitSignal } : {}),
          timedOut,
        });
      });
    });
  });
}

function openSftp(client: Client): Promise<SFTPWrapper> {
  return new Promise((done, reject) => client.sftp((err, sftp) => (err ? reject(err) : done(sftp))));
}

export function createSshExecTool(deps: SshExecToolDeps): TypedTool<ReturnType<typeof parametersFor>> {
  const pool = deps.pool ?? new SshPool();
  const hostsFile = deps.hosts ?? new SshHostsFile(deps.settings.SSH_HOSTS_FILE);
  const { guard } = deps;
  const defaultTimeout = deps.defaultTimeoutMs ?? 60_000;
  const maxTimeout = deps.maxTimeoutMs ?? 600_000;
  const maxOutput = deps.maxOutputBytes ?? 50_000;
  const maxTransfer = deps.maxTransferBytes ?? 200 * 1024 * 1024;

  async function hostNamed(name: string): Promise<SshHostConfig> {
    const hosts = await hostsFile.load();
    const host = hosts.get(name);
    if (!host) {
      const names = [...hosts.keys()];
      throw new SshHostsError(
        `Unknown SSH host "${name}". ${names.length > 0 ? `Configured hosts: ${names.join(', ')}.` : 'No host is configured.'}`,
      );
    }
    return host;
  }

  async function exec(
    lease: SshLease,
    host: SshHostConfig,
    params: Params,
    ctx: ToolContext,
  ): Promise<ToolResult> {
    const command = params.command ?? '';
    if (command.trim() === '') return fail('Action "exec" needs "command".');
    const seconds = params.timeout_seconds ?? defaultTimeout / 1000;
    const timeoutMs = Math.min(Math.max(1000, seconds * 1000), maxTimeout);
    const result = await runRemote(lease.client, command, timeoutMs, maxOutput, ctx.signal);
    if (result.timedOut || ctx.signal.aborted) lease.discard();
    const metadata = {
      host: host.name,
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      ...(result.signal ? { signal: result.signal } : {}),
    };
    const text =
      `exit code: ${result.exitCode ?? 'none'}${result.signal ? ` (signal ${result.signal})` : ''}\n` +
      `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
    if (result.timedOut) {
      return fail(
        `Timed out after ${timeoutMs / 1000} s on "${host.name}"; the channel and the connection were closed. ` +
          `Output so far:\n${text}`,
        metadata,
      );
    }
    return ok(text, metadata);
  }

  async function upload(
    lease: SshLease,
    host: SshHostConfig,
    local: string,
    remote: string,
  ): Promise<ToolResult> {
    const path = await guard.resolve(local);
    const handle = await guard.open(path, constants.O_RDONLY);
    try {
      const info = await handle.stat();
      if (!info.isFile()) return fail(`${path} is not a regular file.`);
      if (info.size > maxTransfer)
        return fail(`${path} is ${info.size} bytes, over the ${maxTransfer}-byte transfer limit.`);
      const sftp = await openSftp(lease.client);
      try {
        await pipeline(handle.createReadStream(), sftp.createWriteStream(remote));
      } finally {
        sftp.end();
      }
      return ok(`Uploaded ${path} (${info.size} bytes) to ${host.name}:${remote}.`, {
        host: host.name,
        bytes: info.size,
      });
    } finally {
      // The stream closes the handle when it ends (a stream that does not never finishes a pipeline).
      await handle.close().catch(() => {});
    }
  }

  async function download(
    lease: SshLease,
    host: SshHostConfig,
    remote: string,
    local: string,
  ): Promise<ToolResult> {
    const path = await guard.resolve(local);
    const sftp = await openSftp(lease.client);
    try {
      const stats = await new Promise<{ size: number; isFile(): boolean }>((done, reject) =>
        sftp.stat(remote, (err, s) => (err ? reject(err) : done(s))),
      );
      if (!stats.isFile()) return fail(`${host.name}:${remote} is not a regular file.`);
      if (stats.size > maxTransfer)
        return fail(
          `${host.name}:${remote} is ${stats.size} bytes, over the ${maxTransfer}-byte transfer limit.`,
        );
      const handle = await guard.open(path, constants.O_WRONLY | constants.O_CREAT);
      try {
        await handle.truncate(0);
        await pipeline(sftp.createReadStream(remote), handle.createWriteStream());
      } finally {
        await handle.close().catch(() => {});
      }
      return ok(`Downloaded ${host.name}:${remote} (${stats.size} bytes) to ${path}.`, {
        host: host.name,
        bytes: stats.size,
      });
    } finally {
      sftp.end();
    }
  }

  return defineTool({
    name: 'ssh_exec',
    group: 'runtime',
    risk: { reads: true, writes: true, executes: true, network: true },
    description:
      'Work on a configured remote machine over SSH: run a command (exit code, stdout, stderr), upload a ' +
      'local file or download a remote one (SFTP). Hosts are chosen by name; action "hosts" lists them.',
    parameters: parametersFor(maxTimeout),
    async execute(params, ctx) {
      const action = params.action ?? 'exec';
      try {
        if (action === 'hosts') {
          const hosts = await hostsFile.load();
          if (hosts.size === 0) return ok('No SSH host is configured.');
          const lines = [...hosts.values()].map(
            (h) => `- ${h.name}: ${h.user}@${h.host}:${h.port}${h.description ? ` — ${h.description}` : ''}`,
          );
          return ok(`Configured SSH hosts:\n${lines.join('\n')}`);
        }
        const name = params.host?.trim() ?? '';
        if (name === '') return fail('Parameter "host" is required (action "hosts" lists the names).');
        const local = params.local_path ?? '';
        const remote = params.remote_path ?? '';
        if ((action === 'upload' || action === 'download') && (local === '' || remote === ''))
          return fail(`Action "${action}" needs both "local_path" and "remote_path".`);
        const host = await hostNamed(name);
        const lease = await pool.acquire(ctx.sessionId, host, ctx.signal);
        try {
          if (action === 'exec') return await exec(lease, host, params, ctx);
          if (action === 'upload') return await upload(lease, host, local, remote);
          return await download(lease, host, remote, local);
        } catch (err) {
          // A channel that failed half-way may have left the connection unusable.
          lease.discard();
          throw err;
        } finally {
          lease.release();
        }
      } catch (err) {
        if (err instanceof SshHostsError || err instanceof SshConnectError || err instanceof PathRefusedError)
          return fail(err.message);
        const e = err as Error & { code?: number | string };
        if (e.code === 2 || e.code === 'ENOENT') return fail(`No such file: ${e.message}.`);
        return fail(`ssh_exec ${action} failed: ${e.message}`);
      }
    },
  });
}

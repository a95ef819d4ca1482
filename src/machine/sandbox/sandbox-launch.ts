/**
 * Turns "run this in the sandbox, with or without network" into the bwrap arguments and the
 * set-up step `runProcess` performs between spawning bwrap and releasing the program. Shared by
 * `terminal` and `code_exec` so both fence the network and the file system the same way.
 */
import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { PrivatePolicy } from '../../config/private-policy.js';
import { BLOCK_FD, bwrapArgs, INFO_FD } from './bwrap.js';
import type { RunProcessOptions } from './run-process.js';
import type { MountSpec } from './sandbox-mounts.js';
import {
  attachUserModeNetwork,
  findNetworkHelpers,
  hostDnsUsable,
  type NetworkHelpers,
  resolvConfTarget,
  sandboxResolvConf,
} from './sandbox-network.js';

const RESOLV_FD = 5;
const INFO_TIMEOUT_MS = 10_000;

export interface SandboxRequest {
  /** The working bwrap (see decideSandbox). */
  bwrapPath: string;
  mounts: MountSpec;
  cwd: string;
  env: Record<string, string>;
  /** The profile's `network_access`. */
  networkAllowed: boolean;
  /** HTTP_ALLOW_PRIVATE: private ranges reachable from the sandbox's network (IPv4 ranges only; names cannot be routed). */
  privatePolicy: PrivatePolicy;
  /** Overrides the search for slirp4netns, unshare, nsenter and ip (tests). */
  helpers?: NetworkHelpers | { missing: string[] };
}

export interface SandboxLaunch {
  /** The program to spawn (bwrap, or `unshare` starting bwrap). */
  program: string;
  /** Its arguments up to and including bwrap's `--`; append the command after them. */
  args: string[];
  extraFds: number;
  prepare?: RunProcessOptions['prepare'];
  /** `outbound`: user-mode network without the host's loopback; `none`: no network at all. */
  network: 'none' | 'outbound';
  /** Sentences for the tool result (why there is no network or no DNS). */
  notes: string[];
}

/** Plans one sandboxed run; nothing is started here. */
export function sandboxLaunch(request: SandboxRequest): SandboxLaunch {
  const base = { cwd: request.cwd, env: request.env };
  if (!request.networkAllowed) {
    return {
      program: request.bwrapPath,
      args: bwrapArgs({ ...base, mounts: request.mounts, network: 'none' }),
      extraFds: 0,
      network: 'none',
      notes: [],
    };
  }
  const helpers = request.helpers ?? findNetworkHelpers();
  if ('missing' in helpers) {
    return {
      program: request.bwrapPath,
      args: bwrapArgs({ ...base, mounts: request.mounts, network: 'none' }),
      extraFds: 0,
      network: 'none',
      notes: [
        `Note: this profile may use the network, but ${helpers.missing.join(' and ')} ${helpers.missing.length > 1 ? 'are' : 'is'} not installed, so the command ran WITHOUT network. ` +
          "The sandbox never shares Navi's own network; install the missing program to give sandboxed commands outbound access.",
      ],
    };
  }
  const dns = hostDnsUsable();
  const target = resolvConfTarget();
  const mounts: MountSpec = {
    ...request.mounts,
    ...(target ? { files: [...(request.mounts.files ?? []), { fd: RESOLV_FD, dest: target }] } : {}),
  };
  const notes = dns
    ? []
    : [
        "Note: no DNS in the sandbox: the host's name server is on its loopback, which sandboxed commands may not reach. Use IP addresses.",
      ];
  const prepare = async (child: ChildProcess, signal: AbortSignal) => {
    const resolv = target
      ? flushEnd(pipe(child, RESOLV_FD) as Writable | undefined, sandboxResolvConf(dns))
      : undefined;
    // bwrap's first words mean `unshare` has made the namespaces and become bwrap (same pid).
    await bwrapStarted(pipe(child, INFO_FD) as Readable | undefined, signal);
    const pid = child.pid;
    if (pid === undefined) throw new Error('bwrap did not start');
    const network = await attachUserModeNetwork({
      pid,
      helpers,
      privatePolicy: request.privatePolicy,
      dns,
      signal,
    });
    try {
      await resolv;
      // The byte on the block fd releases the program; only now is its network fenced in.
      await flushEnd(pipe(child, BLOCK_FD) as Writable | undefined, '1');
    } catch (err) {
      network.close();
      throw err;
    }
    return () => network.close();
  };
  return {
    program: helpers.unshare,
    args: [
      '--user',
      '--map-root-user',
      '--net',
      '--',
      request.bwrapPath,
      ...bwrapArgs({ ...base, mounts, network: 'held' }),
    ],
    extraFds: RESOLV_FD - 2,
    prepare,
    network: 'outbound',
    notes,
  };
}

/** Resolves once bwrap's `--info-fd` JSON names the sandbox's pid. */
function bwrapStarted(info: Readable | undefined, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    if (!info) return reject(new Error('bwrap gave no information channel'));
    let text = '';
    const finish = (result: number | Error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      info.off('data', onData);
      info.off('end', onEnd);
      info.off('close', onEnd);
      if (typeof result === 'number') resolve(result);
      else reject(result);
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (m?.[1]) finish(Number(m[1]));
    };
    const onEnd = () =>
      finish(new Error(`bwrap stopped before starting the sandbox${text ? `: ${text.trim()}` : ''}`));
    const onAbort = () => finish(new Error('stopped before the sandbox was ready'));
    const timer = setTimeout(
      () => finish(new Error(`bwrap did not start the sandbox within ${INFO_TIMEOUT_MS / 1000} s`)),
      INFO_TIMEOUT_MS,
    );
    info.on('data', onData);
    info.once('end', onEnd);
    info.once('close', onEnd);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Writes `data`, ends the stream and resolves once the bytes are handed to the kernel. */
function flushEnd(stream: Writable | undefined, data: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!stream) return reject(new Error('bwrap gave no control channel'));
    stream.once('error', reject);
    stream.end(data, () => resolve());
  });
}

/** The tool result when the sandbox's network could not be fenced in: the program never started. */
export function setupFailure(reason: string): string {
  return (
    `The command was not run: the sandbox's network could not be set up safely (${reason}). ` +
    'Try again; if it keeps failing, run it without network (profile network_access: false).'
  );
}

/** Navi's end of the pipe the program has as fd `n`. */
function pipe(child: ChildProcess, n: number): Readable | Writable | undefined {
  const streams: readonly (Readable | Writable | null | undefined)[] = child.stdio;
  return streams[n] ?? undefined;
}

/**
 * Outbound network for a sandbox that is allowed one. The sandbox always gets its own network
 * namespace; slirp4netns then gives it a user-mode network (10.0.2.0/24, gateway 10.0.2.2,
 * DNS 10.0.2.3) whose gateway refuses to lead to the host's loopback
 * (`--disable-host-loopback`). Before the program starts, rules and routes inside the namespace
 * make slirp's own virtual hosts (but DNS), private ranges (but those HTTP_ALLOW_PRIVATE opens)
 * and the host's own addresses (always) unreachable, so no packet for them ever leaves.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { allowedIPv4Ranges, type PrivatePolicy } from '../../config/private-policy.js';

export interface NetworkHelpers {
  slirp4netns: string;
  unshare: string;
  nsenter: string;
  ip: string;
}

/** IPv4 ranges that are not the public Internet. */
export const PRIVATE_IPV4_RANGES: readonly string[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
];

/** The address slirp4netns gives its DNS forwarder inside the sandbox. */
export const SANDBOX_DNS = '10.0.2.3';
/** slirp4netns's virtual network; its gateway 10.0.2.2 stands for the host itself. */
const SLIRP_NETWORK = '10.0.2.0/24';
const SLIRP_GATEWAY = '10.0.2.2';
/** The sandbox's end of slirp4netns. */
const TAP = 'tap0';

const STEP_TIMEOUT_MS = 10_000;
// Folders where iproute2 and util-linux live even when they are not on a normal user's PATH.
const SYSTEM_BINS = ['/usr/sbin', '/sbin', '/usr/bin', '/bin'];

/**
 * Finds slirp4netns, nsenter and ip on `path` and the system folders, or names those missing
 * with the package that provides them.
 */
export function findNetworkHelpers(path = process.env.PATH ?? ''): NetworkHelpers | { missing: string[] } {
  const dirs = [...path.split(':').filter((d) => d.startsWith('/')), ...SYSTEM_BINS];
  const find = (name: string) => {
    for (const dir of dirs) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {
        // not here
      }
    }
    return undefined;
  };
  const found = {
    slirp4netns: find('slirp4netns'),
    unshare: find('unshare'),
    nsenter: find('nsenter'),
    ip: find('ip'),
  };
  const { slirp4netns, unshare, nsenter, ip } = found;
  if (slirp4netns && unshare && nsenter && ip) return { slirp4netns, unshare, nsenter, ip };
  const packages: Record<keyof NetworkHelpers, string> = {
    slirp4netns: 'slirp4netns',
    unshare: 'util-linux',
    nsenter: 'util-linux',
    ip: 'iproute2',
  };
  const missing = (Object.keys(found) as (keyof NetworkHelpers)[])
    .filter((name) => !found[name])
    .map((name) => `${name} (package ${packages[name]})`);
  return { missing };
}

/** The host's own IPv4 addresses: a sandbox may never reach the machine it runs on. */
export function hostAddresses(): string[] {
  const own: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) own.push(`${a.address}/32`);
  }
  return own;
}

type Cidr = { text: string; net: number; bits: number };

function cidr(text: string): Cidr {
  const [address = '', bits = '32'] = text.split('/');
  const net = address.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
  return { text, net, bits: Number(bits) };
}

/** Whether `inner` lies inside `outer` (or is it). */
function within(inner: Cidr, outer: Cidr): boolean {
  if (inner.bits < outer.bits) return false;
  const size = 2 ** (32 - outer.bits);
  return Math.floor(inner.net / size) === Math.floor(outer.net / size);
}

const LOOPBACK = cidr('127.0.0.0/8');

export interface NetworkFence {
  /** Routed nowhere: the private ranges the policy leaves closed, and the host's own addresses. */
  unreachable: string[];
  /** Listed ranges inside a closed private range, routed through the gateway (the longer prefix wins). */
  opened: string[];
}

/**
 * Which destinations the sandbox's route table closes and opens. `true` opens every private
 * range; a list opens its IPv4 ranges and addresses only (routes know nothing of host names).
 * Never opened: the host's own addresses, slirp's network (its hosts stand for the host) and
 * loopback (inside the sandbox it is the sandbox's own).
 */
export function networkFence(policy: PrivatePolicy, own: string[] = hostAddresses()): NetworkFence {
  if (policy.kind === 'all') return { unreachable: own, opened: [] };
  const ownCidrs = own.map(cidr);
  const listed = allowedIPv4Ranges(policy)
    .map(cidr)
    .filter(
      (range) =>
        !within(range, LOOPBACK) &&
        !within(range, cidr(SLIRP_NETWORK)) &&
        !ownCidrs.some((address) => address.net === range.net && range.bits === 32),
    );
  const closed = PRIVATE_IPV4_RANGES.map(cidr).filter((range) => !listed.some((open) => within(range, open)));
  const opened = listed.filter((open) => closed.some((range) => within(open, range)));
  return { unreachable: [...closed.map((r) => r.text), ...own], opened: opened.map((r) => r.text) };
}

/**
 * `ip -batch` lines fencing the sandbox's network in. Rules come first: nothing may be sent to
 * slirp's own virtual hosts (the gateway is the host), except DNS on port 53 when offered —
 * slirp would forward any other port of 10.0.2.3 to the host's name server. The rules match the
 * final destination only, so the gateway still carries traffic to the Internet.
 */
export function fenceCommands(
  policy: PrivatePolicy,
  dns: boolean,
  own: string[] = hostAddresses(),
): string[] {
  const { unreachable, opened } = networkFence(policy, own);
  return [
    ...(dns ? [`rule add to ${SANDBOX_DNS}/32 dport 53 lookup main pref 100`] : []),
    `rule add to ${SLIRP_NETWORK} prohibit pref 101`,
    ...unreachable.map((range) => `route add unreachable ${range}`),
    // `onlink`: the kernel would check the gateway through the rules, and rule 101 refuses it.
    ...opened.map((range) => `route add ${range} via ${SLIRP_GATEWAY} dev ${TAP} onlink`),
  ];
}

/**
 * Whether slirp4netns's DNS forwarder is safe to offer. It forwards every port of 10.0.2.3 to
 * the host's first IPv4 name server (the fence lets only port 53 through); when that is a
 * loopback address (a local resolver such as systemd-resolved) it is switched off all the same:
 * the sandbox may not reach the host's loopback at all.
 */
export function hostDnsUsable(resolvConf = '/etc/resolv.conf'): boolean {
  let text: string;
  try {
    text = readFileSync(resolvConf, 'utf8');
  } catch {
    return false;
  }
  for (const line of text.split('\n')) {
    const m = /^\s*nameserver\s+(\d+\.\d+\.\d+\.\d+)\s*$/.exec(line);
    if (m?.[1]) return !/^(127|0)\./.test(m[1]);
  }
  return false;
}

/** Where the sandbox's resolv.conf must be mounted (behind /etc/resolv.conf's links), or none. */
export function resolvConfTarget(): string | undefined {
  try {
    return realpathSync('/etc/resolv.conf');
  } catch {
    return undefined;
  }
}

/** The resolv.conf the sandbox sees. */
export function sandboxResolvConf(dns: boolean): string {
  return dns
    ? `nameserver ${SANDBOX_DNS}\n`
    : '# No DNS: the host resolves names on its loopback, which the sandbox may not reach.\n';
}

export interface UserModeNetwork {
  /** Stops slirp4netns (idempotent). */
  close(): void;
}

/**
 * Connects the network namespace of `pid` (bwrap, started inside `unshare --user --map-root-user
 * --net` and holding the program back with --block-fd) to slirp4netns and
 * fences it in (`fenceCommands`). Rejects with a readable reason, after cleaning up, when a
 * step fails, times out or `signal` aborts.
 */
export async function attachUserModeNetwork(options: {
  pid: number;
  helpers: NetworkHelpers;
  /** HTTP_ALLOW_PRIVATE: which private ranges the sandbox may reach. */
  privatePolicy: PrivatePolicy;
  dns: boolean;
  signal: AbortSignal;
}): Promise<UserModeNetwork> {
  const { pid, helpers } = options;
  // The network namespace belongs to the user namespace made for bwrap, in which Navi's user
  // is root: both helpers enter that one first.
  const target = ['--netns-type=path', `--userns-path=/proc/${pid}/ns/user`, `/proc/${pid}/ns/net`];
  const slirp = spawn(
    helpers.slirp4netns,
    [
      '--configure',
      '--mtu=65520',
      '--disable-host-loopback',
      ...(options.dns ? [] : ['--disable-dns']),
      // Its own mount-namespace sandbox needs root (it switches to group 0); seccomp does not.
      ...(process.getuid?.() === 0 ? ['--enable-sandbox'] : []),
      '--enable-seccomp',
      '--ready-fd=3',
      '--exit-fd=4',
      ...target,
      TAP,
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
  );
  const network: UserModeNetwork = { close: () => stopSlirp(slirp) };
  try {
    await waitReady(slirp, options.signal);
    await fence(pid, helpers, fenceCommands(options.privatePolicy, options.dns), options.signal);
    return network;
  } catch (err) {
    network.close();
    throw err;
  }
}

function stopSlirp(slirp: ChildProcess): void {
  // Closing the exit fd is slirp4netns's own way to stop; the kill covers a hung one.
  for (const stream of slirp.stdio) stream?.destroy();
  if (slirp.exitCode === null && slirp.signalCode === null) slirp.kill('SIGKILL');
}

function waitReady(slirp: ChildProcess, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    slirp.stdio[2]?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    });
    const finish = (err?: Error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      slirp.off('exit', onExit);
      slirp.off('error', onError);
      if (err) reject(err);
      else resolve();
    };
    const onAbort = () => finish(new Error('stopped before the network was ready'));
    const onExit = (code: number | null) =>
      finish(
        new Error(`slirp4netns exited (${code ?? 'signal'}) before the network was ready: ${stderr.trim()}`),
      );
    const onError = (err: Error) => finish(new Error(`slirp4netns could not start: ${err.message}`));
    const timer = setTimeout(
      () => finish(new Error(`slirp4netns did not set up the network within ${STEP_TIMEOUT_MS / 1000} s`)),
      STEP_TIMEOUT_MS,
    );
    slirp.stdio[3]?.once('data', () => finish());
    slirp.once('exit', onExit);
    slirp.once('error', onError);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

function fence(pid: number, helpers: NetworkHelpers, commands: string[], signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      helpers.nsenter,
      [`--target=${pid}`, '--user', '--net', '--preserve-credentials', helpers.ip, '-batch', '-'],
      { timeout: STEP_TIMEOUT_MS, signal },
      (err, _stdout, stderr) => {
        if (err)
          reject(
            new Error(`could not fence in the sandbox's network: ${String(stderr).trim() || err.message}`),
          );
        else resolve();
      },
    );
    child.stdin?.on('error', () => {});
    child.stdin?.end(`${commands.join('\n')}\n`);
  });
}

/**
 * What the server's open files are, by kind, read from /proc: when the count differs between the
 * two idle points, the summary says what the difference is (a socket to the LLM, one from a
 * client, the database, a pipe) instead of only how many.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export type FdKinds = Record<string, number>;

/** Socket inode → "local port:remote port" for the TCP sockets of the process's network namespace. */
function tcpPorts(pid: number): Map<string, { local: number; remote: number }> {
  const ports = new Map<string, { local: number; remote: number }>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const port = (address: string) => Number.parseInt(address.split(':')[1] ?? '0', 16);
      ports.set(f[9]!, { local: port(f[1]!), remote: port(f[2]!) });
    }
  }
  return ports;
}

/** The client end of a connection the driver itself still holds open (its keep-alive pool, its sockets). */
export const CLIENT_HELD = 'socket from a client, open at its end';

/** Local ports of the TCP sockets this process holds open. */
export function ownTcpPorts(): Set<number> {
  const ports = tcpPorts(process.pid);
  const own = new Set<number>();
  for (const entry of readdirSync('/proc/self/fd')) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${entry}`))?.[1];
      const tcp = inode ? ports.get(inode) : undefined;
      if (tcp) own.add(tcp.local);
    } catch {
      // closed while listing
    }
  }
  return own;
}

/**
 * Open files of `pid` by kind: a socket from a client (to `serverPort`) that the client, this
 * process, still holds open (`CLIENT_HELD`: Node's fetch keeps an idle connection as long as the
 * server's keep-alive hint says, over a minute) or one whose client end is gone, a socket to the
 * LLM (to `llmPort`), another TCP or a unix socket, a pipe, an event fd, or the file's path. Null
 * where /proc cannot be read.
 */
export function fdKinds(pid: number, serverPort: number, llmPort: number): FdKinds | null {
  let entries: string[];
  try {
    entries = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  const ports = tcpPorts(pid);
  const own = ownTcpPorts();
  const kinds: FdKinds = {};
  for (const entry of entries) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${entry}`);
    } catch {
      continue; // closed while listing
    }
    let kind = target;
    const socket = /^socket:\[(\d+)\]$/.exec(target);
    if (socket) {
      const tcp = ports.get(socket[1]!);
      if (!tcp) kind = 'socket (unix or listening)';
      else if (tcp.local === serverPort && tcp.remote === 0) kind = 'socket listening';
      else if (tcp.local === serverPort)
        kind = own.has(tcp.remote) ? CLIENT_HELD : 'socket from a client that closed its end';
      else if (tcp.remote === llmPort) kind = 'socket to the LLM';
      else kind = `socket to port ${tcp.remote}`;
    } else if (target.startsWith('pipe:')) kind = 'pipe';
    else if (target.startsWith('anon_inode:')) kind = target.replace(/\[\d+\]$/, '');
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

/** "+2 socket to the LLM, -1 pipe": what changed from `before` to `after`, or '' when nothing did. */
export function fdDifference(before: FdKinds, after: FdKinds): string {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names]
    .map((name) => [name, (after[name] ?? 0) - (before[name] ?? 0)] as const)
    .filter(([, d]) => d !== 0)
    .map(([name, d]) => `${d > 0 ? '+' : ''}${d} ${name}`)
    .join(', ');
}

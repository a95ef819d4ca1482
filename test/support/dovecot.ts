/**
 * A real IMAP server for tests: Debian's dovecot, started from a configuration of its own in a
 * temporary folder (its own base_dir, one user in a passwd file with a known password, Maildir
 * storage, plain IMAP on a free loopback port, log to a file). Tests deliver mail by writing
 * Maildir files, as a local delivery agent would.
 *
 * Dovecot refuses to run its login processes as root and to give mail to UID 0. Run as root (as
 * in CI) it therefore logs in as `dovenull` and keeps the mail as `nobody`; run as anyone else,
 * every process is that user.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export interface DovecotServer {
  host: '127.0.0.1';
  port: number;
  /** The login: an address, as a Gmail login is. */
  user: string;
  password: string;
  /**
   * Puts `raw` (a whole RFC 5322 message, CRLF or LF line ends) into `mailbox` (INBOX or a
   * mailbox made with `createMailbox`), unread unless `seen`, arrived at `date` (default now).
   */
  deliver(raw: string, options?: { mailbox?: string; seen?: boolean; date?: Date }): void;
  /** Creates a mailbox (`Work`, `Archive.2024` for a child) the server lists from then on. */
  createMailbox(name: string): void;
  /** The server's log so far, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

export interface DovecotOptions {
  user?: string;
  password?: string;
}

/** A loopback port nothing listens on at the moment of asking. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Account {
  uid: number;
  gid: number;
  name: string;
  group: string;
}

/** Users from /etc/passwd and /etc/group, by name. */
function account(name: string): Account | undefined {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) return undefined;
  const [, , uid, gid] = line.split(':');
  const group =
    readFileSync('/etc/group', 'utf8')
      .split('\n')
      .find((l) => l.split(':')[2] === gid)
      ?.split(':')[0] ?? name;
  return { uid: Number(uid), gid: Number(gid), name, group };
}

function currentAccount(): Account {
  const me = userInfo();
  const gid = process.getgid?.() ?? me.gid;
  const group =
    readFileSync('/etc/group', 'utf8')
      .split('\n')
      .find((l) => l.split(':')[2] === String(gid))
      ?.split(':')[0] ?? me.username;
  return { uid: me.uid, gid, name: me.username, group };
}

function config(dir: string, port: number, asRoot: boolean, me: Account): string {
  const users = asRoot
    ? // dovecot and dovenull come with the package; these are its own defaults, written out.
      ['default_internal_user = dovecot', 'default_login_user = dovenull']
    : [
        `default_internal_user = ${me.name}`,
        `default_internal_group = ${me.group}`,
        `default_login_user = ${me.name}`,
      ];
  return `# Written by test/support/dovecot.ts for one test run.
base_dir = ${dir}/run
state_dir = ${dir}/state
instance_name = navi-test-${port}
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# A wrong password is a test case; the usual two-second penalty would only slow the suite.
auth_failure_delay = 0
log_path = ${dir}/dovecot.log
info_log_path = ${dir}/dovecot.log
${users.join('\n')}
first_valid_uid = 1
mail_location = maildir:${dir}/mail
passdb {
  driver = passwd-file
  args = scheme=PLAIN ${dir}/passwd
}
userdb {
  driver = passwd-file
  args = ${dir}/passwd
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
`;
}

/** Starts dovecot; rejects with its log when it does not come up. */
export async function startDovecot(options: DovecotOptions = {}): Promise<DovecotServer> {
  const user = options.user ?? 'navi@example.test';
  const password = options.password ?? `imap-${randomBytes(9).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'navi-dovecot-'));
  // The login and mail users must be able to reach their files inside.
  chmodSync(dir, 0o755);
  const asRoot = process.getuid?.() === 0;
  const me = currentAccount();
  const owner = asRoot ? account('nobody') : me;
  if (!owner) throw new Error('running as root, dovecot needs the user "nobody" to own the mail');
  const port = await freePort();
  const mail = join(dir, 'mail');
  for (const sub of ['cur', 'new', 'tmp']) mkdirSync(join(mail, sub), { recursive: true });
  mkdirSync(join(dir, 'state'));
  const chownTree = (path: string) => {
    if (asRoot) chownSync(path, owner.uid, owner.gid);
  };
  for (const p of [mail, join(mail, 'cur'), join(mail, 'new'), join(mail, 'tmp')]) chownTree(p);
  writeFileSync(join(dir, 'passwd'), `${user}:{PLAIN}${password}:${owner.uid}:${owner.gid}::${mail}::\n`, {
    mode: 0o644,
  });
  writeFileSync(join(dir, 'dovecot.conf'), config(dir, port, asRoot, me));

  const logFile = join(dir, 'dovecot.log');
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  let stderr = '';
  const child: ChildProcess = spawn('dovecot', ['-F', '-c', join(dir, 'dovecot.conf')], {
    // Its own process group: stop() ends the master and every child it forked.
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => {
    running = false;
  });

  const stop = async () => {
    if (running && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitForGreeting(port, () => running);
  } catch (err) {
    const why = `${(err as Error).message}\nstderr: ${stderr}\nlog: ${log()}`;
    await stop();
    throw new Error(`dovecot did not start: ${why}`);
  }

  let counter = 0;
  const folderOf = (mailbox: string) => (mailbox === 'INBOX' ? mail : join(mail, `.${mailbox}`));
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    deliver(raw, opts = {}) {
      const folder = folderOf(opts.mailbox ?? 'INBOX');
      counter += 1;
      const base = `${Date.now()}.M${counter}P${process.pid}.navi-test`;
      const file = opts.seen ? join(folder, 'cur', `${base}:2,S`) : join(folder, 'new', base);
      // Written in tmp/ and renamed, as Maildir asks, so the server never sees half a message.
      const tmp = join(folder, 'tmp', base);
      writeFileSync(tmp, raw.replace(/\r?\n/g, '\r\n'), { mode: 0o600 });
      chownTree(tmp);
      // The file's time is the message's arrival, which since: and before: search by.
      const date = opts.date ?? new Date();
      utimesSync(tmp, date, date);
      renameSync(tmp, file);
    },
    createMailbox(name) {
      const folder = folderOf(name);
      for (const sub of ['', 'cur', 'new', 'tmp']) {
        mkdirSync(join(folder, sub), { recursive: true });
        chownTree(join(folder, sub));
      }
      writeFileSync(join(folder, 'maildirfolder'), '');
      chownTree(join(folder, 'maildirfolder'));
    },
    log,
    stop,
  };
}

/** Resolves once something on `port` greets like an IMAP server (`* OK`). */
async function waitForGreeting(port: number, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = '';
  while (Date.now() < deadline) {
    if (!alive()) throw new Error('the dovecot process exited');
    try {
      const greeting = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        socket.setTimeout(2000, () => socket.destroy(new Error('no greeting within 2 s')));
        socket.once('data', (data) => {
          socket.destroy();
          resolve(data.toString());
        });
        socket.once('error', reject);
      });
      if (greeting.startsWith('* OK')) return;
      last = `unexpected greeting: ${greeting.slice(0, 200)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no IMAP greeting on port ${port} within 20 s (${last})`);
}

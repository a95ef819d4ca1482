/**
 * The one virtual screen OpenSCAD renders its images on: an Xvfb started on the first render,
 * kept for the next ones, started again when it died, and stopped with the server. Xvfb picks a
 * free display itself (-displayfd) and listens on no TCP port; a random cookie in a private
 * authority file keeps other local programs off it. It stays in the server's process group, so
 * when Navi stops the server's group, Xvfb goes with it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export interface Display {
  /** The DISPLAY value, like `:7`. */
  display: string;
  /** The authority file holding the display's cookie (XAUTHORITY). */
  xauthority: string;
}

export interface XvfbOptions {
  /** The Xvfb executable. */
  program: string;
  /** How long Xvfb may take to say which display it took (default 15 s). */
  startTimeoutMs?: number;
}

/** Xvfb did not start; the message says why and what to do. */
export class XvfbError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XvfbError';
  }
}

const DEFAULT_START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 2_000;
const SCREEN = '1600x1200x24';

interface Running {
  child: ChildProcess;
  display: Display;
  folder: string;
  exited: Promise<void>;
}

/** An Xvfb authority file: one entry of family "wild", any display, MIT-MAGIC-COOKIE-1. */
function authorityEntry(cookie: Buffer): Buffer {
  const field = (data: Buffer) => {
    const length = Buffer.alloc(2);
    length.writeUInt16BE(data.length);
    return Buffer.concat([length, data]);
  };
  const family = Buffer.from([0xff, 0xff]);
  return Buffer.concat([
    family,
    field(Buffer.alloc(0)),
    field(Buffer.alloc(0)),
    field(Buffer.from('MIT-MAGIC-COOKIE-1')),
    field(cookie),
  ]);
}

export class XvfbDisplay {
  private running: Running | undefined;
  private starting: Promise<Running> | undefined;
  private readonly onExit = () => this.running?.child.kill('SIGKILL');

  constructor(private readonly options: XvfbOptions) {}

  /** The display, starting Xvfb when none runs (first use, or it died). Throws XvfbError. */
  async acquire(signal?: AbortSignal): Promise<Display> {
    signal?.throwIfAborted();
    if (this.running && this.alive(this.running)) return this.running.display;
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    const running = await this.starting;
    signal?.throwIfAborted();
    return running.display;
  }

  /** The process id of the running Xvfb, if one runs. */
  pid(): number | undefined {
    return this.running && this.alive(this.running) ? this.running.child.pid : undefined;
  }

  /** Stops Xvfb (server shutdown); a later acquire starts a new one. */
  async close(): Promise<void> {
    const running = this.running ?? (await this.starting?.catch(() => undefined));
    this.running = undefined;
    process.off('exit', this.onExit);
    if (!running) return;
    running.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((done) => {
      timer = setTimeout(() => {
        running.child.kill('SIGKILL');
        done();
      }, STOP_GRACE_MS);
    });
    await Promise.race([running.exited, late]);
    clearTimeout(timer);
    await rm(running.folder, { recursive: true, force: true });
  }

  private alive(running: Running): boolean {
    return running.child.exitCode === null && running.child.signalCode === null;
  }

  private async start(): Promise<Running> {
    if (this.running) await rm(this.running.folder, { recursive: true, force: true });
    this.running = undefined;
    const folder = await mkdtemp(join(tmpdir(), 'navi-3d-x-'));
    const xauthority = join(folder, 'Xauthority');
    await writeFile(xauthority, authorityEntry(randomBytes(16)), { mode: 0o600 });
    let child: ChildProcess;
    try {
      child = spawn(
        this.options.program,
        ['-displayfd', '3', '-nolisten', 'tcp', '-auth', xauthority, '-screen', '0', SCREEN],
        { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
      );
    } catch (err) {
      await rm(folder, { recursive: true, force: true });
      throw new XvfbError(`Xvfb (${this.options.program}) could not be started: ${(err as Error).message}`);
    }
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    try {
      const number = await this.displayNumber(child);
      const running = { child, display: { display: `:${number}`, xauthority }, folder, exited };
      this.running = running;
      process.off('exit', this.onExit);
      process.on('exit', this.onExit);
      return running;
    } catch (err) {
      child.kill('SIGKILL');
      await rm(folder, { recursive: true, force: true });
      throw err;
    }
  }

  /** The display number Xvfb writes to fd 3 once it accepts connections. */
  private displayNumber(child: ChildProcess): Promise<string> {
    const timeoutMs = this.options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    return new Promise((done, fail) => {
      let said = '';
      let stderr = '';
      const fdOut = child.stdio[3] as Readable;
      const timer = setTimeout(
        () => finish(new XvfbError(`Xvfb did not start within ${timeoutMs} ms.${tail()}`)),
        timeoutMs,
      );
      const tail = () =>
        stderr.trim() ? ` It said: ${stderr.trim().split('\n').slice(-3).join(' / ')}` : '';
      const finish = (result: string | Error) => {
        clearTimeout(timer);
        fdOut.removeAllListeners('data');
        child.removeListener('exit', onExit);
        child.removeListener('error', onError);
        // Once it runs, its own messages are of no use, but the pipe must not fill up.
        child.stderr?.removeAllListeners('data');
        child.stderr?.resume();
        if (typeof result === 'string') done(result);
        else fail(result);
      };
      const onExit = (code: number | null, sig: NodeJS.Signals | null) =>
        finish(new XvfbError(`Xvfb stopped before it was ready (${sig ?? `exit code ${code}`}).${tail()}`));
      const onError = (err: Error) =>
        finish(new XvfbError(`Xvfb (${this.options.program}) could not be started: ${err.message}`));
      child.once('exit', onExit);
      child.once('error', onError);
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-4000);
      });
      fdOut.setEncoding('utf8').on('data', (chunk: string) => {
        said += chunk;
        const number = /^(\d+)\n/.exec(said)?.[1];
        if (number !== undefined) finish(number);
      });
    });
  }
}

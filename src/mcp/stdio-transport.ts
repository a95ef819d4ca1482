/**
 * Stdio client transport for MCP servers. It replaces the SDK's `StdioClientTransport` for
 * three reasons:
 * - the child runs in its own process group, and closing (or its exit) kills the whole group,
 *   so wrappers such as `npx`/`sh -c` and helper processes (esbuild under tsx) never outlive it;
 * - stderr is captured line by line (the last lines explain a crash) instead of inherited;
 * - a message longer than `maxMessageBytes` is dropped while it streams in (memory stays
 *   bounded, no quadratic re-concatenation) and the waiting request gets an error response
 *   (see message-limit.ts) instead of the whole connection being closed.
 * Framing and parsing are the SDK's own (`serializeMessage`, `deserializeMessage`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killGroup } from '../machine/sandbox/process-group.js';
import { firstBytes, lastBytes, oversizeResponse, sniffResponseId } from './message-limit.js';

export interface NaviStdioOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  maxMessageBytes: number;
  /** Each line the server writes to stderr (at most 4 KiB of it). */
  onStderr?: (line: string) => void;
  /** How long a server may take to exit after its stdin closes before it is signalled. */
  exitGraceMs?: number;
}

const STDERR_LINE_MAX = 4096;

export class NaviStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private chunks: Buffer[] = [];
  private size = 0;
  private discard: { head: Buffer; tail: Buffer; bytes: number } | undefined;
  private stderrLine = '';
  /** How the process ended, e.g. "exited with code 1"; undefined while it runs. */
  exitReason: string | undefined;

  constructor(private readonly options: NaviStdioOptions) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('NaviStdioTransport already started');
    return new Promise((resolveStart, rejectStart) => {
      const child = spawn(this.options.command, this.options.args, {
        env: this.options.env,
        cwd: this.options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (err) => {
        this.exitReason = `could not start "${this.options.command}": ${err.message}`;
        rejectStart(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => resolveStart());
      child.once('exit', (code, signal) => {
        this.exitReason = signal ? `killed by ${signal}` : `exited with code ${code}`;
        // The leader is gone: take its helpers with it.
        killGroup(child.pid, 'SIGKILL');
      });
      child.once('close', () => {
        if (this.child === child) this.child = undefined;
        this.flushStderr();
        this.onclose?.();
      });
      child.stdout?.on('data', (chunk: Buffer) => this.onData(chunk));
      child.stdin?.on('error', (err) => this.onerror?.(err));
      child.stderr?.on('data', (chunk: Buffer) => this.onStderrData(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((done, fail) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) {
        fail(new Error('Not connected'));
        return;
      }
      if (stdin.write(serializeMessage(message))) done();
      else stdin.once('drain', done);
    });
  }

  /** Ends stdin, then SIGTERM, then SIGKILL to the process group; resolves once it has exited. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const grace = this.options.exitGraceMs ?? 1000;
    const waitExit = (ms: number) =>
      Promise.race([
        this.exited.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
      ]);
    child.stdin?.end();
    if (!(await waitExit(grace))) {
      killGroup(child.pid, 'SIGTERM');
      if (!(await waitExit(2000))) {
        killGroup(child.pid, 'SIGKILL');
        await waitExit(2000);
      }
    }
    killGroup(child.pid, 'SIGKILL');
    this.chunks = [];
    this.size = 0;
    this.discard = undefined;
  }

  private onData(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      this.accept(chunk.subarray(pos, nl === -1 ? chunk.length : nl));
      if (nl === -1) return;
      this.endLine();
      pos = nl + 1;
    }
  }

  private accept(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.discard) {
      this.discard.bytes += piece.length;
      this.discard.tail = lastBytes(this.discard.tail, piece);
      return;
    }
    if (this.size + piece.length > this.options.maxMessageBytes) {
      let tail: Buffer = Buffer.alloc(0);
      for (const c of this.chunks.slice(-2)) tail = lastBytes(tail, c);
      this.discard = {
        head: firstBytes([...this.chunks, piece]),
        tail: lastBytes(tail, piece),
        bytes: this.size + piece.length,
      };
      this.chunks = [];
      this.size = 0;
      return;
    }
    this.chunks.push(piece);
    this.size += piece.length;
  }

  private endLine(): void {
    const dropped = this.discard;
    if (dropped) {
      this.discard = undefined;
      const limit = this.options.maxMessageBytes;
      this.onerror?.(new Error(`dropped a ${dropped.bytes}-byte message (limit ${limit} bytes)`));
      const id = sniffResponseId(dropped.head.toString('utf8'), dropped.tail.toString('utf8'));
      if (id !== undefined) this.onmessage?.(oversizeResponse(id, dropped.bytes, limit));
      return;
    }
    if (this.size === 0) return;
    const line = Buffer.concat(this.chunks, this.size).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (err) {
      this.onerror?.(
        new Error(`server wrote a line that is not JSON-RPC: ${line.slice(0, 200)} (${String(err)})`),
      );
      return;
    }
    this.onmessage?.(message);
  }

  private onStderrData(chunk: Buffer): void {
    const lines = (this.stderrLine + chunk.toString('utf8')).split('\n');
    this.stderrLine = (lines.pop() ?? '').slice(-STDERR_LINE_MAX);
    for (const line of lines) if (line.trim()) this.options.onStderr?.(line.slice(0, STDERR_LINE_MAX));
  }

  private flushStderr(): void {
    if (this.stderrLine.trim()) this.options.onStderr?.(this.stderrLine);
    this.stderrLine = '';
  }
}

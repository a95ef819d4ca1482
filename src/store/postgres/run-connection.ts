/**
 * A connection of its own to PostgreSQL, outside the pool, for what lives as long as a
 * connection does: `LISTEN` (a pooled connection goes back to the pool and stops hearing) and
 * session-level advisory locks (released by the server when the connection ends, which is how
 * a process that dies frees its sessions). It reconnects when the server drops it, and calls
 * `onConnect` on each new connection before any query runs on it, so the caller can listen or
 * lock again.
 */
import pg from 'pg';

export interface DedicatedConnectionOptions {
  url: string;
  /** Set as `application_name`: how other processes tell this one is alive. */
  applicationName: string;
  /** Runs on every new connection, first (LISTEN again, take the locks again). */
  onConnect?: (client: pg.Client, reconnected: boolean) => Promise<void>;
  /** A notification arrived (for the listening connection). */
  onNotification?: (channel: string, payload: string) => void;
  /** The connection was lost; it is being made again. */
  onLost?: (err: Error | undefined) => void;
  /** Waiting between attempts: starts here, doubles, at most `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  connectTimeoutMs?: number;
}

type State =
  | { kind: 'connecting'; ready: Promise<pg.Client> }
  | { kind: 'connected'; client: pg.Client; ready: Promise<pg.Client> }
  | { kind: 'closed' };

export class DedicatedConnection {
  private state: State;
  private everConnected = false;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private held: Promise<void> | undefined;
  private wakeRetry: (() => void) | undefined;

  constructor(private readonly options: DedicatedConnectionOptions) {
    // Deferred a turn: the loop reads `state`, which must exist first.
    this.state = { kind: 'connecting', ready: Promise.resolve().then(() => this.connectLoop()) };
    // A failed first attempt is retried inside the loop; nothing awaits this one yet.
    this.state.ready.catch(() => undefined);
  }

  /** Resolves once connected the first time; rejects with the reason when closed before. */
  async ready(): Promise<void> {
    const state = this.state;
    if (state.kind === 'closed') throw new Error('the connection to PostgreSQL is closed');
    await state.ready;
  }

  /** Runs one statement once the connection is up (waiting while it reconnects). */
  async query<R extends pg.QueryResultRow = Record<string, unknown>>(
    sql: string,
    params: readonly unknown[] = [],
  ): Promise<R[]> {
    const state = this.state;
    if (state.kind === 'closed') throw new Error('the connection to PostgreSQL is closed');
    const client = await state.ready;
    return (await client.query<R>(sql, params as unknown[])).rows;
  }

  /** Whether the connection is up right now. */
  get connected(): boolean {
    return this.state.kind === 'connected';
  }

  /**
   * Closes it; a connection holding advisory locks releases them. `abrupt` destroys the socket
   * without a goodbye, as a killed process would (tests).
   */
  async close(abrupt = false): Promise<void> {
    const previous = this.state;
    this.state = { kind: 'closed' };
    clearTimeout(this.retryTimer);
    this.wakeRetry?.();
    if (previous.kind === 'connected') {
      if (abrupt) {
        (
          previous.client as unknown as { connection: { stream: { destroy(): void } } }
        ).connection.stream.destroy();
      } else await previous.client.end().catch(() => undefined);
    }
  }

  /** Tests: no connection is made again until the returned function is called. */
  holdReconnectingForTest(): () => void {
    let resume = () => {};
    this.held = new Promise((resolve) => {
      resume = () => {
        this.held = undefined;
        resolve();
      };
    });
    return resume;
  }

  // A method, not an inline test: `state` changes across the awaits of the loop.
  private isClosed(): boolean {
    return this.state.kind === 'closed';
  }

  private async connectLoop(): Promise<pg.Client> {
    let delay = this.options.retryMs ?? 250;
    for (;;) {
      if (this.held) await this.held;
      if (this.isClosed()) throw new Error('the connection to PostgreSQL is closed');
      const client = new pg.Client({
        connectionString: this.options.url,
        connectionTimeoutMillis: this.options.connectTimeoutMs ?? 10_000,
        // Liveness of a silent peer: the server drops a connection whose client host vanished,
        // releasing its locks, only when it notices; keepalives make it notice.
        keepAlive: true,
      });
      try {
        await client.connect();
        client.on('error', () => undefined);
        await client.query(`SET application_name = ${pg.escapeLiteral(this.options.applicationName)}`);
        const reconnected = this.everConnected;
        await this.options.onConnect?.(client, reconnected);
        if (this.isClosed()) {
          await client.end().catch(() => undefined);
          throw new Error('the connection to PostgreSQL is closed');
        }
        this.everConnected = true;
        client.on('notification', (message) =>
          this.options.onNotification?.(message.channel, message.payload ?? ''),
        );
        client.once('end', () => this.lost(client, undefined));
        client.once('error', (err) => this.lost(client, err));
        this.state = { kind: 'connected', client, ready: Promise.resolve(client) };
        return client;
      } catch (err) {
        await client.end().catch(() => undefined);
        if (this.isClosed()) throw err;
        await new Promise<void>((resolve) => {
          this.wakeRetry = resolve;
          this.retryTimer = setTimeout(resolve, delay);
          this.retryTimer.unref();
        });
        delay = Math.min(delay * 2, this.options.maxRetryMs ?? 5000);
      }
    }
  }

  private lost(client: pg.Client, err: Error | undefined): void {
    if (this.state.kind !== 'connected' || this.state.client !== client) return;
    client.end().catch(() => undefined);
    const ready = this.connectLoop();
    ready.catch(() => undefined);
    this.state = { kind: 'connecting', ready };
    this.options.onLost?.(err);
  }
}

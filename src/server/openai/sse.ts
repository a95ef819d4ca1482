/**
 * A Server-Sent Events answer as OpenAI streams one: `data: <json>` events, `data: [DONE]` at
 * the end. A long tool call may send nothing for minutes, and proxies and clients close a
 * connection that stays silent; a `: keep-alive` comment (ignored by every SSE reader) goes out
 * whenever a whole interval passed without anything else.
 */
import type { ServerResponse } from 'node:http';

/** How often a silent stream sends a keep-alive comment. */
export const KEEP_ALIVE_MS = 15_000;

export class SseStream {
  private wroteSinceTick = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly raw: ServerResponse,
    private readonly keepAliveMs = KEEP_ALIVE_MS,
  ) {}

  /** Sends the status and headers; `headers` come on top of the event-stream ones. */
  open(headers: Record<string, string>): void {
    this.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // Proxies such as nginx would otherwise hold the events back in their buffer.
      'x-accel-buffering': 'no',
      ...headers,
    });
    this.timer = setInterval(() => {
      if (!this.wroteSinceTick) this.write(': keep-alive\n\n');
      this.wroteSinceTick = false;
    }, this.keepAliveMs);
    this.timer.unref();
  }

  /** The client went away or the stream ended: nothing more can be sent. */
  get closed(): boolean {
    return this.raw.writableEnded || this.raw.destroyed;
  }

  /** One `data:` event holding `value` as JSON. */
  send(value: unknown): void {
    this.write(`data: ${JSON.stringify(value)}\n\n`);
  }

  /** `data: [DONE]`, then the end of the response. */
  done(): void {
    this.write('data: [DONE]\n\n');
    this.stop();
    if (!this.closed) this.raw.end();
  }

  /** Stops the keep-alive timer (the stream ended, or its client left). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private write(text: string): void {
    if (this.closed) return;
    this.wroteSinceTick = true;
    this.raw.write(text);
  }
}

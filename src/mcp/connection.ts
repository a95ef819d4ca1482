/**
 * One MCP server: connects (stdio child or Streamable HTTP), lists its tools following
 * pagination, watches it (exit, transport close, ping timeout) and restarts it with
 * exponential back-off while it is down. The manager turns its tools into registry entries.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type ReadResourceResult,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { SESSION_META_KEY } from '../protocol/mcp-meta.js';
import type { ToolContext } from '../tools/types.js';
import { CallLimit, MAX_TIMER_MS } from '../util/call-limit.js';
import { type CatalogPart, type McpResourceTemplateInfo, refreshCatalog, watchCatalog } from './catalog.js';
import { handleClientRequests, type InFlightCall } from './client-requests.js';
import { serverEnvironment } from './env.js';
import {
  describeFailure,
  failureWatchingFetch,
  type HttpFailure,
  isAuthFailure,
  summariseBody,
} from './http-failure.js';
import { limitedFetch } from './limited-fetch.js';
import { McpAuthStatus } from './oauth/auth-status.js';
import type { NaviOAuthProvider } from './oauth/provider.js';
import { answerRoots, type McpRoot } from './roots.js';
import type { McpSampler } from './sampler.js';
import { sideRequestLimit } from './side-request-limit.js';
import { NaviStdioTransport } from './stdio-transport.js';
import type {
  McpAuthInfo,
  McpPromptInfo,
  McpResourceInfo,
  McpServerConfig,
  McpServerState,
  McpTimingOptions,
} from './types.js';

export interface ConnectionDeps {
  logger: Logger;
  timing: McpTimingOptions;
  /** Called after each successful tools/list (connect, list_changed). */
  onTools(connection: McpConnection): void;
  onState(connection: McpConnection): void;
  /** The roots offered to a server that asks (roots.ts); none without it. */
  roots?: () => McpRoot[];
  /** The OAuth provider of an HTTP server that holds tokens (oauth/authorizer.ts). */
  authProvider?: (connection: McpConnection) => NaviOAuthProvider | undefined;
  /** Answers a server's sampling requests once the person approves; refused without it. */
  sampler?: McpSampler;
}

const MAX_PAGES = 100;
const STDERR_KEPT = 5;

/**
 * Who makes a call. A shipped server learns `sessionId`; no server learns the rest, which is how
 * a request the server sends back during the call (elicitation, sampling) reaches the person
 * watching that call's run (docs/mcp.md#elicitation).
 */
export interface CallOrigin {
  sessionId?: string;
  /** The run making the call (a subagent's calls are its parent run's); none outside a run. */
  runId?: string;
  callId?: string;
  confirm?: ToolContext['confirm'];
  elicit?: ToolContext['elicit'];
}

/** A call's time limit passed: the error the SDK gives for its own request timeout. */
const requestTimedOut = (timeout: number) =>
  McpError.fromError(ErrorCode.RequestTimeout, 'Request timed out', { timeout });

/** Thrown when a tool is called while its server is not ready. */
export class McpUnavailableError extends Error {}

export class McpConnection {
  state: McpServerState = 'stopped';
  tools: Tool[] = [];
  /** The server's resources and prompts, kept in step with its list_changed notifications. */
  resources: McpResourceInfo[] = [];
  resourceCount = 0;
  prompts: McpPromptInfo[] = [];
  promptCount = 0;
  /** Kept for `mcp_status` and `read_mcp_resource`; not part of the wire status. */
  resourceTemplates: McpResourceTemplateInfo[] = [];
  resourceTemplateCount = 0;
  offersResources = false;
  private catalogListing: Promise<void> = Promise.resolve();
  /** Where the server stands with OAuth (`auth`, its page's expiry, the scope it asked for). */
  readonly authStatus = new McpAuthStatus();
  /** The real cause of the last failure: an HTTP status with a body summary where there was one. */
  lastError: string | null = null;
  /** The last failed answer of an HTTP server's endpoint; cleared by a successful one. */
  lastFailure: HttpFailure | undefined;
  restarts = 0;
  nextRestartAt: number | null = null;

  private client: Client | undefined;
  private transport: Transport | undefined;
  private generation = 0;
  private attempt = 0;
  private readySince: number | null = null;
  private restartTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private stderrTail: string[] = [];
  private currentProvider: NaviOAuthProvider | undefined;
  private useStoredTokens: boolean;
  /** Calls in flight, oldest first: a server's request goes to the newest (client-requests.ts). */
  private readonly inFlight: InFlightCall[] = [];
  private readonly log: Logger;

  constructor(
    readonly config: McpServerConfig,
    private readonly deps: ConnectionDeps,
  ) {
    this.log = deps.logger.child({ mcp_server: config.name });
    this.useStoredTokens = config.transport === 'http' && config.oauth !== undefined;
  }

  /** OAuth state of an HTTP server; null when it never asked for authorisation. */
  get auth(): McpAuthInfo | null {
    return this.authStatus.info;
  }

  get pid(): number | null {
    return this.transport instanceof NaviStdioTransport ? this.transport.pid : null;
  }

  get uptimeMs(): number | null {
    return this.readySince === null ? null : Date.now() - this.readySince;
  }

  /** First connection attempt; resolves once it has succeeded or failed (never rejects). */
  start(): Promise<void> {
    this.stopped = false;
    return this.connect();
  }

  /** Stops supervision and closes the connection; a stdio child has exited when this resolves. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.generation++;
    this.clearTimers();
    this.readySince = null;
    this.nextRestartAt = null;
    const client = this.client;
    this.client = undefined;
    this.setState('stopped');
    if (client) await client.close().catch(() => undefined);
    this.transport = undefined;
  }

  /**
   * Calls one tool; throws `McpUnavailableError` when the server is not ready. A server shipped
   * with Navi also gets the calling session's id in the request's `_meta` (`navi/session_id`),
   * for its audit log; no other server learns it.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    caller: CallOrigin = {},
  ): Promise<CallToolResult> {
    const client = this.client;
    if (this.state !== 'ready' || !client) throw new McpUnavailableError(this.unavailableMessage());
    const generation = this.generation;
    // The time limit is kept here, not by the SDK, so that it can wait while the person answers
    // what the server asks back (CallOrigin): the SDK's own would run on. Timing out, it aborts
    // the request with the error the SDK gives. A per-call signal also keeps a run's long-lived
    // one from collecting the listener the SDK leaves on the signal it is given.
    const local = new CallLimit(signal, timeoutMs, requestTimedOut);
    const { confirm, elicit } = caller;
    // Not `local`: aborting that after the call would send the server a needless cancellation.
    const ended = new AbortController();
    const flight: InFlightCall = {
      origin: {
        ...caller,
        ...(confirm && { confirm: (request) => local.hold(confirm(request)) }),
        ...(elicit && { elicit: (request) => local.hold(elicit(request)) }),
      },
      // A stop or the time limit ends the call too, and so `ended`, a moment later: no
      // AbortSignal.any per call for what only a request of the server's ever reads.
      signal: ended.signal,
      samplings: 0,
    };
    this.inFlight.push(flight);
    try {
      const meta =
        this.config.shipped && caller.sessionId !== undefined
          ? { _meta: { [SESSION_META_KEY]: caller.sessionId } }
          : {};
      return (await client.callTool({ name: tool, arguments: args, ...meta }, undefined, {
        signal: local.signal,
        // Beyond any call's reach: `local` ends the call first.
        timeout: MAX_TIMER_MS,
      })) as CallToolResult;
    } catch (err) {
      if (signal.aborted) {
        const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
        throw new Error(`call to ${tool} on MCP server ${this.config.name} was stopped (${reason})`);
      }
      if (generation === this.generation && this.needsAuthorization(err)) {
        const stepUp = this.scopeStepUp(tool);
        if (stepUp) throw new Error(stepUp);
        this.markNeedsAuth(generation);
        throw new Error(
          `MCP server ${this.config.name} refused the call: ${this.lastError}. The call can be made once the person has authorised Navi.`,
        );
      }
      if (generation !== this.generation) {
        throw new Error(
          `MCP server ${this.config.name} went down during the call (${this.lastError}); it is restarting`,
        );
      }
      if (err instanceof StreamableHTTPError)
        throw new Error(`MCP server ${this.config.name} refused the call: ${refusalSummary(err)}`);
      throw err;
    } finally {
      local.end();
      this.inFlight.splice(this.inFlight.indexOf(flight), 1);
      ended.abort(new Error(`the call to ${tool} ended`));
    }
  }

  /** Reads one resource (`resources/read`); throws `McpUnavailableError` when not ready. */
  async readResource(uri: string, signal: AbortSignal, timeoutMs: number): Promise<ReadResourceResult> {
    const client = this.client;
    if (this.state !== 'ready' || !client) throw new McpUnavailableError(this.unavailableMessage());
    // As in `call`: a local signal, so the caller's does not collect the SDK's listeners.
    const local = new AbortController();
    const forward = () => local.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    try {
      return await client.readResource({ uri }, { signal: local.signal, timeout: timeoutMs });
    } catch (err) {
      if (err instanceof StreamableHTTPError)
        throw new Error(
          `MCP server ${this.config.name} refused to read the resource: ${refusalSummary(err)}`,
        );
      throw err;
    } finally {
      signal.removeEventListener('abort', forward);
    }
  }

  /** Why a call cannot be made now, for the LLM. */
  unavailableMessage(): string {
    const name = this.config.name;
    const last = this.lastError ?? 'no error recorded';
    if (this.state === 'down') {
      const seconds = Math.max(0, Math.ceil(((this.nextRestartAt ?? Date.now()) - Date.now()) / 1000));
      return `MCP server ${name} is down (${last}); restarting in ${seconds}s`;
    }
    if (this.state === 'connecting')
      return `MCP server ${name} is (re)starting (last error: ${last}); try again shortly`;
    if (this.state === 'needs_auth')
      return `MCP server ${name} waits for the person to authorise Navi (${last}); ask them to do that, then try again`;
    return `MCP server ${name} is not running (${this.state})`;
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    this.nextRestartAt = null;
    this.setState('connecting');
    const client = new Client(
      { name: 'navi', version: '0.1.0' },
      { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
    );
    const transport = this.createTransport();
    client.onclose = () => {
      if (!this.needsAuthorization(undefined)) return this.markDown(this.closeReason(transport), generation);
      // A refused connect is settled by its own catch, which may try stored tokens first.
      if (this.state !== 'connecting') this.markNeedsAuth(generation);
    };
    client.onerror = (err) => {
      if (generation === this.generation) this.log.debug({ err: err.message }, 'MCP transport error');
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (generation === this.generation && this.state === 'ready')
        await this.refreshTools(client, generation);
    });
    watchCatalog(client, async (part) => {
      if (generation === this.generation && this.state === 'ready')
        await this.listCatalog(client, generation, [part]);
    });
    answerRoots(client, () => this.deps.roots?.() ?? []);
    handleClientRequests(client, {
      server: this.config.name,
      calls: () => this.inFlight,
      log: this.log,
      ...(this.deps.sampler && { sampler: this.deps.sampler }),
    });
    this.client = client;
    this.transport = transport;
    try {
      await client.connect(transport, { timeout: this.deps.timing.connectTimeoutMs });
      const tools = await this.listAllTools(client);
      if (generation !== this.generation) return;
      this.tools = tools;
      await this.listCatalog(client, generation, ['resources', 'prompts']);
      if (generation !== this.generation) return;
      this.readySince = Date.now();
      this.authorized();
      this.setState('ready');
      this.deps.onTools(this);
      this.schedulePing(client, generation);
      this.log.info({ tools: tools.length }, 'MCP server ready');
    } catch (err) {
      if (this.needsAuthorization(err)) {
        if (generation !== this.generation) return;
        if (!this.currentProvider && !this.useStoredTokens && this.deps.authProvider?.(this)) {
          // Tokens from an earlier authorisation are stored: try them before asking the person.
          this.useStoredTokens = true;
          // Connecting again moves the generation on first, so closing the old client is quiet.
          const retry = this.connect();
          void client.close().catch(() => undefined);
          return retry;
        }
        return this.markNeedsAuth(generation);
      }
      const reason = err instanceof Error ? err.message : String(err);
      const exit = transport instanceof NaviStdioTransport ? transport.exitReason : undefined;
      // The transport's own message for a refused request is a bare status or "fetch failed".
      const http = this.httpFailureText();
      this.markDown(exit ? this.closeReason(transport) : `could not connect: ${http ?? reason}`, generation);
    }
  }

  private createTransport(): Transport {
    const c = this.config;
    if (c.transport === 'http') {
      this.lastFailure = undefined;
      // The vault is only opened for a server that asks for OAuth (or is configured for it).
      const provider = this.useStoredTokens ? this.deps.authProvider?.(this) : undefined;
      this.currentProvider = provider;
      const watched = failureWatchingFetch(fetch, c.url, (failure) => {
        this.lastFailure = failure;
      });
      return new StreamableHTTPClientTransport(new URL(c.url), {
        requestInit: { headers: c.headers },
        fetch: limitedFetch(
          c.maxMessageBytes,
          (bytes) => this.log.warn({ bytes, limit: c.maxMessageBytes }, 'dropped an oversized MCP message'),
          // Discovery and token requests (a refresh inside the transport) get the connect time limit.
          sideRequestLimit(watched, c.url, this.deps.timing.connectTimeoutMs),
        ),
        ...(provider && { authProvider: provider }),
      });
    }
    this.stderrTail = [];
    return new NaviStdioTransport({
      command: c.command,
      args: c.args,
      env: serverEnvironment(c.env),
      ...(c.cwd !== undefined && { cwd: c.cwd }),
      maxMessageBytes: c.maxMessageBytes,
      onStderr: (line) => {
        this.stderrTail = [...this.stderrTail.slice(1 - STDERR_KEPT), line];
        this.log.debug({ stderr: line }, 'MCP server stderr');
      },
    });
  }

  private closeReason(transport: Transport): string {
    if (transport instanceof NaviStdioTransport && transport.exitReason) {
      const tail = this.stderrTail.join(' | ').slice(-500);
      return `process ${transport.exitReason}${tail ? `; stderr: ${tail}` : ''}`;
    }
    return this.httpFailureText() ?? 'connection closed';
  }

  private httpFailureText(): string | undefined {
    const c = this.config;
    return c.transport === 'http' && this.lastFailure ? describeFailure(this.lastFailure, c.url) : undefined;
  }

  /** Whether a failure means the person must authorise Navi (again) before anything works. */
  private needsAuthorization(err: unknown): boolean {
    if (this.config.transport !== 'http') return false;
    return err instanceof UnauthorizedError || isAuthFailure(this.lastFailure);
  }

  /**
   * The server refused Navi's authorisation (401, or 403 for a scope not granted): it waits for
   * the person, with no restarts; authorising or revoking reconnects it.
   */
  private markNeedsAuth(generation: number): void {
    if (generation !== this.generation || this.stopped) return;
    this.generation++;
    this.clearTimers();
    this.readySince = null;
    this.nextRestartAt = null;
    this.attempt = 0;
    const failure = this.lastFailure;
    const wanted = failure?.challenge?.scope;
    const step = failure?.status === 403 && wanted ? ` with scope "${wanted}"` : '';
    const what = this.httpFailureText() ?? "the server refused Navi's authorisation";
    this.lastError = `${what}; it needs authorisation${step}: press Connect on the MCP servers page or run \`navi mcp login ${this.config.name}\``;
    this.authStatus.needsAuthorization(wanted);
    const client = this.client;
    this.client = undefined;
    if (client) void client.close().catch(() => undefined);
    this.log.warn({ status: failure?.status ?? null }, 'MCP server needs authorisation');
    this.setState('needs_auth');
  }

  /**
   * For a call refused with 403 insufficient_scope (step-up the SDK could not do without the
   * person): the message failing that call only. The server stays ready for its other tools;
   * its `auth` asks for the wider scope, so the MCP servers page offers Connect.
   */
  private scopeStepUp(tool: string): string | undefined {
    const failure = this.lastFailure;
    if (failure?.status !== 403 || failure.challenge?.error !== 'insufficient_scope') return undefined;
    const scope = failure.challenge.scope;
    this.authStatus.needsAuthorization(scope);
    this.log.warn({ tool, scope: scope ?? null }, 'MCP tool needs a scope Navi was not granted');
    const [needs, name] = [scope ? `the scope "${scope}"` : 'a scope it did not name', this.config.name];
    return (
      `MCP server ${name} refused the call to ${tool}: it needs ${needs}, which Navi was not granted ` +
      `(${this.httpFailureText() ?? 'HTTP 403 insufficient_scope'}). Ask the person to grant it: Connect on ` +
      `the MCP servers page, or \`navi mcp login ${name}\`. The server's other tools still work.`
    );
  }

  /** After a successful connect: the tokens it used, if it used any. */
  private authorized(): void {
    if (this.config.transport === 'http') this.authStatus.connected(this.currentProvider?.facts());
  }

  private async listAllTools(client: Client): Promise<Tool[]> {
    if (!client.getServerCapabilities()?.tools) return [];
    const tools: Tool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.listTools(cursor === undefined ? undefined : { cursor }, {
        timeout: this.deps.timing.connectTimeoutMs,
      });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined || seen.has(cursor)) break;
      seen.add(cursor);
    }
    return tools;
  }

  private async refreshTools(client: Client, generation: number): Promise<void> {
    try {
      const tools = await this.listAllTools(client);
      if (generation !== this.generation) return;
      this.tools = tools;
      this.deps.onTools(this);
    } catch (err) {
      this.log.warn({ err: String(err) }, 'could not refresh MCP tools after list_changed');
    }
  }

  /**
   * Lists resources and prompts; a failure is the last error, never a reason to go down. One
   * listing at a time, so the list read after the latest list_changed is the one kept.
   */
  private listCatalog(client: Client, generation: number, parts: CatalogPart[]): Promise<void> {
    const listing = this.catalogListing.then(() =>
      refreshCatalog(client, this, parts, {
        timeoutMs: this.deps.timing.connectTimeoutMs,
        log: this.log,
        current: () => generation === this.generation,
      }),
    );
    this.catalogListing = listing;
    return listing;
  }

  private schedulePing(client: Client, generation: number): void {
    let busy = false;
    this.pingTimer = setInterval(async () => {
      if (busy || generation !== this.generation) return;
      busy = true;
      try {
        await client.ping({ timeout: this.deps.timing.pingTimeoutMs });
      } catch (err) {
        if (this.needsAuthorization(err)) return this.markNeedsAuth(generation);
        const reason = err instanceof Error ? err.message : String(err);
        this.markDown(
          `did not answer a ping within ${this.deps.timing.pingTimeoutMs} ms (${reason})`,
          generation,
        );
      } finally {
        busy = false;
      }
    }, this.deps.timing.pingIntervalMs);
    this.pingTimer.unref();
  }

  /** Marks the server down, closes what is left of the connection and schedules a restart. */
  private markDown(reason: string, generation: number): void {
    if (generation !== this.generation || this.stopped) return;
    this.generation++;
    this.clearTimers();
    const { backoffInitialMs, backoffMaxMs, stableAfterMs } = this.deps.timing;
    if ((this.uptimeMs ?? 0) >= stableAfterMs) this.attempt = 0;
    this.readySince = null;
    this.lastError = reason;
    const client = this.client;
    this.client = undefined;
    // Closing kills what is left of a stdio child (and its process group).
    if (client) void client.close().catch(() => undefined);
    const delay = Math.min(backoffMaxMs, backoffInitialMs * 2 ** this.attempt);
    this.attempt++;
    this.nextRestartAt = Date.now() + delay;
    this.log.warn({ reason, restart_in_ms: delay }, 'MCP server down');
    this.setState('down');
    this.restartTimer = setTimeout(() => {
      if (this.stopped) return;
      this.restarts++;
      void this.connect();
    }, delay);
    this.restartTimer.unref();
  }

  private clearTimers(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.restartTimer = undefined;
    this.pingTimer = undefined;
  }

  private setState(state: McpServerState): void {
    if (this.state === state) return;
    this.state = state;
    this.deps.onState(this);
  }
}

/**
 * A refused request as its status and a short summary (credentials hidden, cut short), as
 * last_error has it: the SDK's message carries the whole answer, which may echo Navi's token.
 */
function refusalSummary(err: StreamableHTTPError): string {
  const status = err.code !== undefined && err.code > 0 ? `HTTP ${err.code}: ` : '';
  const answer = err.message.replace(/^Streamable HTTP error: (Error POSTing to endpoint: )?/, '');
  return `${status}${summariseBody(answer)}`;
}

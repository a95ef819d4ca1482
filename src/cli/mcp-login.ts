/**
 * `navi mcp login <server>`: authorises the running Navi at an MCP server that asks for OAuth
 * (docs/mcp.md#oauth), for a person at a terminal rather than on the MCP servers page. It asks
 * the running Navi over its REST API for the authorisation page, prints it, and waits until the
 * server is authorised and connected. The authorisation server sends the browser back to Navi's
 * own callback; a browser on another machine that cannot reach it ends on a page that does not
 * load, and the address it shows can be pasted here instead.
 */
import { createInterface } from 'node:readline';
import type { Settings } from '../config/settings.js';
import type { McpServerInfo, McpStatusView } from '../protocol/rest.js';
import { OAUTH_CALLBACK_PATH, redirectOrigin } from '../server/routes/mcp-oauth-origin.js';
import { probeHost } from './navi-running.js';

export const MCP_LOGIN_USAGE = `Usage: navi mcp login <server> [--redirect-base <origin>] [--timeout <seconds>]

Authorises Navi at an MCP server reached over HTTP that asks for OAuth. Navi must be running
(npm start); this prints the page to open in a browser and waits until you have approved Navi
there and the server is connected.

  --redirect-base <origin>  the address your browser reaches Navi at (default: the one this
                            command uses, http://<NAVI_HOST>:<NAVI_PORT>); the authorisation
                            server sends the browser back to <origin>${OAUTH_CALLBACK_PATH}
  --timeout <seconds>       how long to wait (default 600, at most 3600)

If the browser runs on another machine and the page it is sent back to does not load, copy the
address from its address bar, paste it here and press Enter.`;

const DEFAULT_TIMEOUT_S = 600;
const MAX_TIMEOUT_S = 3600;
const POLL_MS = 1000;
const REQUEST_TIMEOUT_MS = 15_000;

export interface McpLoginIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

interface LoginOptions {
  server: string;
  redirectBase?: string;
  timeoutS: number;
}

/** The options, or the line that says what is wrong with them. */
function parseArgs(args: readonly string[]): LoginOptions | string {
  let server: string | undefined;
  let redirectBase: string | undefined;
  let timeoutS = DEFAULT_TIMEOUT_S;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (arg === '--redirect-base' || arg === '--timeout') {
      const value = args[i + 1];
      if (value === undefined) return `${arg} needs a value`;
      i += 1;
      if (arg === '--redirect-base') {
        const origin = redirectOrigin(value, '--redirect-base');
        if (typeof origin !== 'string') return origin.problem;
        redirectBase = origin;
      } else {
        const seconds = Number(value);
        if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_TIMEOUT_S)
          return `--timeout must be a whole number of seconds from 1 to ${MAX_TIMEOUT_S}, not "${value.slice(0, 40)}"`;
        timeoutS = seconds;
      }
    } else if (arg.startsWith('-')) {
      return `unknown option "${arg.slice(0, 40)}"`;
    } else if (server === undefined) {
      server = arg;
    } else {
      return `one server at a time: "${server}" or "${arg.slice(0, 64)}"`;
    }
  }
  if (server === undefined) return 'name the server to authorise, as the MCP servers page shows it';
  return { server, timeoutS, ...(redirectBase ? { redirectBase } : {}) };
}

/** A failure to show as one line; the command ends with exit code 1. */
class LoginRefusal extends Error {}

/** The running Navi's REST API, as this machine reaches it. */
class NaviClient {
  readonly base: string;
  private readonly headers: Record<string, string>;

  constructor(settings: Pick<Settings, 'NAVI_HOST' | 'NAVI_PORT' | 'NAVI_API_TOKEN'>) {
    this.base = `http://${probeHost(settings.NAVI_HOST)}:${settings.NAVI_PORT}`;
    this.headers = settings.NAVI_API_TOKEN ? { authorization: `Bearer ${settings.NAVI_API_TOKEN}` } : {};
  }

  /** The parsed JSON answer and its status; a Navi that does not answer is a refusal. */
  async call(
    method: string,
    path: string,
    options: { body?: unknown; accept?: string } = {},
  ): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = { ...this.headers, accept: options.accept ?? 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch {
      throw new LoginRefusal(
        `no Navi answers at ${this.base}. Start it first (npm start, or navi serve, in the Navi folder), or set NAVI_HOST and NAVI_PORT to where it runs, then run this again.`,
      );
    }
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      // not JSON: kept as text for the message
    }
    if (res.status === 401)
      throw new LoginRefusal(
        `Navi at ${this.base} wants its API token: set NAVI_API_TOKEN here to the token it runs with (${errorText(body, 'unauthorised')}).`,
      );
    return { status: res.status, body };
  }
}

/** The `error` sentence of a REST error body, or `fallback`. */
function errorText(body: unknown, fallback: string): string {
  const error = (body as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : fallback;
}

async function serversOf(client: NaviClient): Promise<McpServerInfo[]> {
  const { status, body } = await client.call('GET', '/agents/mcp');
  if (status !== 200) throw new LoginRefusal(errorText(body, `GET /agents/mcp answered ${status}`));
  return (body as McpStatusView).servers;
}

/** The server named `name` (its name or key); an unknown one is refused with the list. */
function pick(servers: McpServerInfo[], name: string): McpServerInfo {
  const server = servers.find((s) => s.name === name) ?? servers.find((s) => s.key === name);
  if (server) return server;
  const listed = servers.map((s) => `${s.name} (${s.transport === 'http' ? 'HTTP' : 'command'})`);
  throw new LoginRefusal(
    `there is no MCP server named "${name}". ${listed.length > 0 ? `The servers are: ${listed.join(', ')}.` : 'No MCP servers are configured: put a config in MCP_SERVERS_DIR first.'}`,
  );
}

/**
 * The callback's query from what the person pasted: the whole address, or just its query.
 * Undefined when it holds no `state`.
 */
export function pastedQuery(line: string): URLSearchParams | undefined {
  const text = line.trim();
  if (text === '') return undefined;
  const question = text.indexOf('?');
  const query = new URLSearchParams(question >= 0 ? text.slice(question + 1).split('#')[0] : text);
  return query.has('state') ? query : undefined;
}

/** What the wait reports about a server, once per change. */
function progressOf(server: McpServerInfo): string {
  const auth = server.auth?.status ?? 'none';
  return `${server.state}/${auth}`;
}

export async function runMcpLogin(
  settings: Pick<Settings, 'NAVI_HOST' | 'NAVI_PORT' | 'NAVI_API_TOKEN'>,
  args: readonly string[],
  io: McpLoginIo,
): Promise<number> {
  if (args[0] === 'help' || args[0] === '--help' || args[0] === '-h') {
    io.stdout.write(`${MCP_LOGIN_USAGE}\n`);
    return 0;
  }
  const options = parseArgs(args);
  if (typeof options === 'string') {
    io.stderr.write(`navi mcp login: ${options}\n\n${MCP_LOGIN_USAGE}\n`);
    return 2;
  }
  const client = new NaviClient(settings);
  try {
    return await login(client, options, io);
  } catch (err) {
    if (!(err instanceof LoginRefusal)) throw err;
    io.stderr.write(`navi mcp login: ${err.message}\n`);
    return 1;
  }
}

async function login(client: NaviClient, options: LoginOptions, io: McpLoginIo): Promise<number> {
  const server = pick(await serversOf(client), options.server);
  const name = server.name;
  if (server.auth?.status === 'authorized' && server.state === 'ready') {
    io.stdout.write(
      `Navi is already authorised at ${name} and connected. To authorise it again (another account or scope), revoke it first: Revoke on the MCP servers page.\n`,
    );
    return 0;
  }
  const redirectBase = options.redirectBase ?? client.base;
  const path = `/agents/mcp/servers/${encodeURIComponent(name)}/authorize`;
  const started = await client.call('POST', path, { body: { redirect_base: redirectBase } });
  if (started.status !== 200)
    throw new LoginRefusal(errorText(started.body, `POST ${path} answered ${started.status}`));
  const url = (started.body as { authorization_url?: unknown }).authorization_url;
  if (typeof url !== 'string') throw new LoginRefusal(`POST ${path} answered without an authorization_url`);

  io.stdout.write(
    `Open this address in a browser to authorise Navi at ${name}:\n\n  ${url}\n\n` +
      `Once you approve, the browser is sent back to ${redirectBase}${OAUTH_CALLBACK_PATH}.\n` +
      'If that page does not load (a browser on another machine), copy the address from its address bar, paste it here and press Enter.\n\n' +
      `Waiting for you to authorise Navi in the browser (up to ${minutes(options.timeoutS)})…\n`,
  );

  const pasted = readPasted(io.stdin);
  try {
    return await waitForAuthorisation(client, name, options.timeoutS, pasted, io);
  } finally {
    pasted.close();
  }
}

function minutes(seconds: number): string {
  if (seconds < 120) return `${seconds} seconds`;
  return `${Math.round(seconds / 60)} minutes`;
}

/** Lines the person pastes, taken one at a time between polls. */
function readPasted(stdin: NodeJS.ReadableStream): { take(): string | undefined; close(): void } {
  const lines: string[] = [];
  const reader = createInterface({ input: stdin, terminal: false });
  reader.on('line', (line) => lines.push(line));
  // No input at all (stdin closed or /dev/null) only means nothing will be pasted.
  reader.on('error', () => {});
  return {
    take: () => lines.shift(),
    close: () => {
      reader.close();
      // A terminal or pipe left open would keep the process alive after the answer.
      (stdin as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
    },
  };
}

async function waitForAuthorisation(
  client: NaviClient,
  name: string,
  timeoutS: number,
  pasted: { take(): string | undefined },
  io: McpLoginIo,
): Promise<number> {
  const deadline = Date.now() + timeoutS * 1000;
  let last = '';
  while (Date.now() < deadline) {
    for (let line = pasted.take(); line !== undefined; line = pasted.take()) {
      const query = pastedQuery(line);
      if (!query) {
        if (line.trim() !== '')
          io.stdout.write(
            'That is not the address the browser was sent back to (it holds state=… and code=…); paste the whole address from the address bar.\n',
          );
        continue;
      }
      const done = await client.call('GET', `${OAUTH_CALLBACK_PATH}?${query.toString()}`);
      if (done.status !== 200)
        throw new LoginRefusal(errorText(done.body, `the callback answered ${done.status}`));
      io.stdout.write(`Navi took the authorisation; connecting to ${name}…\n`);
    }
    const server = pick(await serversOf(client), name);
    const auth = server.auth?.status;
    const now = progressOf(server);
    if (auth === 'authorized' && server.state === 'ready') {
      io.stdout.write(
        `Connected: Navi is authorised at ${name}${server.auth?.scope ? ` (scope ${server.auth.scope})` : ''} and has its ${server.tool_count} tool${server.tool_count === 1 ? '' : 's'}.\n`,
      );
      return 0;
    }
    if (auth === 'authorized' && (server.state === 'down' || server.state === 'stopped'))
      throw new LoginRefusal(
        `Navi is authorised at ${name}, but the server is ${server.state}: ${server.last_error ?? 'no error was recorded'}. See the MCP servers page or navi doctor.`,
      );
    // Navi marked the authorisation pending before it handed out the page: needing it again
    // means the browser came back without a token.
    if (auth !== 'pending' && auth !== 'authorized')
      throw new LoginRefusal(
        `the authorisation did not complete: ${server.last_error ?? 'it came back without a token (the browser page says why)'}. Run navi mcp login ${name} again.`,
      );
    if (now !== last && auth === 'authorized')
      io.stdout.write(`Authorised; Navi is connecting to ${name}…\n`);
    last = now;
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))),
    );
  }
  throw new LoginRefusal(
    `gave up after ${minutes(timeoutS)}: ${name} was not authorised. Run navi mcp login ${name} again and approve Navi in the browser before the time runs out (--timeout sets how long to wait).`,
  );
}

/**
 * The MCP client the conformance suite's client scenarios check: Navi's own (McpManager, its
 * connection, tool adapter and OAuth), not a client written for the suite. The suite runs
 * `navi-client.ts <server-url>` with MCP_CONFORMANCE_SCENARIO (and, for some scenarios,
 * MCP_CONFORMANCE_CONTEXT) in the environment, and judges what reached its test server.
 *
 * The server is one Streamable HTTP config in a temporary MCP_SERVERS_DIR; OAuth state lives in
 * memory for the run. Where a person would press "Connect" and authorise in the browser, this
 * fetches the authorisation page without following its redirect and hands the code and state
 * from the Location header to `completeAuthorization`, as Navi's callback route does. Then it
 * calls the tool the scenario expects through the registered tool, as the agent would, with an
 * `elicit` that sends the form back with every field left empty, checked as Navi checks a
 * person's answer, so the schema's defaults are what Navi sends.
 *
 * Exit code 0 when the scenario's calls succeeded; 1, with the reason on stderr, otherwise.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { checkElicitationAnswer } from '../../src/mcp/elicitation-form.js';
import { McpManager } from '../../src/mcp/manager.js';
import type { McpOAuthRecord, McpTokenStore } from '../../src/mcp/oauth/token-store.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ElicitAnswer, ElicitRequest, ToolContext } from '../../src/tools/types.js';

/** The config's server name, and so the `mcp__conformance__…` tool names. */
const SERVER = 'conformance';
/**
 * Navi's address as the authorisation server sees it in the redirect URI. Nothing listens there:
 * the headless browser reads the redirect instead of following it.
 */
const REDIRECT_BASE = 'http://127.0.0.1:8000';
/** The client-ID metadata document the suite's auth/basic-cimd scenario expects as client id. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
/** Authorisations per run: a server that keeps refusing the granted scope is not asked forever. */
const MAX_AUTHORIZATIONS = 3;
/** A bound on each wait for the connection to settle; the suite's own timeout is 30 s. */
const SETTLE_LIMIT_MS = 20_000;

/** What each scenario's test server expects the client to call once it is connected. */
const calls: Record<string, { tool: string; args: Record<string, unknown> } | null> = {
  initialize: null,
  tools_call: { tool: 'add_numbers', args: { a: 2, b: 3 } },
  'sse-retry': { tool: 'test_reconnection', args: {} },
  'elicitation-sep1034-client-defaults': { tool: 'test_client_elicitation_defaults', args: {} },
};
const AUTH_TOOL = { tool: 'test-tool', args: {} };

/** OAuth state kept for the run only; Navi itself keeps it in the vault. */
class MemoryTokenStore implements McpTokenStore {
  private readonly records = new Map<string, McpOAuthRecord>();
  load(server: string): McpOAuthRecord | undefined {
    const record = this.records.get(server);
    return record && structuredClone(record);
  }
  save(server: string, record: McpOAuthRecord): void {
    this.records.set(server, structuredClone(record));
  }
  remove(server: string): void {
    this.records.delete(server);
  }
}

/** The scenario's context (client credentials of the pre-registration scenarios), or {}. */
function scenarioContext(): Record<string, unknown> {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  if (!raw) return {};
  const parsed: unknown = JSON.parse(raw);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`MCP_CONFORMANCE_CONTEXT is not a JSON object: ${raw.slice(0, 200)}`);
  return parsed as Record<string, unknown>;
}

/**
 * The `oauth` block of the config: the client registered beforehand when the scenario has one;
 * otherwise the address of a client-ID metadata document, as a person who published one sets it
 * (Navi uses it only with an authorisation server that says it accepts such documents; others
 * get dynamic registration). The suite's server takes this address without fetching it.
 */
function oauthBlock(scenario: string, context: Record<string, unknown>): Record<string, string> | undefined {
  const { client_id: clientId, client_secret: clientSecret } = context;
  if (typeof clientId === 'string')
    return { client_id: clientId, ...(typeof clientSecret === 'string' && { client_secret: clientSecret }) };
  return scenario.startsWith('auth/') ? { client_metadata_url: CLIENT_METADATA_URL } : undefined;
}

/**
 * The person's browser, without a person: opens the authorisation page and reads where the
 * authorisation server sends the browser back (Navi's callback, with `code` and `state`).
 */
async function visit(authorizationUrl: string): Promise<Record<string, string>> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (!location)
    throw new Error(
      `the authorisation page ${authorizationUrl} answered HTTP ${response.status} without a redirect back to Navi`,
    );
  const back = new URL(location, authorizationUrl);
  const query: Record<string, string> = {};
  for (const key of ['code', 'state', 'error', 'error_description']) {
    const value = back.searchParams.get(key);
    if (value !== null) query[key] = value;
  }
  return query;
}

class Driver {
  private authorizations = 0;

  constructor(
    private readonly manager: McpManager,
    private readonly registry: ToolRegistry,
  ) {}

  private state(): string {
    return this.manager.server(SERVER)?.state ?? 'unknown';
  }

  /** Waits until the connection is no longer on its way (ready, needs_auth, down…). */
  private async settled(): Promise<string> {
    const until = Date.now() + SETTLE_LIMIT_MS;
    while (this.state() === 'connecting') {
      if (Date.now() > until) throw new Error(`the server was still connecting after ${SETTLE_LIMIT_MS} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.state();
  }

  /** What the person does on the MCP page: Connect, authorise, back to Navi. */
  private async authorize(): Promise<void> {
    this.authorizations++;
    if (this.authorizations > MAX_AUTHORIZATIONS)
      throw new Error(
        `the server still asks for authorisation after ${MAX_AUTHORIZATIONS} authorisations (last error: ${this.lastError()})`,
      );
    const { authorizationUrl } = await this.manager.authorize(SERVER, REDIRECT_BASE);
    const query = await visit(authorizationUrl);
    await this.manager.completeAuthorization(query);
  }

  private lastError(): string {
    return this.manager.server(SERVER)?.last_error ?? 'none';
  }

  /** Brings the server to ready, authorising whenever it waits for that. */
  async connect(): Promise<void> {
    for (;;) {
      const state = await this.settled();
      if (state === 'ready') return;
      if (state === 'unknown')
        throw new Error(
          `Navi did not take the server's config: ${this.manager
            .errors()
            .map((e) => `${e.file}: ${e.error}`)
            .join('; ')}`,
        );
      if (state !== 'needs_auth')
        throw new Error(`the server is ${state}, not ready (last error: ${this.lastError()})`);
      await this.authorize();
    }
  }

  /** Calls the server's tool through its registry entry, as the agent's executor does. */
  async call(tool: string, args: Record<string, unknown>): Promise<string> {
    for (;;) {
      await this.connect();
      const name = this.manager.server(SERVER)?.tools.find((t) => t.endsWith(`__${tool}`));
      const entry = name === undefined ? undefined : this.registry.get(name);
      if (!entry)
        throw new Error(
          `the server offers no tool ${tool}; registered: ${this.manager.server(SERVER)?.tools.join(', ') || 'none'}`,
        );
      const result = await entry.tool.execute(args, toolContext());
      if (result.success) return result.output;
      // A 401 sends the server back to needs_auth; a 403 for a scope not granted yet (step-up)
      // fails this call only and offers Connect for the wider scope, which the person presses.
      if ((await this.settled()) === 'needs_auth') continue;
      if (this.manager.server(SERVER)?.auth?.status === 'needs_authorization') {
        await this.authorize();
        continue;
      }
      throw new Error(`${tool} failed: ${result.error ?? result.output}`);
    }
  }
}

/** The call's context: nobody confirms anything; a form is accepted as it stands. */
function toolContext(): ToolContext {
  const log = pino({ level: 'silent' });
  return {
    sessionId: 'conformance',
    runId: 'conformance-run',
    callId: 'conformance-call',
    signal: AbortSignal.timeout(SETTLE_LIMIT_MS),
    isSubagent: false,
    depth: 0,
    profileId: 'default',
    emit: () => undefined,
    confirm: async () => ({ approved: false, reason: 'the conformance run confirms nothing' }),
    // The person sends the form as shown, every field left empty; Navi checks the answer as
    // AgentRun does for elicitation_answer, which puts the schema's defaults in the empty fields.
    elicit: async (request: ElicitRequest): Promise<ElicitAnswer> => {
      process.stderr.write(`elicitation from ${request.server}: ${request.message}\n`);
      const check = checkElicitationAnswer(request.schema, {});
      if (!check.ok) throw new Error(`Navi refused the empty form: ${check.problems.join('; ')}`);
      return { action: 'accept', content: check.content };
    },
    log,
  };
}

/** Runs the scenario against Navi's client in a folder of its own; the exit code. */
async function run(scenario: string, url: string, wanted: (typeof calls)[string]): Promise<number> {
  const oauth = oauthBlock(scenario, scenarioContext());
  const dir = mkdtempSync(join(tmpdir(), 'navi-conformance-client-'));
  const serversDir = join(dir, 'mcp_servers.d');
  mkdirSync(serversDir);
  writeFileSync(
    join(serversDir, `${SERVER}.json`),
    JSON.stringify({ name: SERVER, url, ...(oauth && { oauth }) }, null, 2),
  );
  const registry = new ToolRegistry();
  const manager = new McpManager({
    registry,
    settings: {
      MCP_SERVERS_DIR: serversDir,
      MCP_SCAFFOLD_DIR: join(dir, 'scaffold'),
      TOOL_TIMEOUT_MS: SETTLE_LIMIT_MS,
      TOOL_MAX_OUTPUT_CHARS: 50_000,
    },
    // On stderr, which the suite keeps with the scenario's results.
    logger: pino({ level: process.env.NAVI_CONFORMANCE_LOG ?? 'info' }, pino.destination(2)),
    tokens: new MemoryTokenStore(),
  });
  try {
    await manager.reload();
    const driver = new Driver(manager, registry);
    if (wanted === null) await driver.connect();
    else process.stdout.write(`${await driver.call(wanted.tool, wanted.args)}\n`);
    return 0;
  } finally {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
  const url = process.argv[2];
  if (!scenario || !url || process.argv.length !== 3) {
    process.stderr.write(
      'usage: MCP_CONFORMANCE_SCENARIO=<scenario> node --import tsx test/conformance/navi-client.ts <server-url>\n' +
        '(the conformance suite sets the variable and appends the URL itself)\n',
    );
    return 2;
  }
  const wanted = scenario.startsWith('auth/') ? AUTH_TOOL : calls[scenario];
  if (wanted === undefined) {
    process.stderr.write(
      `navi-client: no behaviour for scenario "${scenario.slice(0, 100)}"; known: ${Object.keys(calls).join(', ')} and auth/*\n`,
    );
    return 2;
  }
  try {
    if (!/^https?:\/\//.test(url))
      throw new Error(`the server URL must be http:// or https://, not "${url.slice(0, 100)}"`);
    return await run(scenario, url, wanted);
  } catch (err) {
    process.stderr.write(`navi-client (${scenario}): ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

process.exit(await main());

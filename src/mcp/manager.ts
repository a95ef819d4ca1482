/**
 * McpManager (docs/mcp.md#lifecycle): reads MCP_SERVERS_DIR, starts the enabled servers in parallel in the
 * background, registers their tools as `mcp__<server>__<tool>` (source 'mcp', so user-tool
 * reloads leave them alone), keeps the registry in step with each server's tool list, and
 * stops every child process on `close()`.
 *
 * Agent-written configs (`"created_by": "agent"`) never start until `approve(name)` records
 * the user's approval of their exact launch line (see manuals/create_mcp_server.md).
 */
import { basename } from 'node:path';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { isSecretVariable } from '../config/secret-env.js';
import type { Settings } from '../config/settings.js';
import type { RegisteredTool, ToolRegistry } from '../tools/registry.js';
import type { SessionFileWriter } from '../tools/session-file-writer.js';
import type { McpResourceTemplateInfo } from './catalog.js';
import { launchLine, loadServerConfigs, needsApproval, sameLaunch, writeApproval } from './config.js';
import { McpConnection } from './connection.js';
import { mcpToolName } from './naming.js';
import { McpAuthorizer } from './oauth/authorizer.js';
import type { McpTokenStore } from './oauth/token-store.js';
import type { McpRoot } from './roots.js';
import type { McpSampler } from './sampler.js';
import { mcpToolDefinition } from './tool-adapter.js';
import {
  DEFAULT_TIMING,
  type McpConfigError,
  type McpReloadReport,
  type McpServerConfig,
  type McpServerStatus,
  type McpTimingOptions,
} from './types.js';

export interface McpManagerDeps {
  registry: ToolRegistry;
  settings: Pick<
    Settings,
    'MCP_SERVERS_DIR' | 'MCP_SCAFFOLD_DIR' | 'TOOL_TIMEOUT_MS' | 'TOOL_MAX_OUTPUT_CHARS'
  >;
  logger: Logger;
  /** Supervision timings; tests shorten the back-off and ping interval. */
  timing?: Partial<McpTimingOptions>;
  /**
   * Where the credentials a config carries (env variables named like secrets, HTTP headers
   * such as Authorization) are registered, so a server that echoes them has them masked.
   */
  secrets?: { add(name: string, value: string): void };
  /**
   * The servers shipped with Navi: their config folder and the values of its placeholders.
   * A config of the user's folder with the same file or server name replaces a shipped one.
   */
  shipped?: { dir: string; placeholders: (name: string) => string | undefined };
  /** Where images returned by MCP tools are kept as session files. */
  files?: SessionFileWriter;
  /** Where OAuth tokens of HTTP servers are kept (the vault); without it no server can authorise. */
  tokens?: McpTokenStore;
  /** The roots offered to servers that ask (FS_ALLOWED_PATHS, roots.ts); none without it. */
  roots?: () => McpRoot[];
  /** Navi's model for servers' sampling requests (sampler.ts); refused without it. */
  sampler?: McpSampler;
}

interface Entry {
  config: McpServerConfig;
  connection: McpConnection | undefined;
  /** Registered name → MCP tool name. */
  tools: Map<string, string>;
  /** Tools that could not be registered (name taken by another source). */
  toolErrors: string[];
}

/** `approve` was given a name no config in the folder has. */
export class McpUnknownServerError extends Error {}

export { McpAuthError } from './oauth/authorizer.js';

/** HTTP headers that carry credentials whatever their value looks like. */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
]);

export class McpManager {
  private readonly entries = new Map<string, Entry>();
  private configErrors: McpConfigError[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private readonly timing: McpTimingOptions;
  private readonly log: Logger;
  private closed = false;
  private readonly oauth: McpAuthorizer;

  constructor(private readonly deps: McpManagerDeps) {
    this.timing = { ...DEFAULT_TIMING, ...deps.timing };
    this.log = deps.logger.child({ component: 'mcp' });
    this.oauth = new McpAuthorizer({
      logger: this.log,
      ...(deps.tokens && { tokens: deps.tokens }),
      ...(deps.secrets && { secrets: deps.secrets }),
    });
  }

  get serversDir(): string {
    return this.deps.settings.MCP_SERVERS_DIR;
  }

  get scaffoldDir(): string {
    return this.deps.settings.MCP_SCAFFOLD_DIR;
  }

  /** TOOL_MAX_OUTPUT_CHARS, for tools that print raw results. */
  get outputLimit(): number {
    return this.deps.settings.TOOL_MAX_OUTPUT_CHARS;
  }

  /** Where files that MCP results carry are kept, when Navi keeps them. */
  get resultFiles(): SessionFileWriter | undefined {
    return this.deps.files;
  }

  /** Starts the configured servers in the background and returns at once; see `ready()`. */
  start(): void {
    void this.reload().catch((err: unknown) => this.log.error({ err: String(err) }, 'MCP start failed'));
  }

  /** Resolves once every reload so far has finished its first connection attempts. */
  async ready(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  /**
   * Re-reads the config folder: added servers start, removed ones stop, changed ones restart,
   * unchanged ones are left running. Resolves after the first connection attempts settle.
   */
  reload(): Promise<McpReloadReport> {
    return this.enqueue(() => this.apply());
  }

  private enqueue<T>(step: () => Promise<T>): Promise<T> {
    const run = this.queue.catch(() => undefined).then(step);
    this.queue = run;
    return run;
  }

  /**
   * Records the user's approval of an agent-written server (its current exact launch line),
   * enables it and starts it. Call only after the user approved that line.
   */
  async approve(name: string, shownCommand?: string): Promise<McpServerStatus> {
    // A config just written (create_mcp_server) is not known until the folder is read again.
    // Only this server is picked up: an approval must never start other files that appeared in
    // the folder meanwhile (say, written there by the agent with another tool).
    if (!this.find(name)) await this.enqueue(() => this.apply(name));
    const entry = this.find(name);
    if (!entry)
      throw new McpUnknownServerError(`no MCP server named "${name}" (is its config in ${this.serversDir}?)`);
    const command = launchLine(entry.config);
    if (shownCommand !== undefined && command !== shownCommand) {
      // The user approved a launch line; a config changed since then needs a new approval.
      throw new Error(`the config of "${name}" changed after approval: it now runs ${command}`);
    }
    await writeApproval(entry.config);
    await this.enqueue(() => this.apply(entry.config.name));
    const status = this.status().find((s) => s.name === entry.config.name);
    if (!status) throw new Error(`MCP server "${name}" disappeared during approval`);
    return status;
  }

  /**
   * Stops one server and starts it again with the config it was started with, resetting its
   * back-off: for a server the person has fixed (or that hangs) without waiting for the next
   * retry. Resolves after the first connection attempt. A server that is disabled or waits for
   * approval is not started by this: that takes its config or `approve`.
   */
  async restart(name: string): Promise<McpServerStatus> {
    return this.enqueue(async () => {
      if (this.closed) throw new Error('Navi is shutting down; MCP servers are not restarted now');
      const entry = this.known(name);
      if (needsApproval(entry.config))
        throw new Error(`MCP server "${entry.config.name}" waits for your approval; approve it to start it`);
      if (!entry.config.enabled)
        throw new Error(
          `MCP server "${entry.config.name}" is disabled in ${entry.config.file}; set "enabled": true there and reload`,
        );
      await this.stopEntry(entry);
      await this.startEntry(entry);
      this.publishErrors();
      return this.statusOf(entry);
    });
  }

  /** Per-server state for `mcp_status`, `GET /agents/tools` and `navi doctor`. */
  status(): McpServerStatus[] {
    return [...this.entries.values()].map((e) => this.statusOf(e));
  }

  /** Config files that could not be used, with the reason. */
  errors(): McpConfigError[] {
    return [...this.configErrors];
  }

  /** Finds a server by its config name or its sanitised key. */
  server(name: string): McpServerStatus | undefined {
    const entry = this.find(name);
    return entry ? this.statusOf(entry) : undefined;
  }

  /**
   * One raw `tools/call`, outside the registry and executor (for `test_mcp_tool`). `tool` is
   * the server's own tool name or the registered `mcp__…` name.
   */
  async callRaw(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    const entry = this.find(server);
    if (!entry)
      throw new Error(`no MCP server named "${server}"; known: ${this.names().join(', ') || 'none'}`);
    const connection = entry.connection;
    if (!connection)
      throw new Error(`MCP server ${entry.config.name} is not running (${this.statusOf(entry).state})`);
    const mcpName = entry.tools.get(tool) ?? tool;
    const timeout = entry.config.timeoutMs ?? this.deps.settings.TOOL_TIMEOUT_MS;
    return connection.call(mcpName, args, signal, timeout);
  }

  /**
   * Reads one resource of a ready server (`read_mcp_resource`). `uri` need not be listed: a
   * template's URIs never are. Throws with a sentence saying what was wrong: an unknown server
   * (naming the known ones), one not running, one that offers no resources, one in the secrets
   * group, or the server's own error.
   */
  async readResource(server: string, uri: string, signal: AbortSignal): Promise<ReadResourceResult> {
    const entry = this.known(server);
    const { config, connection } = entry;
    // What a secrets server reveals is masked after its own tools' calls only.
    if (config.group === 'secrets')
      throw new Error(
        `${config.name} is a secrets server, whose resources are never read directly; use its own tools`,
      );
    if (!connection)
      throw new Error(`MCP server ${config.name} is not running (${this.statusOf(entry).state})`);
    if (connection.state === 'ready' && !connection.offersResources)
      throw new Error(`MCP server ${config.name} offers no resources (its capabilities name none)`);
    return connection.readResource(uri, signal, config.timeoutMs ?? this.deps.settings.TOOL_TIMEOUT_MS);
  }

  /** The resource templates a server listed (at most MCP_LIST_LIMIT) and their true count. */
  resourceTemplates(server: string): { templates: McpResourceTemplateInfo[]; count: number } {
    const c = this.find(server)?.connection;
    return { templates: c?.resourceTemplates ?? [], count: c?.resourceTemplateCount ?? 0 };
  }

  /** The registry entry of `tool` (own or `mcp__…` name) of `server`, when it is registered. */
  registeredTool(server: string, tool: string): RegisteredTool | undefined {
    const entry = this.find(server);
    if (!entry) return undefined;
    const name = entry.tools.has(tool) ? tool : [...entry.tools].find(([, own]) => own === tool)?.[0];
    return name === undefined ? undefined : this.deps.registry.get(name);
  }

  /** Stops every server; each stdio child has exited when this resolves. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue.catch(() => undefined);
    await Promise.all([...this.entries.values()].map((e) => this.stopEntry(e)));
    this.entries.clear();
    this.publishErrors();
  }

  private registerCredentials(config: McpServerConfig): void {
    const secrets = this.deps.secrets;
    if (!secrets) return;
    if (config.transport === 'stdio') {
      for (const [name, value] of Object.entries(config.env))
        if (isSecretVariable(name)) secrets.add(`${config.name}.${name}`, value);
    } else {
      for (const [name, value] of Object.entries(config.headers)) {
        if (!CREDENTIAL_HEADERS.has(name.toLowerCase()) && !isSecretVariable(name)) continue;
        secrets.add(`${config.name}.${name}`, value);
        // "Bearer <token>": the token alone is what a server would echo.
        const token = /^\S+\s+(\S{8,})$/.exec(value)?.[1];
        if (token) secrets.add(`${config.name}.${name}`, token);
      }
    }
  }

  /** Brings the running servers in line with the folder; `only` limits that to one server. */
  private async apply(only?: string): Promise<McpReloadReport> {
    if (this.closed) return { added: [], removed: [], changed: [], unchanged: [], errors: [] };
    const loaded = await this.loadConfigs();
    const { errors } = loaded;
    const concerned = (c: McpServerConfig) => only === undefined || c.name === only || c.key === only;
    const configs = loaded.configs.filter(concerned);
    for (const config of configs) this.registerCredentials(config);
    this.configErrors = errors;
    for (const e of errors) this.log.warn({ file: e.file, error: e.error }, 'MCP server config skipped');
    const report: McpReloadReport = { added: [], removed: [], changed: [], unchanged: [], errors };
    const wanted = new Set(configs.map((c) => c.name));
    const stops: Promise<void>[] = [];
    for (const [name, entry] of this.entries) {
      if (wanted.has(name) || !concerned(entry.config)) continue;
      this.entries.delete(name);
      report.removed.push(name);
      stops.push(this.stopEntry(entry));
    }
    await Promise.all(stops);
    const starts: Promise<void>[] = [];
    for (const config of configs) {
      const existing = this.entries.get(config.name);
      if (existing && sameLaunch(existing.config, config)) {
        existing.config = config;
        report.unchanged.push(config.name);
        continue;
      }
      (existing ? report.changed : report.added).push(config.name);
      const restart = existing ? this.stopEntry(existing) : Promise.resolve();
      const entry: Entry = { config, connection: undefined, tools: new Map(), toolErrors: [] };
      this.entries.set(config.name, entry);
      starts.push(restart.then(() => this.startEntry(entry)));
    }
    await Promise.all(starts);
    this.publishErrors();
    return report;
  }

  /** The user's configs, then the shipped ones the user has not replaced. */
  private async loadConfigs(): Promise<{ configs: McpServerConfig[]; errors: McpConfigError[] }> {
    const user = await loadServerConfigs(this.serversDir);
    const shipped = this.deps.shipped;
    if (!shipped) return user;
    const fromShipped = await loadServerConfigs(shipped.dir, { placeholders: shipped.placeholders });
    const keys = new Set(user.configs.map((c) => c.key));
    const files = new Set(user.configs.map((c) => basename(c.file)));
    for (const e of user.errors) files.add(e.file);
    const kept = fromShipped.configs.filter((c) => !keys.has(c.key) && !files.has(basename(c.file)));
    const errors = [
      ...user.errors,
      ...fromShipped.errors.map((e) => ({ file: `shipped/${e.file}`, error: e.error })),
    ];
    return { configs: [...user.configs, ...kept], errors };
  }

  private async startEntry(entry: Entry): Promise<void> {
    const { config } = entry;
    if (!config.enabled || needsApproval(config)) return;
    const connection = new McpConnection(config, {
      logger: this.log,
      timing: this.timing,
      onTools: (c) => this.syncTools(entry, c),
      onState: () => this.publishErrors(),
      ...(this.deps.roots && { roots: this.deps.roots }),
      ...(this.deps.sampler && { sampler: this.deps.sampler }),
      ...(config.transport === 'http' &&
        this.deps.tokens && { authProvider: (c) => this.oauth.connectionProvider(config, c) }),
    });
    entry.connection = connection;
    await connection.start();
  }

  private async stopEntry(entry: Entry): Promise<void> {
    const connection = entry.connection;
    entry.connection = undefined;
    this.unregisterTools(entry);
    if (connection) await connection.stop();
  }

  /** Replaces the entry's registered tools by the connection's current list. */
  private syncTools(entry: Entry, connection: McpConnection): void {
    if (entry.connection !== connection) return;
    this.unregisterTools(entry);
    const limits = {
      timeoutMs: this.deps.settings.TOOL_TIMEOUT_MS,
      maxOutputChars: this.deps.settings.TOOL_MAX_OUTPUT_CHARS,
    };
    const taken = new Set<string>();
    for (const tool of connection.tools) {
      const name = mcpToolName(entry.config.key, tool.name, taken);
      taken.add(name);
      try {
        this.deps.registry.register({
          tool: mcpToolDefinition(name, tool, connection, limits, this.deps.files),
          source: 'mcp',
          server: entry.config.name,
        });
        entry.tools.set(name, tool.name);
      } catch (err) {
        entry.toolErrors.push(`${tool.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    this.publishErrors();
  }

  private unregisterTools(entry: Entry): void {
    const names = new Set(entry.tools.keys());
    if (names.size > 0) {
      this.deps.registry.removeWhere(
        (t) => t.source === 'mcp' && t.server === entry.config.name && names.has(t.tool.name),
      );
    }
    entry.tools.clear();
    entry.toolErrors = [];
  }

  /** Config errors, servers that are down and tools that could not be registered. */
  private publishErrors(): void {
    const errors = this.configErrors.map((e) => ({ origin: e.file, source: 'mcp' as const, error: e.error }));
    for (const entry of this.entries.values()) {
      const c = entry.connection;
      if (c?.state === 'down')
        errors.push({ origin: entry.config.name, source: 'mcp', error: c.unavailableMessage() });
      for (const e of entry.toolErrors) errors.push({ origin: entry.config.name, source: 'mcp', error: e });
    }
    this.deps.registry.setErrors('mcp', errors);
  }

  private statusOf(entry: Entry): McpServerStatus {
    const { config, connection: c } = entry;
    let state: McpServerStatus['state'] = c?.state ?? 'stopped';
    // An unapproved agent config is shown as waiting for the user even while disabled, since
    // create_mcp_server writes it disabled and approval is what enables it.
    if (!c) state = needsApproval(config) ? 'awaiting_approval' : !config.enabled ? 'disabled' : 'stopped';
    const tools = [...entry.tools.keys()];
    return {
      name: config.name,
      key: config.key,
      file: config.file,
      transport: config.transport,
      state,
      command: launchLine(config),
      tools,
      tool_count: tools.length,
      last_error: c?.lastError ?? null,
      uptime_ms: c?.state === 'ready' ? c.uptimeMs : null,
      restarts: c?.restarts ?? 0,
      restart_in_ms:
        c?.state === 'down' && c.nextRestartAt !== null ? Math.max(0, c.nextRestartAt - Date.now()) : null,
      pid: c?.pid ?? null,
      created_by: config.createdBy,
      shipped: config.shipped,
      auth: c?.auth ?? null,
      resources: c?.resources ?? [],
      resource_count: c?.resourceCount ?? 0,
      prompts: c?.prompts ?? [],
      prompt_count: c?.promptCount ?? 0,
    };
  }

  /**
   * Starts the OAuth authorisation of HTTP server `name` (discovery, registration, PKCE) and
   * returns the page where the person authorises Navi; the authorisation server then sends the
   * browser to `<redirectBase>/agents/mcp/oauth/callback`. Throws McpUnknownServerError, or an
   * McpAuthError saying why the server cannot be authorised.
   */
  async authorize(name: string, redirectBase: string): Promise<{ authorizationUrl: string }> {
    const entry = this.known(name);
    return this.oauth.begin(entry, redirectBase, async () => {
      await this.restart(entry.config.name);
      return entry.connection;
    });
  }

  /**
   * Completes an authorisation from the callback's query: exchanges `code` for tokens and
   * reconnects the server. `state` names the authorisation (and so the server). Throws
   * McpAuthError for an unknown or used state, or the authorisation server's error.
   */
  async completeAuthorization(query: {
    state?: string;
    code?: string;
    error?: string;
    error_description?: string;
  }): Promise<{ server: string }> {
    const server = await this.oauth.complete(query, (s) => this.find(s));
    await this.restart(server);
    return { server };
  }

  /**
   * Forgets the server's tokens (revoking them at the authorisation server when it offers a
   * revocation endpoint) and reconnects it, so it needs authorisation again.
   */
  async revokeAuthorization(name: string): Promise<void> {
    const entry = this.known(name);
    await this.oauth.revoke(entry);
    if (entry.connection) await this.restart(entry.config.name);
  }

  private known(name: string): Entry {
    const entry = this.find(name);
    if (!entry)
      throw new McpUnknownServerError(
        `no MCP server named "${name}"; known: ${this.names().join(', ') || 'none'}`,
      );
    return entry;
  }

  private find(name: string): Entry | undefined {
    return this.entries.get(name) ?? [...this.entries.values()].find((e) => e.config.key === name);
  }

  private names(): string[] {
    return [...this.entries.keys()];
  }
}

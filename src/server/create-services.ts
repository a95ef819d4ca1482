/**
 * The composition root: builds every service Navi runs on from the settings, once, at start-up.
 * Nothing here reaches for globals; tests call it with temporary folders and a fake LLM server.
 */
import type { Logger } from 'pino';
import { Agent } from '../agent/agent.js';
import { compressContext } from '../agent/compression.js';
import { ContextProviders } from '../agent/context-providers.js';
import { loadPersona } from '../agent/persona.js';
import { silentLogger } from '../config/logger.js';
import { type Profile, ProfileRegistry } from '../config/profiles.js';
import { knownSecrets } from '../config/secret-env.js';
import { type Settings, settingOrigins } from '../config/settings.js';
import { CapabilityCache } from '../llm/capabilities.js';
import type { FetchLike } from '../llm/http.js';
import { LlamacppRuntime } from '../llm/llamacpp/runtime.js';
import { resolveModel } from '../llm/model-choice.js';
import { ModelDownloader } from '../llm/models/downloader.js';
import { ModelDownloads } from '../llm/models/downloads.js';
import { SourceResolver } from '../llm/models/source.js';
import { createBackendRegistry } from '../llm/registry.js';
import type { LlmBackend } from '../llm/types.js';
import { naviPathGuard } from '../machine/fs/navi-paths.js';
import { BwrapSandbox } from '../machine/sandbox/bwrap.js';
import { ProcessManager } from '../machine/sandbox/process-manager.js';
import { ScratchDirs } from '../machine/sandbox/scratch-dirs.js';
import { SshHostsFile } from '../machine/ssh/hosts-file.js';
import { SshPool } from '../machine/ssh/ssh-pool.js';
import { McpManager } from '../mcp/manager.js';
import { VaultTokenStore } from '../mcp/oauth/vault-token-store.js';
import { rootsOfAllowedPaths } from '../mcp/roots.js';
import { createSampler } from '../mcp/sampler.js';
import { SHIPPED_SERVERS_DIR, shippedPlaceholders } from '../mcp/shipped.js';
import { createMcpTools } from '../mcp/tools/index.js';
import { MemoryExtractor, memoryBlock } from '../memory/extraction.js';
import { openMemoryStore } from '../memory/open-memory-store.js';
import { HybridMemorySearch } from '../memory/search.js';
import { parseSecretReference } from '../protocol/vault.js';
import type { RecallClock } from '../recall/clock.js';
import { RecallScheduler } from '../recall/scheduler.js';
import { maskingSessionStore } from '../store/masking-store.js';
import { openStores } from '../store/open-stores.js';
import { createAgentTools } from '../tools/builtin/agent-tools.js';
import { createCodeExecTool } from '../tools/builtin/code-exec.js';
import { createContentPublishTool } from '../tools/builtin/content-publish.js';
import { createFilesystemTool } from '../tools/builtin/filesystem.js';
import { createImageViewTool } from '../tools/builtin/image-view.js';
import { createCoreTools } from '../tools/builtin/index.js';
import { createMemoryTool } from '../tools/builtin/memory.js';
import { createProcessTool } from '../tools/builtin/process.js';
import { createRecallTools } from '../tools/builtin/recall-tools.js';
import { createShareFileTool } from '../tools/builtin/share-file.js';
import { createSshExecTool } from '../tools/builtin/ssh-exec.js';
import { createSystemInfoTool } from '../tools/builtin/system-info.js';
import { createTerminalTool } from '../tools/builtin/terminal.js';
import { MIN_REFERENCED_SECRET_LENGTH, ToolExecutor } from '../tools/executor.js';
import { ToolRegistry } from '../tools/registry.js';
import { SessionFileWriter } from '../tools/session-file-writer.js';
import type { ToolDefinition } from '../tools/types.js';
import { reloadUserTools } from '../tools/user-tools.js';
import { SecretMasker } from '../util/secret-masker.js';
import { agentVault } from '../vault/agent-vault.js';
import { openVault, vaultOptions } from '../vault/index.js';
import { PgRunCluster } from './cluster/pg-run-cluster.js';
import { lazyVault } from './lazy-vault.js';
import { LlmSettingsService } from './llm-settings.js';
import { forgetConversation } from './openai/conversations.js';
import { resolveSettingReferences } from './secret-settings.js';
import type { NaviServices } from './services.js';

export interface ServiceOverrides {
  logger?: Logger;
  /** Replaces global fetch for the LLM backends (tests). */
  fetch?: FetchLike;
  /** Extra built-in tools (tests register tools that produce UI components, need approval…). */
  extraTools?: ToolDefinition[];
  /**
   * The secrets to mask, shared with the logger that masks log lines (`navi serve` builds it
   * from the settings and the environment). Default: the secret settings' values only.
   */
  secrets?: SecretMasker;
  /**
   * Navi's environment as it was before `navi serve` removed the secret variables from it:
   * ssh_exec reads the passwords its hosts file names (`password_env`) here. Default: the
   * current `process.env`.
   */
  environment?: Readonly<Record<string, string | undefined>>;
  /** Time for the recall scheduler (tests move it by hand instead of waiting). */
  recallClock?: RecallClock;
  /** Time zone for recall times given without one (tests pin it). Default: the machine's. */
  recallTimeZone?: string;
}

export async function createServices(
  configured: Settings,
  overrides: ServiceOverrides = {},
): Promise<NaviServices> {
  const logger = overrides.logger ?? silentLogger();
  const secrets = overrides.secrets ?? new SecretMasker(knownSecrets(configured, {}));
  const vault = lazyVault(() => openVault(vaultOptions(configured)));
  // Settings that name a vault secret get its value here; it is masked like any other secret.
  const settings = resolveSettingReferences(configured, vault, secrets);
  // The SQLite file, or PostgreSQL when DATABASE_URL is set (docs/postgres.md).
  const stores = await openStores(settings);
  // Several navi serve processes may share a PostgreSQL database: their runs coordinate.
  const cluster =
    stores.engine === 'postgres'
      ? await PgRunCluster.open({ url: settings.DATABASE_URL, db: stores.pg, logger }).catch(async (err) => {
          await stores.close();
          throw err;
        })
      : undefined;
  // Every write to the transcript passes the masker: a revealed value never reaches the disk.
  const sessions = maskingSessionStore(stores.sessions, secrets);
  const profiles = ProfileRegistry.fromDirectory(settings.PROFILES_DIR, settings.DEFAULT_PROFILE);
  for (const e of profiles.errors) logger.warn({ file: e.file }, `profile skipped: ${e.error}`);

  // Nothing of node-llama-cpp is loaded here: the llamacpp backend imports it on its first call.
  const llamacppRuntime = new LlamacppRuntime(settings.LLAMACPP_RUNTIME_DIR, logger);
  const backends = createBackendRegistry(settings, {
    logger,
    llamacppRuntime,
    ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
  });
  // A profile's backend, or the live default: the same choice resolveModel makes without a session's.
  const backendFor = (profile: Profile): LlmBackend => resolveModel(backends, profile).backend;
  const defaultBackend = (): LlmBackend => backendFor(profiles.getDefault());
  // Answers stay tied to the backend object asked, so a rebuilt backend is asked afresh.
  const capabilities = new CapabilityCache();
  // The client may change the LLM settings while Navi runs: the backends are rebuilt, and
  // everything above reaches them through the registry, so it follows.
  const llmSettings = new LlmSettingsService({
    settings,
    origins: settingOrigins(configured),
    backends,
    resolveReferences: (next) => resolveSettingReferences(next, vault, secrets),
    secrets,
    logger,
    // The old backend objects are gone; their answers only take room.
    onChange: () => capabilities.invalidate(),
  });

  const memory = openMemoryStore(stores);
  const memorySearch = new HybridMemorySearch({
    store: memory,
    backend: () => {
      try {
        const b = defaultBackend();
        return b.embed ? b : undefined;
      } catch {
        return undefined;
      }
    },
    logger,
  });
  const extractor = new MemoryExtractor({
    memory,
    sessions,
    backend: defaultBackend,
    idleMinutes: settings.MEMORY_EXTRACTION_IDLE_MINUTES,
    logger,
  });

  const modelDownloads = new ModelDownloads({
    dir: settings.NAVI_MODELS_DIR,
    resolver: new SourceResolver(),
    downloader: new ModelDownloader(),
    onFailure: (d) => logger.warn({ source: d.source, error: d.error }, 'model download failed'),
  });

  const recalls = new RecallScheduler({
    store: stores.recalls,
    limits: { maxPerSession: settings.RECALL_MAX_PER_SESSION, maxChain: settings.RECALL_MAX_CHAIN },
    logger,
    ...(overrides.recallClock && { clock: overrides.recallClock }),
    ...(overrides.recallTimeZone && { timeZone: overrides.recallTimeZone }),
    // Other processes on the database schedule and cancel recalls this one's timer cannot see.
    ...(stores.engine === 'postgres' &&
      settings.RECALL_POLL_SECONDS > 0 && { pollMs: settings.RECALL_POLL_SECONDS * 1000 }),
  });

  const registry = new ToolRegistry();
  // Without a working bubblewrap, terminal and code_exec ask before every call (see docs/tools.md#shipped-defaults).
  const sandbox = new BwrapSandbox();
  const sandboxAvailable = settings.NAVI_SANDBOX !== 'off' && (await sandbox.probe()).available;
  const agentSecrets = agentVault(vault);
  const executor = new ToolExecutor({
    registry,
    settings,
    toolSettings: settings,
    logger,
    sandboxAvailable,
    secrets,
    // Through the agent's view of the vault: Navi's own records (the OAuth tokens of MCP
    // servers) answer as unknown secrets, so no tool argument can carry one.
    references: {
      resolve: (id, field, use) =>
        agentSecrets.resolve(id, field, { actor: 'agent', session_id: use.sessionId, tool: use.tool }),
    },
  });
  const networkAllowed = (profileId: string): boolean => profiles.get(profileId)?.network_access === true;
  const providers = new ContextProviders({
    dir: settings.CONTEXT_PROVIDERS_DIR,
    kv: stores.kv,
    logger,
  });
  createCoreTools({ registry, kv: stores.kv, settings, providers, logger });
  const mcpRoots = rootsOfAllowedPaths(settings.FS_ALLOWED_PATHS);
  const mcp = new McpManager({
    registry,
    settings,
    logger,
    secrets,
    files: new SessionFileWriter(settings, stores.files),
    // OAuth tokens of HTTP MCP servers live in the vault, encrypted like every secret.
    tokens: new VaultTokenStore(vault),
    // FS_ALLOWED_PATHS is read once at start, so the roots never change while Navi runs.
    roots: () => mcpRoots,
    // A server's sampling request, once approved, is answered by the default backend and model.
    sampler: createSampler({
      model: () => resolveModel(backends, {}),
      vision: async (backend, model, signal) => (await capabilities.get(backend, model, signal)).vision,
    }),
    ...(settings.MCP_SHIPPED_SERVERS && {
      shipped: { dir: SHIPPED_SERVERS_DIR, placeholders: shippedPlaceholders(settings) },
    }),
  });
  // code_exec's working folders are shared with share_file, which may copy files from them.
  const scratch = new ScratchDirs();
  const sshPool = new SshPool({
    env: overrides.environment ?? process.env,
    secret: (reference, purpose) => {
      const named = parseSecretReference(reference);
      if (!named) throw new Error(`${reference} is not a vault reference`);
      const { id, field } = named;
      const found = vault.resolve(id, field, { actor: 'navi', reason: purpose });
      secrets.add(found.label, found.value, MIN_REFERENCED_SECRET_LENGTH);
      return found.value;
    },
  });
  const sshHosts = new SshHostsFile(settings.SSH_HOSTS_FILE);
  // One guard for every tool that touches files: private data hidden, control folders read-only.
  const guard = naviPathGuard(settings, process.cwd(), await sshHosts.keyPaths());
  // Background processes of every session: ended with their session and when Navi stops.
  const processes = new ProcessManager({
    maxRunning: settings.PROCESS_MAX_RUNNING,
    outputMaxBytes: settings.PROCESS_OUTPUT_MAX_BYTES,
  });
  const builtins: ToolDefinition[] = [
    createFilesystemTool({ settings, guard }),
    createTerminalTool({ settings, networkAllowed, guard, sandbox, hosts: sshHosts }),
    createProcessTool({ settings, networkAllowed, guard, sandbox, hosts: sshHosts, manager: processes }),
    createSystemInfoTool({ settings }),
    createCodeExecTool({ settings, networkAllowed, scratch, sandbox, hosts: sshHosts }),
    createImageViewTool({ settings, guard }),
    createSshExecTool({ settings, pool: sshPool, guard, hosts: sshHosts }),
    createShareFileTool({ settings, files: stores.files, scratch, guard }),
    createContentPublishTool({ settings, files: stores.files }),
    createMemoryTool({ store: memory, search: memorySearch }),
    ...createRecallTools(recalls),
    ...createMcpTools(mcp, { profileFor: (id) => profiles.get(id) }),
    ...createAgentTools({
      profiles,
      maxSubagentDepth: settings.SUBAGENT_MAX_DEPTH,
      sessions,
      kv: stores.kv,
      backendFor,
    }),
    ...(overrides.extraTools ?? []),
  ];
  for (const tool of builtins) registry.register({ tool, source: 'builtin' });
  const reloadTools = () => reloadUserTools({ registry, toolsDir: settings.TOOLS_DIR, providers, logger });
  await reloadTools();
  // MCP servers start in the background: /health never waits for them.
  mcp.start();

  const agent = new Agent({
    settings,
    logger,
    sessions,
    kv: stores.kv,
    profiles,
    executor,
    models: backends,
    capabilities: (backend, model, signal) => capabilities.get(backend, model, signal),
    persona: loadPersona(settings),
    memoryBlock: () => memoryBlock(memory),
    compressor: compressContext,
    contextSections: (ctx) => providers.sections(ctx),
  });

  return {
    get settings() {
      return llmSettings.settings();
    },
    logger,
    sessions,
    kv: stores.kv,
    files: stores.files,
    consent: stores.consent,
    search: stores.search,
    storage: { engine: stores.engine, report: () => stores.report() },
    ...(cluster ? { cluster } : {}),
    profiles,
    tools: registry,
    executor,
    secrets,
    agent,
    backendFor: (profileId) => backendFor(profiles.get(profileId) ?? profiles.getDefault()),
    llm: { backends, settings: llmSettings },
    capabilities,
    memory: { store: memory, search: memorySearch, extractor },
    onSessionCreated: () => {
      // Extraction runs in the background: creating a session never waits for the LLM.
      extractor
        .processStaleSessions()
        .catch((err: unknown) => logger.warn({ err }, 'memory extraction failed'));
    },
    onSessionDeleted: async (sessionId) => {
      await processes.killOwner(sessionId);
      // The session is gone whatever happens here; a key left behind only leads to a new session.
      await forgetConversation(stores.kv, sessionId).catch((err: unknown) =>
        logger.warn({ err, sessionId }, 'could not remove the OpenAI conversation key of a deleted session'),
      );
    },
    vault,
    mcp,
    recalls,
    modelDownloads,
    llamacppRuntime,
    reloadTools,
    close: async () => {
      await processes.close();
      await modelDownloads.close();
      await llamacppRuntime.close();
      recalls.stop();
      // A recall being claimed holds a pooled connection: let it finish before the pool closes.
      await recalls.settled();
      sshPool.closeAll();
      await mcp.close();
      await providers.close();
      await cluster?.close();
      await stores.close();
      vault.close();
    },
  };
}

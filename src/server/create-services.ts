/**
 * The composition root: builds every service Navi runs on from the settings, once, at start-up.
 * Nothing here reaches for globals; tests call it with temporary folders and a fake LLM server.
 */
import type { Logger } from 'pino';
import { Agent } from '../agent/agent.js';
import { compressContext } from '../agent/compression.js';
import { loadPersona } from '../agent/persona.js';
import { silentLogger } from '../config/logger.js';
import { type Profile, ProfileRegistry } from '../config/profiles.js';
import type { Settings } from '../config/settings.js';
import type { FetchLike } from '../llm/http.js';
import { createBackendRegistry } from '../llm/registry.js';
import type { LlmBackend } from '../llm/types.js';
import { McpManager } from '../mcp/manager.js';
import { createMcpTools } from '../mcp/tools/index.js';
import { MemoryExtractor, memoryBlock } from '../memory/extraction.js';
import { SqliteMemoryStore } from '../memory/memory-store.js';
import { HybridMemorySearch } from '../memory/search.js';
import { createSqliteStores } from '../store/sqlite/index.js';
import { createAgentTools } from '../tools/builtin/agent-tools.js';
import { createCodeExecTool } from '../tools/builtin/code-exec.js';
import { createContentPublishTool } from '../tools/builtin/content-publish.js';
import { createFilesystemTool } from '../tools/builtin/filesystem.js';
import { createImageViewTool } from '../tools/builtin/image-view.js';
import { createCoreTools } from '../tools/builtin/index.js';
import { createMemoryTool } from '../tools/builtin/memory.js';
import { createShareFileTool } from '../tools/builtin/share-file.js';
import { createSshExecTool } from '../tools/builtin/ssh-exec.js';
import { createTerminalTool } from '../tools/builtin/terminal.js';
import { ContextProviders } from '../tools/context-providers.js';
import { ToolExecutor } from '../tools/executor.js';
import { naviPathGuard } from '../tools/fs/navi-paths.js';
import { ToolRegistry } from '../tools/registry.js';
import { probeBwrap } from '../tools/sandbox/bwrap.js';
import { ScratchDirs } from '../tools/sandbox/scratch-dirs.js';
import { sshKeyPaths } from '../tools/ssh/hosts-file.js';
import { SshPool } from '../tools/ssh/ssh-pool.js';
import type { ToolDefinition } from '../tools/types.js';
import { reloadUserTools } from '../tools/user-tools.js';
import type { NaviServices } from './services.js';

export interface ServiceOverrides {
  logger?: Logger;
  /** Replaces global fetch for the LLM backends (tests). */
  fetch?: FetchLike;
  /** Extra built-in tools (tests register tools that produce UI components, need approval…). */
  extraTools?: ToolDefinition[];
}

export async function createServices(
  settings: Settings,
  overrides: ServiceOverrides = {},
): Promise<NaviServices> {
  const logger = overrides.logger ?? silentLogger();
  const stores = createSqliteStores(settings.DB_PATH);
  const profiles = ProfileRegistry.fromDirectory(settings.PROFILES_DIR, settings.DEFAULT_PROFILE);
  for (const e of profiles.errors) logger.warn({ file: e.file }, `profile skipped: ${e.error}`);

  const backends = createBackendRegistry(settings, {
    logger,
    ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
  });
  const backendFor = (profile: Profile): LlmBackend =>
    backends.get(profile.llm_backend ?? settings.DEFAULT_LLM_BACKEND);
  const defaultBackend = (): LlmBackend => backendFor(profiles.getDefault());

  const memory = new SqliteMemoryStore(stores.db);
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
    sessions: stores.sessions,
    backend: defaultBackend,
    idleMinutes: settings.MEMORY_EXTRACTION_IDLE_MINUTES,
    logger,
  });

  const registry = new ToolRegistry();
  // Without a working bubblewrap, terminal and code_exec ask before every call (DESIGN §9).
  const sandboxAvailable = settings.NAVI_SANDBOX !== 'off' && (await probeBwrap()).available;
  const executor = new ToolExecutor({ registry, settings, logger, sandboxAvailable });
  const networkAllowed = (profileId: string): boolean => profiles.get(profileId)?.network_access !== false;
  const providers = new ContextProviders({
    dir: settings.CONTEXT_PROVIDERS_DIR,
    kv: stores.kv,
    logger,
  });
  createCoreTools({ registry, kv: stores.kv, settings, providers, logger });
  const mcp = new McpManager({ registry, settings, logger });
  // code_exec's working folders are shared with share_file, which may copy files from them.
  const scratch = new ScratchDirs();
  const sshPool = new SshPool();
  // One guard for every tool that touches files: private data hidden, control folders read-only.
  const guard = naviPathGuard(settings, process.cwd(), await sshKeyPaths(settings.SSH_HOSTS_FILE));
  const builtins: ToolDefinition[] = [
    createFilesystemTool({ settings, guard }),
    createTerminalTool({ settings, networkAllowed, guard }),
    createCodeExecTool({ settings, networkAllowed, scratch }),
    createImageViewTool({ settings, guard }),
    createSshExecTool({ settings, pool: sshPool, guard }),
    createShareFileTool({ settings, files: stores.files, scratch, guard }),
    createContentPublishTool({ settings, files: stores.files }),
    createMemoryTool({ store: memory, search: memorySearch }),
    ...createMcpTools(mcp, { profileFor: (id) => profiles.get(id) }),
    ...createAgentTools({
      profiles,
      maxSubagentDepth: settings.SUBAGENT_MAX_DEPTH,
      sessions: stores.sessions,
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
    sessions: stores.sessions,
    kv: stores.kv,
    profiles,
    executor,
    backendFor,
    persona: loadPersona(settings),
    memoryBlock: () => memoryBlock(memory),
    compressor: compressContext,
    contextSections: (ctx) => providers.sections(ctx),
  });

  return {
    settings,
    logger,
    sessions: stores.sessions,
    kv: stores.kv,
    files: stores.files,
    profiles,
    tools: registry,
    executor,
    agent,
    backendFor: (profileId) => backendFor(profiles.get(profileId) ?? profiles.getDefault()),
    memory: { store: memory, search: memorySearch, extractor },
    onSessionCreated: () => {
      // Extraction runs in the background: creating a session never waits for the LLM.
      extractor
        .processStaleSessions()
        .catch((err: unknown) => logger.warn({ err }, 'memory extraction failed'));
    },
    mcp,
    reloadTools,
    close: async () => {
      sshPool.closeAll();
      await mcp.close();
      await providers.close();
      stores.close();
    },
  };
}

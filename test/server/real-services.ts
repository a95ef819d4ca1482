/**
 * Services with the REAL agent, stores and LLM backend, pointed at the fake LLM server.
 * Uses the composition root `createServices` when it exists; until the lead lands it, the same
 * real parts are composed here (Agent + createBackendRegistry + SQLite stores), so these tests
 * exercise the real agent either way. Delete the fallback once create-services.ts is in.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from '../../src/agent/agent.js';
import { silentLogger } from '../../src/config/logger.js';
import { ProfileRegistry } from '../../src/config/profiles.js';
import { type SettingName, type Settings, testSettings } from '../../src/config/settings.js';
import { createBackendRegistry } from '../../src/llm/registry.js';
import type { NaviServices } from '../../src/server/services.js';
import { createSqliteStores } from '../../src/store/sqlite/index.js';
import { ToolExecutor } from '../../src/tools/executor.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { repoRoot } from './harness.js';

type CreateServices = (
  settings: Settings,
  overrides?: { logger?: ReturnType<typeof silentLogger> },
) => Promise<NaviServices>;

const createServicesFile = join(repoRoot, 'src/server/create-services.ts');
export const usingCreateServices = existsSync(createServicesFile);

/** A profile without planning, so one scripted reply is one LLM answer. */
function writeProfiles(dir: string): string {
  const profiles = join(dir, 'profiles');
  mkdirSync(profiles, { recursive: true });
  writeFileSync(
    join(profiles, 'plain.json'),
    JSON.stringify({ id: 'plain', name: 'Plain', system_prompt: 'Be brief.', planning_enabled: false }),
  );
  return profiles;
}

export async function realServices(
  dir: string,
  overrides: Partial<Record<SettingName, string>>,
): Promise<NaviServices> {
  const settings = testSettings({
    DB_PATH: join(dir, 'navi.db'),
    SESSION_FILES_DIR: join(dir, 'session_files'),
    TOOLS_DIR: join(dir, 'tools'),
    CONTEXT_PROVIDERS_DIR: join(dir, 'context_providers'),
    MCP_SERVERS_DIR: join(dir, 'mcp_servers.d'),
    MCP_SCAFFOLD_DIR: join(dir, 'mcp-servers'),
    SSH_HOSTS_FILE: join(dir, 'ssh_hosts.json'),
    PROFILES_DIR: writeProfiles(dir),
    DEFAULT_PROFILE: 'plain',
    OLLAMA_DEFAULT_MODEL: 'test-model',
    OLLAMA_THINK: 'false',
    CONTEXT_COMPRESSION_ENABLED: 'false',
    LOG_LEVEL: 'ERROR',
    ...overrides,
  });
  const logger = silentLogger();
  if (usingCreateServices) {
    const modulePath = '../../src/server/create-services.js';
    const mod = (await import(modulePath)) as { createServices: CreateServices };
    return mod.createServices(settings, { logger });
  }
  const stores = createSqliteStores(settings.DB_PATH);
  const profiles = ProfileRegistry.fromDirectory(settings.PROFILES_DIR, settings.DEFAULT_PROFILE);
  const tools = new ToolRegistry();
  const executor = new ToolExecutor({ registry: tools, settings, logger });
  const backends = createBackendRegistry(settings, { logger });
  const backendFor = (profileId: string) => {
    const backend = profiles.get(profileId)?.llm_backend;
    return backend ? backends.get(backend) : backends.default();
  };
  const agent = new Agent({
    settings,
    logger,
    sessions: stores.sessions,
    kv: stores.kv,
    profiles,
    executor,
    backendFor: (profile) => backendFor(profile.id),
    persona: 'You are Navi.',
  });
  return {
    settings,
    logger,
    sessions: stores.sessions,
    kv: stores.kv,
    files: stores.files,
    profiles,
    tools,
    executor,
    agent,
    backendFor,
    reloadTools: async () => ({ loaded: [], providers: [], errors: [] }),
    close: async () => stores.close(),
  };
}

/** Services with the REAL agent, stores and LLM backend (the composition root), pointed at the fake LLM server. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../src/config/logger.js';
import { type SettingName, testSettings } from '../../src/config/settings.js';
import { createServices } from '../../src/server/create-services.js';
import type { NaviServices } from '../../src/server/services.js';

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
  return createServices(settings, { logger: silentLogger() });
}

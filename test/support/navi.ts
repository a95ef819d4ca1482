/**
 * Starts a real Navi (real SQLite file in a temporary folder, real HTTP and WebSocket on a random
 * loopback port) against a fake LLM server, for integration tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { silentLogger } from '../../src/config/logger.js';
import { type SettingName, testSettings } from '../../src/config/settings.js';
import type { RecallClock } from '../../src/recall/clock.js';
import { buildApp } from '../../src/server/app.js';
import { createServices } from '../../src/server/create-services.js';
import type { NaviServices } from '../../src/server/services.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import type { SecretMasker } from '../../src/util/secret-masker.js';
import { pairClient } from './pairing.js';

export const repoRoot = resolve(import.meta.dirname, '../..');

export interface NaviHandle {
  url: string;
  port: number;
  dir: string;
  services: NaviServices;
  app: FastifyInstance;
  wsUrl(sessionId: string): string;
  createSession(profileId?: string): Promise<string>;
  /**
   * Pairs a new client as the person's browser is paired; resolves to the `Cookie` header value
   * that carries consent (for confirmations, MCP approval, reloads). Each call pairs anew.
   */
  pair(): Promise<string>;
  close(): Promise<void>;
}

export interface StartOptions {
  settings?: Partial<Record<SettingName, string>>;
  /** Reuse a folder (and so the database) of an earlier instance. */
  dir?: string;
  port?: number;
  /** Extra built-in tools for the test. */
  extraTools?: ToolDefinition[];
  /** Time for recalls (a `ManualClock` fires them without waiting). */
  recallClock?: RecallClock;
  /** Time zone for recall times given without one. */
  recallTimeZone?: string;
  /** A logger of the test's own (to read the log lines); default: silent. */
  logger?: Logger;
  /** The masker shared with that logger, as `navi serve` shares one. */
  secrets?: SecretMasker;
}

export function tempDir(prefix = 'navi-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startNavi(options: StartOptions = {}): Promise<NaviHandle> {
  const dir = options.dir ?? tempDir();
  const settings = testSettings({
    DB_PATH: join(dir, 'navi.db'),
    SESSION_FILES_DIR: join(dir, 'session_files'),
    NAVI_DATA_DIR: join(dir, 'data'),
    TOOLS_DIR: join(dir, 'tools'),
    CONTEXT_PROVIDERS_DIR: join(dir, 'context_providers'),
    MCP_SERVERS_DIR: join(dir, 'mcp_servers.d'),
    MCP_SCAFFOLD_DIR: join(dir, 'mcp-servers'),
    MANUALS_DIR: join(repoRoot, 'manuals'),
    PROFILES_DIR: join(repoRoot, 'profiles'),
    SSH_HOSTS_FILE: join(dir, 'ssh_hosts.json'),
    GNEXUS_VAULT_PATH: join(dir, 'vault.db'),
    GNEXUS_KEY_FILE: join(dir, 'vault.key'),
    GNEXUS_AUDIT_LOG: join(dir, 'vault-audit.jsonl'),
    LOG_LEVEL: 'ERROR',
    ...options.settings,
  });
  const services = await createServices(settings, {
    logger: options.logger ?? silentLogger(),
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.extraTools ? { extraTools: options.extraTools } : {}),
    ...(options.recallClock ? { recallClock: options.recallClock } : {}),
    ...(options.recallTimeZone ? { recallTimeZone: options.recallTimeZone } : {}),
  });
  const app = await buildApp(services);
  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    dir,
    services,
    app,
    wsUrl: (id) => `ws://127.0.0.1:${port}/ws/sessions/${id}`,
    async createSession(profileId) {
      const res = await fetch(`${url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(profileId ? { profile_id: profileId } : {}),
      });
      if (res.status !== 201) throw new Error(`POST /sessions answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { session_id: string }).session_id;
    },
    pair: () => pairClient(url, services.consent, services.settings.NAVI_API_TOKEN),
    async close() {
      await app.close();
      await services.close();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

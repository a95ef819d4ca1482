/**
 * Starts the server for the server tests: real SQLite stores in a temporary folder, real
 * profiles, a real port. The agent is either the real one (`createServices` against the fake
 * LLM server) or, for the relay mechanics that need exact control over events and timing, a
 * scripted `AgentApi` (see `scripted-agent.ts`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AgentApi } from '../../src/agent/types.js';
import { silentLogger } from '../../src/config/logger.js';
import { ProfileRegistry } from '../../src/config/profiles.js';
import { type SettingName, testSettings } from '../../src/config/settings.js';
import { type BuildAppOptions, buildApp } from '../../src/server/app.js';
import { lazyVault } from '../../src/server/lazy-vault.js';
import type { NaviServices } from '../../src/server/services.js';
import { createSqliteStores } from '../../src/store/sqlite/index.js';
import { ToolExecutor } from '../../src/tools/executor.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { SecretMasker } from '../../src/util/secret-masker.js';
import { openVault } from '../../src/vault/index.js';
import { repoRoot } from '../support/navi.js';
import { pairClient } from '../support/pairing.js';

export interface TestServer {
  app: FastifyInstance;
  services: NaviServices;
  dir: string;
  url: string;
  wsUrl(sessionId: string): string;
  createSession(profileId?: string): Promise<string>;
  /** Pairs a new client; resolves to the `Cookie` header value that carries consent. */
  pair(): Promise<string>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  agent: AgentApi;
  settings?: Partial<Record<SettingName, string>>;
  app?: BuildAppOptions;
}

export function scriptedServices(
  agent: AgentApi,
  dir: string,
  overrides: TestServerOptions['settings'] = {},
): NaviServices {
  const settings = testSettings({
    DB_PATH: join(dir, 'navi.db'),
    SESSION_FILES_DIR: join(dir, 'session_files'),
    PROFILES_DIR: join(repoRoot, 'profiles'),
    TOOLS_DIR: join(dir, 'tools'),
    LOG_LEVEL: 'ERROR',
    ...overrides,
  });
  const logger = silentLogger();
  const stores = createSqliteStores(settings.DB_PATH);
  const tools = new ToolRegistry();
  tools.register({
    source: 'builtin',
    tool: {
      name: 'echo',
      description: 'Repeats its input.',
      parameters: { type: 'object', properties: { text: { type: 'string' } } },
      execute: async (params) => ({ success: true, output: String(params.text) }),
    },
  });
  tools.setErrors('user', [{ origin: 'broken.ts', source: 'user', error: 'SyntaxError: nope' }]);
  return {
    settings,
    logger,
    sessions: stores.sessions,
    kv: stores.kv,
    files: stores.files,
    consent: stores.consent,
    search: stores.search,
    profiles: ProfileRegistry.fromDirectory(settings.PROFILES_DIR, settings.DEFAULT_PROFILE),
    tools,
    executor: new ToolExecutor({ registry: tools, settings, logger }),
    secrets: new SecretMasker(),
    vault: lazyVault(() =>
      openVault({
        path: join(dir, 'vault.db'),
        keyFile: join(dir, 'vault.key'),
        masterKey: '',
        auditLog: join(dir, 'vault-audit.jsonl'),
      }),
    ),
    agent,
    backendFor: () => {
      throw new Error('no LLM backend in scripted tests');
    },
    reloadTools: async () => ({ loaded: ['echo'], providers: [], errors: [] }),
    close: async () => stores.close(),
  };
}

export async function startServer(
  services: NaviServices,
  dir: string,
  appOptions: BuildAppOptions = {},
): Promise<TestServer> {
  const app = buildApp(services, { webDir: join(dir, 'no-web'), ...appOptions });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (services.settings.NAVI_API_TOKEN) headers.authorization = `Bearer ${services.settings.NAVI_API_TOKEN}`;
  return {
    app,
    services,
    dir,
    url,
    wsUrl: (id) => `ws://127.0.0.1:${port}/ws/sessions/${id}`,
    async createSession(profileId) {
      const res = await app.inject({
        method: 'POST',
        url: '/sessions',
        headers,
        payload: profileId ? { profile_id: profileId } : {},
      });
      if (res.statusCode !== 201) throw new Error(`POST /sessions answered ${res.statusCode}: ${res.body}`);
      return res.json<{ session_id: string }>().session_id;
    },
    pair: () => pairClient(url, services.consent, services.settings.NAVI_API_TOKEN),
    async close() {
      await app.close();
      await services.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A server whose agent is scripted (see `scripted-agent.ts`). */
export async function startScripted(options: TestServerOptions): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'navi-server-'));
  return startServer(scriptedServices(options.agent, dir, options.settings), dir, options.app);
}

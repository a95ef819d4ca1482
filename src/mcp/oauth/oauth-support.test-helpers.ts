/**
 * Set-up of the OAuth tests: a real vault in a temporary folder, a real McpManager whose
 * token store is that vault, and a "browser" that follows an authorisation page's redirect.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Logger, pino } from 'pino';
import { testSettings } from '../../config/settings.js';
import { ToolRegistry } from '../../tools/registry.js';
import { openVault } from '../../vault/index.js';
import type { Vault } from '../../vault/types.js';
import { fastTiming, toolContext, waitFor, writeConfig } from '../fixtures/harness.js';
import { McpManager } from '../manager.js';
import type { McpServerStatus, McpTimingOptions } from '../types.js';
import { VaultTokenStore } from './vault-token-store.js';

export const REDIRECT_BASE = 'http://127.0.0.1:8000';

export interface OAuthHarness {
  dir: string;
  serversDir: string;
  vault: Vault;
  manager: McpManager;
  registry: ToolRegistry;
  status(name?: string): McpServerStatus;
  waitForState(state: McpServerStatus['state'], name?: string): Promise<McpServerStatus>;
  call(tool: string, name?: string): Promise<{ success: boolean; output?: string; error?: string }>;
  close(): Promise<void>;
}

export function vaultOptions(dir: string, masterKey = '') {
  return {
    path: join(dir, 'vault.db'),
    keyFile: join(dir, 'vault.key'),
    masterKey,
    auditLog: join(dir, 'vault-audit.jsonl'),
  };
}

/** A manager over `configs` (file name → config), its tokens in a fresh vault. */
export async function oauthHarness(
  configs: Record<string, Record<string, unknown>>,
  options: { logger?: Logger; vault?: (dir: string) => Vault; timing?: Partial<McpTimingOptions> } = {},
): Promise<OAuthHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'navi-mcp-oauth-'));
  const serversDir = join(dir, 'servers');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(serversDir);
  for (const [file, config] of Object.entries(configs)) writeConfig(serversDir, file, config);
  const vault = options.vault?.(dir) ?? openVault(vaultOptions(dir));
  const registry = new ToolRegistry();
  const manager = new McpManager({
    registry,
    settings: testSettings({
      MCP_SERVERS_DIR: serversDir,
      MCP_SCAFFOLD_DIR: join(dir, 'scaffold'),
      TOOL_TIMEOUT_MS: '20000',
      TOOL_MAX_OUTPUT_CHARS: '50000',
    }),
    logger: options.logger ?? pino({ level: 'silent' }),
    timing: { ...fastTiming, backoffInitialMs: 50, backoffMaxMs: 100, ...options.timing },
    tokens: new VaultTokenStore(vault),
  });
  manager.start();
  await manager.ready();
  const first = Object.values(configs)[0]?.name as string;
  const status = (name = first) => {
    const s = manager.server(name);
    if (!s) throw new Error(`no server ${name}`);
    return s;
  };
  return {
    dir,
    serversDir,
    vault,
    manager,
    registry,
    status,
    async waitForState(state, name = first) {
      await waitFor(
        `${name} to be ${state} (is ${status(name).state}: ${status(name).last_error})`,
        () => status(name).state === state,
      );
      return status(name);
    },
    async call(tool, name = first) {
      const registered = status(name).tools.find((t) => t.endsWith(`__${tool}`));
      const entry = registered ? registry.get(registered) : undefined;
      if (!entry) throw new Error(`${tool} is not registered; have ${status(name).tools.join(', ')}`);
      return entry.tool.execute({}, toolContext());
    },
    async close() {
      await manager.close();
      vault.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The browser: opens the authorisation page and returns the redirect's query (no person asked). */
export async function visit(authorizationUrl: string): Promise<Record<string, string>> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (!location) throw new Error(`no redirect from ${authorizationUrl} (HTTP ${response.status})`);
  const back = new URL(location);
  if (!back.href.startsWith(`${REDIRECT_BASE}/agents/mcp/oauth/callback`))
    throw new Error(`redirected elsewhere: ${back.href}`);
  return Object.fromEntries(back.searchParams);
}

/**
 * The gnexus-creds server: the seven tools of the person's secrets vault on one MCP server. The
 * vault is opened once per process and shared by every session; a locked vault still serves,
 * and each tool then answers how to unlock it.
 */
import { isAbsolute, resolve } from 'node:path';
import { agentVault } from '../../vault/agent-vault.js';
import type { Vault } from '../../vault/types.js';
import { type ShippedToolServer, shippedToolServer } from '../common/run-server.js';
import { archiveSecretTool } from './tools/archive-secret.js';
import { createSecretTool } from './tools/create-secret.js';
import { getSecretTool } from './tools/get-secret.js';
import { revealSecretTool } from './tools/reveal-secret.js';
import { searchSecretsTool } from './tools/search-secrets.js';
import { setSecretStatusTool } from './tools/set-secret-status.js';
import { updateSecretTool } from './tools/update-secret.js';

export const GNEXUS_CREDS_NAME = 'gnexus-creds';

/**
 * The folder relative vault paths are resolved against: Navi's working folder, which Navi passes
 * as NAVI_CWD because it starts the server in the program folder; without it, this process's.
 */
export function vaultFolder(env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  const named = env.NAVI_CWD?.trim();
  if (!named) return cwd;
  return isAbsolute(named) ? named : resolve(cwd, named);
}

export function createGnexusCredsServer(vault: Vault): ShippedToolServer {
  // The tools see the vault without the records Navi keeps there for itself.
  const deps = { vault: agentVault(vault) };
  const tools = [
    searchSecretsTool(deps),
    getSecretTool(deps),
    revealSecretTool(deps),
    createSecretTool(deps),
    updateSecretTool(deps),
    setSecretStatusTool(deps),
    archiveSecretTool(deps),
  ];
  return shippedToolServer(GNEXUS_CREDS_NAME, tools, async () => vault.close());
}

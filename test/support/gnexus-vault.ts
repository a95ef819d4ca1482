/**
 * Test set-up for the gnexus-creds tools: a real vault in a temporary folder, and a way to call
 * a tool's handler as the SDK would, with the arguments checked by its own schema first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { testSettings } from '../../src/config/settings.js';
import type { ShippedToolServer } from '../../src/servers/common/run-server.js';
import { createGnexusCredsServer } from '../../src/servers/gnexus-creds/server.js';
import { openVault, type VaultOptions, vaultOptions } from '../../src/vault/index.js';
import type { Vault } from '../../src/vault/types.js';

export const MASTER_KEY = 'a test master key that is long enough';

/** The names of the seven gnexus-creds tools, sorted: what a client must be offered, no more. */
export const CREDS_TOOL_NAMES: readonly string[] = [
  'archive_secret',
  'create_secret',
  'get_secret',
  'reveal_secret',
  'search_secrets',
  'set_secret_status',
  'update_secret',
];

export interface TestVault {
  dir: string;
  options: VaultOptions;
  vault: Vault;
  creds: ShippedToolServer;
  /** Parses `args` with the tool's schema (throws on bad input), then runs its handler. */
  call(tool: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult>;
  remove(): void;
}

export function openTestVault(
  dir = mkdtempSync(join(tmpdir(), 'gnexus-creds-')),
  masterKey = MASTER_KEY,
): TestVault {
  // The default file names in `dir`, as Navi run in that folder would open them.
  const options = vaultOptions(testSettings({ GNEXUS_MASTER_KEY: masterKey }), dir);
  const vault = openVault(options);
  const creds = createGnexusCredsServer(vault);
  return {
    dir,
    options,
    vault,
    creds,
    async call(name, args, meta) {
      const tool = creds.tools.find((t) => t.name === name);
      if (!tool) throw new Error(`no tool ${name}`);
      const parsed = z.object(tool.inputSchema).parse(args);
      return tool.handler(parsed, new AbortController().signal, meta ? { meta } : undefined);
    },
    remove() {
      vault.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The text of a result's first content item. */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

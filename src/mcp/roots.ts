/**
 * The roots Navi offers MCP servers (docs/mcp.md#roots-resources-and-prompts): the folders of
 * FS_ALLOWED_PATHS as `file://` URIs. A server that asks (`roots/list`) learns where the person
 * lets Navi work, and a file server that honours roots narrows itself to them.
 *
 * `FS_ALLOWED_PATHS=*` offers no roots at all. It sets no bound, and `file:///` would not mean
 * "no bound" to a server: a file server started on one folder replaces its folders by the
 * client's roots, so offering `/` would widen it to the whole machine. With no roots every
 * server keeps the folders its own config gives it.
 */
import { homedir } from 'node:os';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListRootsRequestSchema, type Root } from '@modelcontextprotocol/sdk/types.js';
import { PathGuard } from '../machine/fs/path-guard.js';

export type { Root as McpRoot } from '@modelcontextprotocol/sdk/types.js';

const inHome = (path: string) => path === '~' || path.startsWith('~/');

/**
 * The roots of FS_ALLOWED_PATHS, without duplicates: the very folders the file tools' PathGuard
 * is confined to (`~` expanded, links resolved), relative paths resolved against `cwd`.
 */
export function rootsOfAllowedPaths(paths: readonly string[], cwd = process.cwd(), home = homedir()): Root[] {
  if (paths.includes('*')) return [];
  const guard = new PathGuard({ roots: paths.map((p) => (inHome(p) ? p : resolve(cwd, p))), home });
  const roots = new Map<string, Root>();
  for (const absolute of guard.roots) {
    const uri = pathToFileURL(absolute).href;
    if (!roots.has(uri)) roots.set(uri, { uri, name: basename(absolute) || absolute });
  }
  return [...roots.values()];
}

/**
 * Answers the server's `roots/list` with what `source` returns at that moment. The client must
 * declare the `roots` capability, or the SDK refuses the handler.
 */
export function answerRoots(client: Client, source: () => Root[]): void {
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: source() }));
}

/**
 * The one PathGuard every file-touching tool shares, built from the settings: FS_ALLOWED_PATHS
 * as roots, Navi's private data hidden, and the folders that decide what Navi runs or may do
 * kept read-only, so a file write can never bypass the tools that ask the user first.
 */
import { resolve } from 'node:path';
import type { Settings } from '../../config/settings.js';
import { PathGuard } from './path-guard.js';

export type NaviPathSettings = Pick<
  Settings,
  | 'FS_ALLOWED_PATHS'
  | 'DB_PATH'
  | 'SSH_HOSTS_FILE'
  | 'TOOLS_DIR'
  | 'CONTEXT_PROVIDERS_DIR'
  | 'MCP_SERVERS_DIR'
  | 'PROFILES_DIR'
>;

/** The database (with its -wal, -shm and -journal files), `.env` and the SSH hosts file. */
export function naviSecretFiles(input: { dbPath: string; sshHostsFile: string; cwd: string }): string[] {
  const db = resolve(input.cwd, input.dbPath);
  return [
    db,
    `${db}-wal`,
    `${db}-shm`,
    `${db}-journal`,
    resolve(input.cwd, '.env'),
    resolve(input.cwd, input.sshHostsFile),
  ];
}

/** `extraHidden`: more private files, such as the SSH keys the hosts file names. */
export function naviPathGuard(
  settings: NaviPathSettings,
  cwd = process.cwd(),
  extraHidden: readonly string[] = [],
): PathGuard {
  const at = (p: string) => resolve(cwd, p);
  return new PathGuard({
    roots: settings.FS_ALLOWED_PATHS,
    hidden: [
      ...naviSecretFiles({ dbPath: settings.DB_PATH, sshHostsFile: settings.SSH_HOSTS_FILE, cwd }),
      ...extraHidden.map(at),
    ],
    readOnly: [
      {
        path: at(settings.TOOLS_DIR),
        why: 'the user tools folder: add or change a tool with write_tool, which asks the user first.',
      },
      {
        path: at(settings.CONTEXT_PROVIDERS_DIR),
        why: 'the context providers folder, which shapes every system prompt; only the user edits it.',
      },
      {
        path: at(settings.MCP_SERVERS_DIR),
        why: 'the MCP server configs: create a server with create_mcp_server, which shows the user its command first.',
      },
      {
        path: at(settings.PROFILES_DIR),
        why: 'the profiles, which decide what the agent may do; only the user edits them.',
      },
    ],
  });
}

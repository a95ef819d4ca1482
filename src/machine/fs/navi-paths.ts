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
  | 'MCP_SCAFFOLD_DIR'
  | 'PROFILES_DIR'
>;

/** The folder Navi runs from (its package: `src`, `bin`, `node_modules`, the web client). */
export const naviProgramFolder = resolve(import.meta.dirname, '../../..');

/**
 * Folders whose content decides what Navi runs or may do. Nothing the agent starts may change
 * them, through a file tool or a sandboxed command: that would grant it what only the person
 * grants (a tool, an MCP server, a profile's autonomy) or run its code with Navi's rights at the
 * next start.
 */
export function naviControlFolders(
  settings: Omit<NaviPathSettings, 'FS_ALLOWED_PATHS' | 'DB_PATH' | 'SSH_HOSTS_FILE'>,
  cwd = process.cwd(),
): { path: string; why: string }[] {
  const at = (p: string) => resolve(cwd, p);
  return [
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
      path: at(settings.MCP_SCAFFOLD_DIR),
      why: 'the code of MCP servers the user approved; a change there would run unapproved code. Create a new server with create_mcp_server instead.',
    },
    {
      path: at(settings.PROFILES_DIR),
      why: 'the profiles, which decide what the agent may do; only the user edits them.',
    },
    {
      path: naviProgramFolder,
      why: "Navi's own program folder; a change there would run with Navi's rights at its next start. Work in another folder.",
    },
  ];
}

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
    readOnly: naviControlFolders(settings, cwd),
  });
}

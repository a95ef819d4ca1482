/**
 * The one PathGuard every file-touching tool shares, built from the settings: FS_ALLOWED_PATHS
 * as roots, Navi's private data hidden, and the folders that decide what Navi runs or may do
 * kept read-only, so a file write can never bypass the tools that ask the user first.
 */
import { resolve } from 'node:path';
import { backupsDir } from '../../config/data-location.js';
import { ownedSettingsPath } from '../../config/owned-settings.js';
import type { Settings } from '../../config/settings.js';
import { pendingKeyFile } from '../../vault/key-source.js';
import { PathGuard } from './path-guard.js';

/** The settings that name Navi's private files (`naviSecretFiles`). */
export type NaviSecretFileSettings = Pick<
  Settings,
  | 'DB_PATH'
  | 'SSH_HOSTS_FILE'
  | 'GNEXUS_VAULT_PATH'
  | 'GNEXUS_KEY_FILE'
  | 'GNEXUS_AUDIT_LOG'
  | 'NAVI_DATA_DIR'
>;

/** The settings that name the folders deciding what Navi runs (`naviControlFolders`). */
export type NaviControlFolderSettings = Pick<
  Settings,
  'TOOLS_DIR' | 'CONTEXT_PROVIDERS_DIR' | 'MCP_SERVERS_DIR' | 'MCP_SCAFFOLD_DIR' | 'PROFILES_DIR'
>;

export type NaviPathSettings = Pick<Settings, 'FS_ALLOWED_PATHS'> &
  NaviSecretFileSettings &
  NaviControlFolderSettings;

/** The folder Navi runs from (its package: `src`, `bin`, `node_modules`, the web client). */
export const naviProgramFolder = resolve(import.meta.dirname, '../../..');

/**
 * Folders whose content decides what Navi runs or may do. Nothing the agent starts may change
 * them, through a file tool or a sandboxed command: that would grant it what only the person
 * grants (a tool, an MCP server, a profile's autonomy) or run its code with Navi's rights at the
 * next start.
 */
export function naviControlFolders(
  settings: NaviControlFolderSettings,
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

/**
 * The files SQLite keeps beside the database `path`. They belong to it: a `-wal` left behind
 * would be replayed into whatever database takes the name next.
 */
export function journalsOf(path: string): string[] {
  return [`${path}-wal`, `${path}-shm`, `${path}-journal`];
}

const withJournals = (db: string) => [db, ...journalsOf(db)];

/**
 * The database (with its -wal, -shm and -journal files), `.env`, the SSH hosts file, the
 * settings file Navi owns (it may hold an API key, and names the servers conversations go to),
 * the vault: its database, its key file (with the one a key rotation writes beside it) and
 * its audit log, and the backups folder in the data folder, which holds copies of them all.
 */
export function naviSecretFiles(settings: NaviSecretFileSettings, cwd = process.cwd()): string[] {
  const at = (p: string) => resolve(cwd, p);
  const keyFile = at(settings.GNEXUS_KEY_FILE);
  return [
    ...withJournals(at(settings.DB_PATH)),
    at('.env'),
    ownedSettingsPath(at(settings.NAVI_DATA_DIR)),
    at(settings.SSH_HOSTS_FILE),
    ...withJournals(at(settings.GNEXUS_VAULT_PATH)),
    keyFile,
    pendingKeyFile(keyFile),
    at(settings.GNEXUS_AUDIT_LOG),
    backupsDir(at(settings.NAVI_DATA_DIR)),
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
    hidden: [...naviSecretFiles(settings, cwd), ...extraHidden.map(at)],
    readOnly: naviControlFolders(settings, cwd),
  });
}

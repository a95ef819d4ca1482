/**
 * The MCP servers that ship with Navi (navi-web…): their configs live in the program's
 * `mcp_servers.shipped/`, apart from the user's MCP_SERVERS_DIR and from the folder where
 * `create_mcp_server` scaffolds the user's own servers. A config may name `${NODE}` (this Node
 * binary), `${NAVI_HOME}` (the program folder), `${NAVI_CWD}` (the folder Navi runs in, against
 * which its relative paths such as DB_PATH resolve) and any setting (`${SEARXNG_URL}`), so a
 * server reads the same settings as Navi without inheriting Navi's environment.
 *
 * A shipped server starts as `${NODE} bin/navi-run.js src/servers/<name>/main.ts`: its compiled
 * copy in dist/ when `npm run build` is current, its TypeScript through tsx when not (a fresh
 * clone, an edited source), so the server never runs stale code and needs no build to run.
 */
import { join } from 'node:path';
import { isSettingName, type Settings, settingText } from '../config/settings.js';
import { naviProgramFolder } from '../machine/fs/navi-paths.js';

export const SHIPPED_SERVERS_DIR = join(naviProgramFolder, 'mcp_servers.shipped');

export function shippedPlaceholders(settings: Settings): (name: string) => string | undefined {
  return (name) => {
    if (name === 'NODE') return process.execPath;
    if (name === 'NAVI_HOME') return naviProgramFolder;
    // Servers start in the program folder (their code is there); this tells them where Navi's
    // relative paths point, so a relative GNEXUS_VAULT_PATH means the same file to both.
    if (name === 'NAVI_CWD') return process.cwd();
    return isSettingName(name) ? settingText(settings, name) : undefined;
  };
}

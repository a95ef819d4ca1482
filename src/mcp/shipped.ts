/**
 * The MCP servers that ship with Navi (navi-web…): their configs live in the program's
 * `mcp_servers.shipped/`, apart from the user's MCP_SERVERS_DIR and from the folder where
 * `create_mcp_server` scaffolds the user's own servers. A config may name `${NODE}` (this Node
 * binary), `${NAVI_HOME}` (the program folder) and any setting (`${SEARXNG_URL}`), so a server
 * reads the same settings as Navi without inheriting Navi's environment.
 */
import { join } from 'node:path';
import { isSettingName, type Settings, settingText } from '../config/settings.js';
import { naviProgramFolder } from '../machine/fs/navi-paths.js';

export const SHIPPED_SERVERS_DIR = join(naviProgramFolder, 'mcp_servers.shipped');

export function shippedPlaceholders(settings: Settings): (name: string) => string | undefined {
  return (name) => {
    if (name === 'NODE') return process.execPath;
    if (name === 'NAVI_HOME') return naviProgramFolder;
    return isSettingName(name) ? settingText(settings, name) : undefined;
  };
}

/**
 * The navi-ui process: `node --import tsx src/servers/navi-ui/main.ts [--http <port>]`. It needs
 * no settings of its own; a bad command line stops it with a message and exit code 1.
 */
import { runShippedServer } from '../common/run-server.js';
import { createNaviUiServer, NAVI_UI_NAME } from './server.js';

process.exitCode = await runShippedServer(NAVI_UI_NAME, () => createNaviUiServer());

/**
 * The navi-web process: `node --import tsx src/servers/navi-web/main.ts [--http <port>]`.
 * Settings come from its environment (Navi passes them); a bad one stops it with a message on
 * stderr and exit code 1, before anything is served.
 */
import { runShippedServer } from '../common/run-server.js';
import { createNaviWebServer, NAVI_WEB_NAME } from './server.js';

process.exitCode = await runShippedServer(NAVI_WEB_NAME, (settings) => createNaviWebServer(settings));

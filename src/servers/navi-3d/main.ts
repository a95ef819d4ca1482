/**
 * The navi-3d process: `node --import tsx src/servers/navi-3d/main.ts [--http <port>]`.
 * Settings come from its environment (Navi passes them); a bad one stops it with a message on
 * stderr and exit code 1. It starts without OpenSCAD or Xvfb too: its tools then say what is
 * missing and how to install it.
 */
import { runShippedServer } from '../common/run-server.js';
import { createNavi3dServer, NAVI_3D_NAME, naviCwd } from './server.js';

process.exitCode = await runShippedServer(NAVI_3D_NAME, (settings) =>
  createNavi3dServer(settings, { cwd: naviCwd(process.env) }),
);

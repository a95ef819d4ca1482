/**
 * The navi-3d server: `lint_scad`, `compile_scad` and `render_stl` on one MCP server. Files it
 * makes go back in its results (an STL as an embedded resource, pictures as images), each named
 * in its `_meta`, and Navi saves them among the calling session's files. The one Xvfb that
 * render_stl draws on is shared by every session and stopped with the server.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Settings } from '../../config/settings.js';
import { programIn } from '../../machine/system/find-3d-programs.js';
import { type ShippedToolServer, shippedToolServer } from '../common/run-server.js';
import { compileScadTool } from './compile-scad.js';
import { createContext, type Navi3dContext } from './context.js';
import { lintScadTool } from './lint-scad.js';
import { renderStlTool } from './render-stl.js';

export const NAVI_3D_NAME = 'navi-3d';

export interface Navi3dServer extends ShippedToolServer {
  /** The shared state of the tools (tests look at its Xvfb). */
  readonly context: Navi3dContext;
}

/**
 * The folder relative paths (SESSION_FILES_DIR, OPENSCAD_PATH, XVFB_PATH) resolve against:
 * Navi's working folder, which Navi passes as NAVI_CWD because it starts the server in the
 * program folder.
 */
export function naviCwd(env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  const named = env.NAVI_CWD?.trim();
  if (!named) return cwd;
  return isAbsolute(named) ? named : resolve(cwd, named);
}

export function createNavi3dServer(
  settings: Settings,
  options: { cwd: string; onSpawn?: (pid: number) => void },
): Navi3dServer {
  const programs = {
    OPENSCAD_PATH: programIn(settings.OPENSCAD_PATH, options.cwd),
    XVFB_PATH: programIn(settings.XVFB_PATH, options.cwd),
  };
  const context = createContext(
    { ...settings, ...programs },
    resolve(options.cwd, settings.SESSION_FILES_DIR),
    options.onSpawn,
  );
  const tools = [lintScadTool(context), compileScadTool(context), renderStlTool(context)];
  return { ...shippedToolServer(NAVI_3D_NAME, tools, () => context.display.close()), context };
}

/**
 * Where OpenSCAD and Xvfb are, for the navi-3d server (which compiles with one and renders
 * under the other) and for `navi doctor`, which warns when either is missing. OPENSCAD_PATH and
 * XVFB_PATH name a program on PATH or a path to one.
 */
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Settings } from '../../config/settings.js';
import { executable } from './executable.js';

/** How to get both programs on Debian and Ubuntu. */
export const INSTALL_3D_PROGRAMS = 'apt-get install openscad xvfb xauth';

export interface ProgramStatus {
  available: boolean;
  /** The executable found, when it was. */
  path?: string;
  /** Why it is not available: what was looked for, and how to install it. */
  reason?: string;
}

/**
 * A program setting as seen from `folder`: a relative path (`bin/openscad`) becomes absolute
 * against it; a bare name stays a name, to be looked up on PATH. A process that does not run
 * in Navi's working folder (the navi-3d server) reads the setting as Navi and `navi doctor` do.
 */
export function programIn(configured: string, folder: string): string {
  return configured.includes('/') && !isAbsolute(configured) ? resolve(folder, configured) : configured;
}

/** `configured` when it is a path to an executable, else the first of that name on `searchPath`. */
export function findExecutable(configured: string, searchPath = process.env.PATH ?? ''): string | undefined {
  if (configured.includes('/')) {
    const path = isAbsolute(configured) ? configured : resolve(configured);
    return executable(path) ? path : undefined;
  }
  return searchPath
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, configured))
    .find(executable);
}

function status(setting: string, configured: string, what: string): ProgramStatus {
  const path = findExecutable(configured);
  if (path) return { available: true, path };
  const where = configured.includes('/')
    ? `no executable file is at ${configured}`
    : `no program ${configured} is on PATH`;
  return {
    available: false,
    reason: `${what} is not installed here (${setting} is ${configured}, and ${where}). Install it with ${INSTALL_3D_PROGRAMS}, or set ${setting} to where it is.`,
  };
}

export function findOpenscad(settings: Pick<Settings, 'OPENSCAD_PATH'>): ProgramStatus {
  return status('OPENSCAD_PATH', settings.OPENSCAD_PATH, 'OpenSCAD');
}

export function findXvfb(settings: Pick<Settings, 'XVFB_PATH'>): ProgramStatus {
  return status('XVFB_PATH', settings.XVFB_PATH, 'Xvfb (the virtual screen OpenSCAD renders images on)');
}

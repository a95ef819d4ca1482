/**
 * Where the system Chromium is. Navi drives the distribution's browser (`apt-get install
 * chromium`) rather than downloading one of its own; CHROMIUM_PATH names another binary. Used by
 * navi-web's web_view and by `navi doctor`, which warns when there is none.
 */
import { delimiter, join } from 'node:path';
import { executable } from '../system/executable.js';

/** Flags for a headless Chromium that runs unattended: no GPU, no sync, no updates, no first-run UI. */
export const HEADLESS_CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/lib/chromium/chromium',
  '/snap/bin/chromium',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];
const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

export interface ChromiumStatus {
  available: boolean;
  path?: string;
  reason?: string;
}

/** The Chromium to use: CHROMIUM_PATH when set, else the first one found in the usual places and on PATH. */
export function findChromium(configured: string): ChromiumStatus {
  if (configured) {
    return executable(configured)
      ? { available: true, path: configured }
      : {
          available: false,
          path: configured,
          reason: `CHROMIUM_PATH is ${configured}, but no executable file is there; fix the path or leave it empty to search the usual places.`,
        };
  }
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .flatMap((dir) => NAMES.map((name) => join(dir, name)));
  const found = [...CANDIDATES, ...onPath].find(executable);
  return found
    ? { available: true, path: found }
    : {
        available: false,
        reason:
          'no Chromium was found (looked for chromium, chromium-browser and google-chrome); install one or set CHROMIUM_PATH.',
      };
}

/**
 * Pairing codes for the person's browser: `navi serve` makes one at start and `navi pair` makes
 * a fresh one, both through the database (the SQLite file or PostgreSQL), so the server need not
 * be asked. The code travels in
 * the URL fragment, which browsers never send to a server, so it stays out of request logs.
 */
import type { Settings } from '../config/settings.js';
import { type OpenedStores, openStores } from '../store/open-stores.js';
import type { ConsentStore } from '../store/types.js';

/** How long a code from `navi pair` or `navi serve` can be used. */
export const PAIRING_CODE_TTL_MS = 10 * 60_000;

/** The address a browser on this machine can open: a wildcard host becomes loopback. */
export function pairingLink(host: string, port: number, code: string): string {
  let name = host;
  if (name === '0.0.0.0' || name === '::' || name === '[::]') name = '127.0.0.1';
  else if (name.includes(':') && !name.startsWith('[')) name = `[${name}]`;
  return `http://${name}:${port}/#pair=${code}`;
}

/** The sentence shown to the person with a new link. */
export function pairingInstruction(link: string): string {
  return `Open ${link} to use Navi (and approve its actions) from this browser`;
}

/** Creates a code in `store` and returns the sentence that tells the person how to use it. */
export async function newPairingInstruction(
  store: ConsentStore,
  host: string,
  port: number,
): Promise<string> {
  const code = await store.createPairingCode(PAIRING_CODE_TTL_MS);
  return pairingInstruction(pairingLink(host, port, code));
}

/**
 * `navi pair`: prints a fresh link; `navi pair --unpair-all` forgets every paired browser
 * instead (a lost laptop, a leaked cookie). Returns the exit code.
 */
export async function runPair(
  settings: Pick<Settings, 'DB_PATH' | 'DATABASE_URL' | 'NAVI_HOST' | 'NAVI_PORT' | 'NAVI_API_TOKEN'>,
  args: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const unknown = args.filter((a) => a !== '--unpair-all');
  if (unknown.length > 0) {
    err.write(`navi pair: unknown option "${unknown[0]}"; use no option, or --unpair-all\n`);
    return 2;
  }
  // The same store navi serve uses: the SQLite file, or PostgreSQL when DATABASE_URL is set.
  let stores: OpenedStores;
  try {
    stores = await openStores(settings);
  } catch (error) {
    err.write(`navi pair: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  try {
    if (args.includes('--unpair-all')) {
      const count = await stores.consent.unpairAll();
      out.write(`Forgot ${count} paired browser${count === 1 ? '' : 's'}; pair again with navi pair.\n`);
      return 0;
    }
    const line = await newPairingInstruction(stores.consent, settings.NAVI_HOST, settings.NAVI_PORT);
    const minutes = PAIRING_CODE_TTL_MS / 60_000;
    out.write(`${line}.\nThe link works once, within ${minutes} minutes.\n`);
    if (settings.NAVI_API_TOKEN !== '')
      out.write('NAVI_API_TOKEN is set: a browser signed in with the token already has consent.\n');
    return 0;
  } finally {
    await stores.close();
  }
}

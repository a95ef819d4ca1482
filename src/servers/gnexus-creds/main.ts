/**
 * The gnexus-creds process: `node --import tsx src/servers/gnexus-creds/main.ts [--http <port>]`.
 * Settings come from its environment (Navi passes them); a bad one stops it with a message on
 * stderr and exit code 1. Navi starts it in the program folder and names its own working folder
 * in NAVI_CWD, against which relative vault paths resolve, so both open the same vault file.
 */
import { loadSettings, SettingsError } from '../../config/settings.js';
import { openVault, vaultOptions } from '../../vault/index.js';
import { type Vault, VaultError } from '../../vault/types.js';
import { parseServeArgs, serve, UsageError } from '../common/serve.js';
import { createGnexusCredsServer, GNEXUS_CREDS_NAME, vaultFolder } from './server.js';

/** After shutdown, a handle something forgot to release must not keep the process alive. */
const EXIT_GRACE_MS = 2000;

async function main(): Promise<number> {
  let mode: ReturnType<typeof parseServeArgs>;
  let settings: ReturnType<typeof loadSettings>;
  try {
    mode = parseServeArgs(process.argv.slice(2));
    settings = loadSettings(process.env);
  } catch (err) {
    if (err instanceof UsageError || err instanceof SettingsError) {
      process.stderr.write(`${GNEXUS_CREDS_NAME}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  let vault: Vault;
  try {
    // A missing or wrong key opens a locked vault: the tools then say how to unlock it.
    vault = openVault(vaultOptions(settings, vaultFolder(process.env)));
  } catch (err) {
    // Anything else (a damaged file, a folder it may not write) is for the person to fix.
    if (!(err instanceof VaultError)) throw err;
    process.stderr.write(`${GNEXUS_CREDS_NAME}: cannot open the vault: ${err.message}\n`);
    return 1;
  }
  const creds = createGnexusCredsServer(vault);
  let handle: Awaited<ReturnType<typeof serve>>;
  try {
    handle = await serve({ mode, createServer: () => creds.createServer(), onClose: () => creds.close() });
  } catch (err) {
    process.stderr.write(`${GNEXUS_CREDS_NAME}: cannot serve: ${(err as Error).message}\n`);
    await creds.close();
    return 1;
  }
  await handle.closed;
  setTimeout(() => process.exit(0), EXIT_GRACE_MS).unref();
  return 0;
}

process.exitCode = await main();

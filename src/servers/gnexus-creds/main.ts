/**
 * The gnexus-creds process: `node --import tsx src/servers/gnexus-creds/main.ts [--http <port>]`.
 * Settings come from its environment (Navi passes them); a bad one stops it with a message on
 * stderr and exit code 1. Navi starts it in the program folder and names its own working folder
 * in NAVI_CWD, against which relative vault paths resolve, so both open the same vault file.
 */
import { openVault, vaultOptions } from '../../vault/index.js';
import { type Vault, VaultError } from '../../vault/types.js';
import { runShippedServer } from '../common/run-server.js';
import { createGnexusCredsServer, GNEXUS_CREDS_NAME, vaultFolder } from './server.js';

process.exitCode = await runShippedServer(GNEXUS_CREDS_NAME, (settings) => {
  let vault: Vault;
  try {
    // A missing or wrong key opens a locked vault: the tools then say how to unlock it.
    vault = openVault(vaultOptions(settings, vaultFolder(process.env)));
  } catch (err) {
    // Anything else (a damaged file, a folder it may not write) is for the person to fix.
    if (!(err instanceof VaultError)) throw err;
    return `cannot open the vault: ${err.message}`;
  }
  return createGnexusCredsServer(vault);
});

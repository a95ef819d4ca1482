/**
 * `navi vault status | rotate-key | export <file> | import <file>`. Keys and passphrases come
 * from the environment or, on a terminal, a prompt that does not echo; never from the command
 * line, where other users of the machine and the shell history would see them.
 */
import { existsSync } from 'node:fs';
import type { Settings } from '../config/settings.js';
import { exportVault, importVault, MIN_PASSPHRASE, rotateVaultKey, vaultOptions } from '../vault/index.js';
import { openUnlockedVault } from '../vault/open-vault.js';

export const VAULT_USAGE = `Usage: navi vault <command>

Commands:
  status         whether the vault is unlocked, where its files are, how many secrets it holds
  rotate-key     wrap the vault's key under a new master key (a new key file, or the key in
                 GNEXUS_NEW_MASTER_KEY when GNEXUS_MASTER_KEY holds the current one)
  export <file>  write an encrypted backup of every secret to <file>
  import <file>  merge an encrypted backup into the vault (newer copies win)

The backup passphrase comes from GNEXUS_BACKUP_PASSPHRASE or, in a terminal, a prompt.`;

export interface VaultIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadStream;
}

class UsageError extends Error {}

/** Runs one `navi vault` command; returns the exit code (0 done, 1 refused or failed). */
export async function runVault(
  settings: Settings,
  args: string[],
  env: Readonly<Record<string, string | undefined>>,
  io: VaultIo,
): Promise<number> {
  const [command, ...rest] = args;
  const say = (line: string) => io.stdout.write(`${line}\n`);
  try {
    if (command === undefined || command === 'help' || command === '--help') {
      say(VAULT_USAGE);
      return command === undefined ? 1 : 0;
    }
    const options = vaultOptions(settings);
    const noArgs = () => {
      if (rest.length > 0)
        throw new UsageError(`navi vault ${command} takes no arguments; run navi vault help`);
    };
    const fileArg = () => {
      if (rest.length !== 1 || rest[0]?.startsWith('-'))
        throw new UsageError(
          `navi vault ${command} takes one file name and nothing else (the passphrase comes from GNEXUS_BACKUP_PASSPHRASE or a prompt)`,
        );
      return rest[0] as string;
    };
    switch (command) {
      case 'status': {
        noArgs();
        if (!existsSync(options.path)) {
          say(`No vault yet at ${options.path}: Navi creates it the first time a secret is stored.`);
          return 0;
        }
        const vault = openUnlockedVault(options);
        try {
          const state = vault.status();
          const counts = vault.counts();
          say(`The vault ${options.path} is unlocked.`);
          say(
            state.state === 'unlocked' && state.keySource === 'env'
              ? 'Its key comes from GNEXUS_MASTER_KEY.'
              : `Its key is in ${options.keyFile}; keep a copy of that file somewhere safe.`,
          );
          say(`It holds ${counts.active} secrets in use and ${counts.archived} archived.`);
          say(`Audit log: ${options.auditLog}`);
        } finally {
          vault.close();
        }
        return 0;
      }
      case 'rotate-key': {
        noArgs();
        const next = env.GNEXUS_NEW_MASTER_KEY;
        const result = rotateVaultKey(options, next);
        say(`The vault's key was rotated; ${result.nextStep}.`);
        return 0;
      }
      case 'export': {
        const file = fileArg();
        const passphrase = await passphraseFor(env, io, true);
        const result = exportVault(options, file, passphrase);
        say(
          `Wrote ${result.secrets} secrets, encrypted, to ${result.file}. Keep the passphrase: nothing opens the file without it.`,
        );
        return 0;
      }
      case 'import': {
        const file = fileArg();
        const passphrase = await passphraseFor(env, io, false);
        const counts = importVault(options, file, passphrase);
        say(
          `Imported ${file}: ${counts.added} added, ${counts.updated} updated, ${counts.skipped} kept (the vault's copy was as new or newer).`,
        );
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"; run navi vault help`);
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`navi vault: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    return 1;
  }
}

/** GNEXUS_BACKUP_PASSPHRASE, else a hidden prompt (twice when exporting, to catch a typo). */
async function passphraseFor(
  env: Readonly<Record<string, string | undefined>>,
  io: VaultIo,
  confirm: boolean,
): Promise<string> {
  const fromEnv = env.GNEXUS_BACKUP_PASSPHRASE;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  if (!io.stdin.isTTY)
    throw new UsageError(
      'no backup passphrase: set GNEXUS_BACKUP_PASSPHRASE, or run the command in a terminal to be asked for it',
    );
  const first = await hiddenPrompt(
    io,
    `Backup passphrase${confirm ? ` (at least ${MIN_PASSPHRASE} characters)` : ''}: `,
  );
  if (!confirm) return first;
  const second = await hiddenPrompt(io, 'The same passphrase again: ');
  if (first !== second) throw new UsageError('the two passphrases differ; run the command again');
  return first;
}

/** Reads one line from the terminal without echoing it. */
function hiddenPrompt(io: VaultIo, prompt: string): Promise<string> {
  const { stdin, stderr } = io;
  stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new UsageError('cancelled'));
        if (ch === '\u0004' && value === '') return done(new UsageError('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

/**
 * `navi vault` run as a real child process on real vault files: status, key rotation, encrypted
 * export and import, and every refusal as one line on stderr with exit code 1.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { openVault, type VaultOptions } from '../../src/vault/index.js';
import { useTempVault } from '../../src/vault/test-support.js';
import { expectCliRefusal } from '../support/cli-refusal.js';
import { type NaviRun, runNavi } from '../support/navi-process.js';

const expectRefusal = (run: NaviRun, ...parts: string[]) => expectCliRefusal(run, 'vault', ...parts);

const passphrase = 'a long enough backup passphrase';
// vault.db, vault.key and vault-audit.jsonl in the folder the CLI runs in: the settings'
// defaults, resolved against the working folder as the CLI does.
const t = useTempVault({ open: false });
let dir: string;
let options: VaultOptions;

beforeEach(() => {
  dir = t.dir;
  options = t.options();
});

function seed(opts: VaultOptions = options): string {
  const vault = openVault(opts);
  try {
    const id = vault.create(
      {
        name: 'Router',
        type: 'password',
        fields: [{ name: 'password', value: 'router-pass-42', secret: true }],
      },
      { actor: 'user' },
    ).id;
    const old = vault.create(
      { name: 'Old', type: 'note', fields: [{ name: 'text', value: 'x', secret: true }] },
      { actor: 'user' },
    );
    vault.archive(old.id, { actor: 'user' });
    return id;
  } finally {
    vault.close();
  }
}

function reveal(id: string, opts: VaultOptions = options): string {
  const vault = openVault(opts);
  try {
    return vault.reveal(id, 'password', { actor: 'user' });
  } finally {
    vault.close();
  }
}

describe('navi vault', () => {
  it('is listed in the help and explains itself', async () => {
    expect((await runNavi(['help'], {}, dir)).stdout).toContain('vault');
    const help = await runNavi(['vault', 'help'], {}, dir);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('rotate-key');
    expectRefusal(
      await runNavi(['vault', 'frobnicate'], {}, dir),
      'unknown command "frobnicate"',
      'navi vault help',
    );
    expectRefusal(await runNavi(['vault', 'status', 'extra'], {}, dir), 'takes no arguments');
  }, 60_000);

  it('status: no vault yet, then unlocked with its counts, then locked with what to do', async () => {
    const none = await runNavi(['vault', 'status'], {}, dir);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain(`No vault yet at ${options.path}`);
    expect(existsSync(options.path)).toBe(false);

    seed();
    const status = await runNavi(['vault', 'status'], {}, dir);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`The vault ${options.path} is unlocked.`);
    expect(status.stdout).toContain(`Its key is in ${options.keyFile}`);
    expect(status.stdout).toContain('1 secrets in use and 1 archived');

    const locked = await runNavi(['vault', 'status'], { GNEXUS_MASTER_KEY: 'not the key' }, dir);
    expectRefusal(locked, 'the vault is locked', 'set GNEXUS_MASTER_KEY', 'restart Navi');
  }, 60_000);

  it('rotate-key: a new key file; the vault opens with it and the values are intact', async () => {
    const id = seed();
    const before = readFileSync(options.keyFile, 'utf8');
    const run = await runNavi(['vault', 'rotate-key'], {}, dir);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`the key file ${options.keyFile} now holds the new key`);
    expect(readFileSync(options.keyFile, 'utf8')).not.toBe(before);
    expect(reveal(id)).toBe('router-pass-42');
    const withOldKey = openVault({ ...options, masterKey: before.trim() });
    expect(withOldKey.status().state).toBe('locked');
    withOldKey.close();
  }, 60_000);

  it('rotate-key with GNEXUS_MASTER_KEY needs GNEXUS_NEW_MASTER_KEY, then tells to update the setting', async () => {
    const envOptions = { ...options, masterKey: 'the first master key' };
    const id = seed(envOptions);
    expectRefusal(
      await runNavi(['vault', 'rotate-key'], { GNEXUS_MASTER_KEY: 'the first master key' }, dir),
      'GNEXUS_NEW_MASTER_KEY',
    );
    const run = await runNavi(
      ['vault', 'rotate-key'],
      { GNEXUS_MASTER_KEY: 'the first master key', GNEXUS_NEW_MASTER_KEY: 'the second master key' },
      dir,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('set GNEXUS_MASTER_KEY to the new key');
    expect(run.stdout).not.toContain('the second master key');
    expect(reveal(id, { ...options, masterKey: 'the second master key' })).toBe('router-pass-42');
    const withOldKey = openVault(envOptions);
    expect(withOldKey.status().state).toBe('locked');
    withOldKey.close();
  }, 60_000);

  it('export and import: a round trip into another vault, and the refusals', async () => {
    const id = seed();
    const file = join(dir, 'backup.json');
    expectRefusal(await runNavi(['vault', 'export', file], {}, dir), 'GNEXUS_BACKUP_PASSPHRASE');
    expectRefusal(
      await runNavi(['vault', 'export', file], { GNEXUS_BACKUP_PASSPHRASE: 'short' }, dir),
      'at least 12 characters',
    );
    expectRefusal(
      await runNavi(
        ['vault', 'export', file, '--passphrase', 'x'],
        { GNEXUS_BACKUP_PASSPHRASE: passphrase },
        dir,
      ),
      'takes one file name',
    );
    expectRefusal(
      await runNavi(['vault', 'export'], { GNEXUS_BACKUP_PASSPHRASE: passphrase }, dir),
      'one file name',
    );
    expect(existsSync(file)).toBe(false);

    const exported = await runNavi(
      ['vault', 'export', 'backup.json'],
      { GNEXUS_BACKUP_PASSPHRASE: passphrase },
      dir,
    );
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain(`Wrote 2 secrets, encrypted, to ${file}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain('router-pass-42');

    const other = { GNEXUS_VAULT_PATH: 'other/vault.db', GNEXUS_KEY_FILE: 'other/vault.key' };
    expectRefusal(
      await runNavi(
        ['vault', 'import', file],
        { ...other, GNEXUS_BACKUP_PASSPHRASE: 'the wrong passphrase' },
        dir,
      ),
      'the passphrase does not open',
    );
    const imported = await runNavi(
      ['vault', 'import', file],
      { ...other, GNEXUS_BACKUP_PASSPHRASE: passphrase },
      dir,
    );
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('2 added, 0 updated, 0 kept');
    const again = await runNavi(
      ['vault', 'import', file],
      { ...other, GNEXUS_BACKUP_PASSPHRASE: passphrase },
      dir,
    );
    expect(again.stdout).toContain('0 added, 0 updated, 2 kept');
    const otherOptions = {
      ...options,
      path: join(dir, 'other/vault.db'),
      keyFile: join(dir, 'other/vault.key'),
    };
    expect(reveal(id, otherOptions)).toBe('router-pass-42');
    expectRefusal(
      await runNavi(
        ['vault', 'import', join(dir, 'missing.json')],
        { GNEXUS_BACKUP_PASSPHRASE: passphrase },
        dir,
      ),
      'cannot read the backup',
    );
  }, 120_000);
});

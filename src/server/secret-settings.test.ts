/** Settings that name a vault secret, resolved at start-up against a real vault. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettingsError, testSettings } from '../config/settings.js';
import { SecretMasker } from '../util/secret-masker.js';
import { openVault } from '../vault/index.js';
import { tempVault } from '../vault/test-support.js';
import type { Vault } from '../vault/types.js';
import { resolveSettingReferences } from './secret-settings.js';

const KEY = 'sk-from-the-vault-0123456789';

describe('settings that name a vault secret', () => {
  const temp = tempVault();
  let vault: Vault;
  let ref: string;
  beforeAll(() => {
    vault = openVault(temp.options());
    const created = vault.create(
      { name: 'OpenAI', type: 'api_token', fields: [{ name: 'key', value: KEY, secret: true }] },
      { actor: 'user' },
    );
    ref = created.fields[0]!.reference!;
  });
  afterAll(() => {
    vault.close();
    temp.remove();
  });

  it('replaces the reference with the value, masks it and audits the read', () => {
    const secrets = new SecretMasker();
    const settings = resolveSettingReferences(
      testSettings({ OPENAI_API_KEY: ref, GMAIL_APP_PASSWORD: ` ${ref} ` }),
      vault,
      secrets,
    );
    expect(settings.OPENAI_API_KEY).toBe(KEY);
    expect(settings.GMAIL_APP_PASSWORD).toBe(KEY);
    expect(secrets.mask(`Bearer ${KEY}`)).toMatch(
      /^Bearer \[secret hidden: (OPENAI_API_KEY|GMAIL_APP_PASSWORD)\]$/,
    );
    const reads = vault.auditLog().filter((e) => e.action === 'use' && e.actor === 'navi');
    expect(reads.map((e) => e.reason).sort()).toEqual([
      'setting GMAIL_APP_PASSWORD',
      'setting OPENAI_API_KEY',
    ]);
  });

  it('leaves settings without references as they are', () => {
    const plain = testSettings({ OPENAI_API_KEY: 'sk-plain-value', NAVI_PERSONA: 'say {{secret:x}}' });
    expect(resolveSettingReferences(plain, vault, new SecretMasker())).toBe(plain);
  });

  it('stops start-up naming every setting it cannot resolve, and why', () => {
    const unknown = '{{secret:00000000-0000-4000-8000-000000000000.key}}';
    let error: unknown;
    try {
      resolveSettingReferences(
        testSettings({ OPENAI_API_KEY: unknown, GNEXUS_KEY_FILE: ref }),
        vault,
        new SecretMasker(),
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SettingsError);
    const problems = (error as SettingsError).problems;
    expect(problems).toHaveLength(2);
    expect(problems.find((p) => p.startsWith('OPENAI_API_KEY='))).toContain(unknown);
    expect(problems.find((p) => p.startsWith('GNEXUS_KEY_FILE:'))).toContain(
      "the vault's own settings cannot name a vault secret",
    );
  });

  it('names a locked vault and how to unlock it', () => {
    const locked = openVault(temp.options({ masterKey: 'not-the-key-of-this-vault' }));
    try {
      expect(() =>
        resolveSettingReferences(testSettings({ OPENAI_API_KEY: ref }), locked, new SecretMasker()),
      ).toThrow(/OPENAI_API_KEY=\{\{secret:.*\}\}: .*GNEXUS_MASTER_KEY/s);
    } finally {
      locked.close();
    }
  });
});

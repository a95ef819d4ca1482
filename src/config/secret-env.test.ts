import { describe, expect, it } from 'vitest';
import { isSecretVariable, knownSecrets, scrubSecretEnvironment } from './secret-env.js';
import { SECRET_SETTINGS, testSettings } from './settings.js';

describe('secret variables', () => {
  it('marks the credential settings secret', () => {
    expect(SECRET_SETTINGS).toEqual(
      expect.arrayContaining(['OPENAI_API_KEY', 'NAVI_API_TOKEN', 'DATABASE_URL']),
    );
    expect(SECRET_SETTINGS).not.toContain('OPENAI_BASE_URL');
  });

  it('recognises credential-looking names and leaves look-alikes', () => {
    for (const name of [
      'GITHUB_TOKEN',
      'hf_token',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'PGPASSWORD',
      'SMTP_PASSWORD_FILE',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'ANTHROPIC_API_KEY',
      'MY_APIKEY',
      'SSH_PRIVATE_KEY',
      'CLIENT_SECRET',
      'GPG_PASSPHRASE',
      'DATABASE_URL',
      // A vault key rotation's new key, read by `navi vault rotate-key`.
      'GNEXUS_NEW_MASTER_KEY',
    ])
      expect(isSecretVariable(name), name).toBe(true);
    for (const name of [
      'PATH',
      'HOME',
      'TOKENIZERS_PARALLELISM',
      'SSH_AUTH_SOCK',
      'SSH_ASKPASS',
      'KEYBOARD',
      'OPENAI_MODEL',
    ])
      expect(isSecretVariable(name), name).toBe(false);
  });

  it('collects the secret settings and credential variables, by name', () => {
    const settings = testSettings({ OPENAI_API_KEY: 'sk-from-settings-123', NAVI_API_TOKEN: '' });
    const found = knownSecrets(settings, {
      OPENAI_API_KEY: 'sk-from-env-ignored',
      GITHUB_TOKEN: 'ghp_abcdefgh',
      PATH: '/usr/bin',
      EMPTY_TOKEN: '',
    });
    expect(found).toEqual([
      { name: 'OPENAI_API_KEY', value: 'sk-from-settings-123' },
      { name: 'GITHUB_TOKEN', value: 'ghp_abcdefgh' },
    ]);
  });

  it('deletes every secret variable from an environment and says which', () => {
    const env: Record<string, string | undefined> = {
      PATH: '/usr/bin',
      OPENAI_API_KEY: 'k',
      NAVI_API_TOKEN: 't',
      GITHUB_TOKEN: 'g',
      LANG: 'C.UTF-8',
    };
    expect(scrubSecretEnvironment(env).sort()).toEqual(['GITHUB_TOKEN', 'NAVI_API_TOKEN', 'OPENAI_API_KEY']);
    expect(env).toEqual({ PATH: '/usr/bin', LANG: 'C.UTF-8' });
  });
});

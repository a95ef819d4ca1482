/**
 * Which variables of Navi's environment are secrets, and taking them out of it.
 *
 * A secret is a setting marked `secret` in settings.ts (NAVI_API_TOKEN, OPENAI_API_KEY,
 * DATABASE_URL) or any variable whose name looks like a credential: it contains PASSWORD,
 * PASSWD or PASSPHRASE, or has TOKEN, SECRET, CREDENTIAL(S), APIKEY, API_KEY, ACCESS_KEY,
 * PRIVATE_KEY or AUTH_KEY as an underscore-separated part (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
 * PGPASSWORD, GOOGLE_APPLICATION_CREDENTIALS), in any case. Names that merely contain such a
 * word inside another (TOKENIZERS_PARALLELISM) are not secrets.
 */
import { SECRET_SETTINGS, type Settings } from './settings.js';

const CREDENTIAL_NAME =
  /PASSWORD|PASSWD|PASSPHRASE|(?:^|_)(?:TOKEN|SECRET|CREDENTIALS?|APIKEY|API_KEY|ACCESS_KEY|PRIVATE_KEY|AUTH_KEY|MASTER_KEY)(?:_|$)/i;

/** True when the variable `name` holds a secret (see the module comment for the rule). */
export function isSecretVariable(name: string): boolean {
  return (SECRET_SETTINGS as readonly string[]).includes(name) || CREDENTIAL_NAME.test(name);
}

/**
 * Every secret Navi knows at start-up, by name: the values of the secret settings (which may
 * come from `.env` and so not be in the environment at all) and of every credential-looking
 * variable of `env`. Empty values are left out; the masker drops values too short to mask.
 */
export function knownSecrets(
  settings: Settings,
  env: Record<string, string | undefined>,
): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const name of SECRET_SETTINGS) {
    const value = settings[name];
    if (value !== '') out.push({ name, value });
  }
  for (const [name, value] of Object.entries(env)) {
    if (value && CREDENTIAL_NAME.test(name) && !(SECRET_SETTINGS as readonly string[]).includes(name))
      out.push({ name, value });
  }
  return out;
}

/**
 * Deletes every secret variable from `env` (Navi's own `process.env`, once settings are read)
 * so that nothing spawned later inherits them — user tools run inside Navi and may start
 * programs with the default environment. Returns the names removed.
 *
 * The kernel keeps the environment the process started with: /proc/self/environ still shows
 * the original values. That file is kept from tools by the file tools' guard and the sandbox,
 * not by this function.
 */
export function scrubSecretEnvironment(env: Record<string, string | undefined>): string[] {
  const removed: string[] = [];
  for (const name of Object.keys(env)) {
    if (!isSecretVariable(name)) continue;
    delete env[name];
    removed.push(name);
  }
  return removed;
}

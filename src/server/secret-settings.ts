/**
 * Settings that name a vault secret instead of holding it: `OPENAI_API_KEY={{secret:<id>.<field>}}`.
 * The value is read from the vault once, at start-up, registered with the masker, and the
 * settings Navi runs on hold it from then on; `.env` and the environment keep only the reference.
 */
import { type SettingName, type Settings, SettingsError } from '../config/settings.js';
import { parseSecretReference } from '../protocol/vault.js';
import type { SecretMasker } from '../util/secret-masker.js';
import type { Vault } from '../vault/types.js';

/** Settings the vault needs to open itself: a reference there could never be resolved. */
const VAULT_SETTINGS = new Set([
  'GNEXUS_MASTER_KEY',
  'GNEXUS_KEY_FILE',
  'GNEXUS_VAULT_PATH',
  'GNEXUS_AUDIT_LOG',
]);

/**
 * `settings` with every setting whose whole value is a vault reference replaced by the
 * secret's value. Throws SettingsError naming each setting that cannot be resolved (vault
 * locked, unknown or archived secret), as for any invalid setting.
 */
export function resolveSettingReferences(settings: Settings, vault: Vault, secrets: SecretMasker): Settings {
  const resolved: Partial<Record<SettingName, string>> = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    if (typeof value !== 'string') continue;
    const named = parseSecretReference(value);
    if (!named) continue;
    if (VAULT_SETTINGS.has(name)) {
      problems.push(`${name}: the vault's own settings cannot name a vault secret; give the value itself.`);
      continue;
    }
    try {
      const found = vault.resolve(named.id, named.field, { actor: 'navi', reason: `setting ${name}` });
      secrets.add(name, found.value, 4);
      resolved[name as SettingName] = found.value;
    } catch (err) {
      problems.push(`${name}=${value.trim()}: ${(err as Error).message}`);
    }
  }
  if (problems.length > 0) throw new SettingsError(problems);
  // Only string settings are ever replaced, by strings: the shape stays that of Settings.
  return Object.keys(resolved).length > 0
    ? (Object.freeze({ ...settings, ...resolved }) as Settings)
    : settings;
}

/**
 * The LLM settings the client may change while Navi runs (`GET`/`PUT /llm/settings`): saved in
 * the settings file Navi owns, then applied at once by rebuilding the backends. The environment
 * and `.env` win over the file, so a setting they fix is `locked`: a `PUT` that would change it
 * is refused rather than saved to no effect.
 */
import type { Logger } from 'pino';
import {
  isOwnedSetting,
  OWNED_SETTINGS,
  type OwnedValues,
  ownedSettingsPath,
  readOwnedSettings,
  writeOwnedSettings,
} from '../config/owned-settings.js';
import {
  parseSetting,
  type SettingName,
  type SettingOrigin,
  type Settings,
  SettingsError,
  withSettings,
} from '../config/settings.js';
import type { BackendRegistry } from '../llm/registry.js';
import type {
  LlmBackendId,
  LlmSettingName,
  LlmSettings,
  LlmSettingsUpdate,
  LlmSettingsView,
} from '../protocol/llm.js';
import type { SecretMasker } from '../util/secret-masker.js';
import { ApiError } from './errors.js';

/** A `PUT /llm/settings` body: a value as the environment would spell it, or null for the default. */
export type LlmSettingsChange = LlmSettingsUpdate;

export interface LlmSettingsDeps {
  /** The settings Navi runs on (vault references already resolved). */
  settings: Settings;
  /** Where each setting came from (`settingOrigins` of the settings as loaded). */
  origins: Readonly<Partial<Record<SettingName, SettingOrigin>>>;
  backends: BackendRegistry;
  /** Replaces vault references (`{{secret:id.field}}`) by their values; throws SettingsError. */
  resolveReferences(settings: Settings): Settings;
  secrets: SecretMasker;
  logger: Logger;
  /** Told of every change once the backends follow it (capability caches, `services.settings`). */
  onChange?(settings: Settings): void;
}

export class LlmSettingsService {
  private current: Settings;
  private readonly origins: Partial<Record<SettingName, SettingOrigin>>;
  private saved: OwnedValues;
  readonly path: string;

  constructor(private readonly deps: LlmSettingsDeps) {
    this.current = deps.settings;
    this.origins = { ...deps.origins };
    this.path = ownedSettingsPath(deps.settings.NAVI_DATA_DIR);
    // loadSettings has refused a broken file already; what it could read is what is saved.
    this.saved = readOwnedSettings(this.path).values;
  }

  /** The settings in effect now. */
  settings(): Settings {
    return this.current;
  }

  /** The LLM settings the environment or `.env` fix. */
  locked(): LlmSettingName[] {
    return OWNED_SETTINGS.filter((n) => this.origins[n] === 'environment' || this.origins[n] === 'dotenv');
  }

  view(): LlmSettingsView {
    const s = this.current;
    const values: LlmSettings = {
      DEFAULT_LLM_BACKEND: s.DEFAULT_LLM_BACKEND as LlmBackendId,
      OLLAMA_HOST: s.OLLAMA_HOST,
      OLLAMA_DEFAULT_MODEL: s.OLLAMA_DEFAULT_MODEL,
      OPENAI_BASE_URL: s.OPENAI_BASE_URL,
      // A key is never sent back; `api_key_set` says whether there is one.
      OPENAI_API_KEY: '',
      OPENAI_MODEL: s.OPENAI_MODEL,
      LLAMACPP_MODEL_PATH: s.LLAMACPP_MODEL_PATH,
    };
    return { values, api_key_set: s.OPENAI_API_KEY !== '', locked: this.locked() };
  }

  /**
   * Validates `change`, saves it to the settings file and applies it. Refuses (and changes
   * nothing) when a setting is locked (SETTING_LOCKED) or a value is not accepted
   * (INVALID_SETTING, naming each variable and what it accepts). An empty OPENAI_API_KEY keeps
   * the saved key, since `GET` never returns it and a client sends its values back; `null`
   * removes a saved value, so the default applies again.
   */
  update(change: LlmSettingsChange): LlmSettingsView {
    const locked = new Set(this.locked());
    const apply: Partial<Record<LlmSettingName, string | null>> = {};
    const refusedLocked: string[] = [];
    const problems: string[] = [];
    for (const [name, value] of Object.entries(change)) {
      if (!isOwnedSetting(name) || value === undefined) continue;
      if (name === 'OPENAI_API_KEY' && value === '') continue;
      const parsed = parseSetting(name, value ?? undefined);
      if (!parsed.ok) {
        problems.push(parsed.problem);
        continue;
      }
      if (locked.has(name)) {
        // Sending back the value in effect changes nothing: only a real change is refused.
        if (value === null || parsed.value !== this.current[name]) refusedLocked.push(name);
        continue;
      }
      apply[name] = value;
    }
    if (refusedLocked.length > 0) {
      throw new ApiError(
        'SETTING_LOCKED',
        `${refusedLocked.join(', ')} ${refusedLocked.length === 1 ? 'is' : 'are'} set in the environment or .env; change ${refusedLocked.length === 1 ? 'it' : 'them'} there and restart Navi, or remove ${refusedLocked.length === 1 ? 'it' : 'them'} there to choose here`,
      );
    }
    if (problems.length > 0) throw new ApiError('INVALID_SETTING', problems.join('; '));
    if (Object.keys(apply).length === 0) return this.view();

    let next: Settings;
    try {
      next = this.deps.resolveReferences(withSettings(this.current, apply, 'file'));
    } catch (err) {
      if (err instanceof SettingsError) throw new ApiError('INVALID_SETTING', err.problems.join('; '));
      throw err;
    }
    const saved: OwnedValues = { ...this.saved };
    for (const [name, value] of Object.entries(apply) as [LlmSettingName, string | null][]) {
      if (value === null || value.trim() === '') delete saved[name];
      else saved[name] = value;
    }
    try {
      writeOwnedSettings(this.path, saved);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new ApiError(
        'INTERNAL',
        `the settings could not be saved to ${this.path} (${code}); check that Navi may write to NAVI_DATA_DIR (${this.current.NAVI_DATA_DIR})`,
      );
    }
    this.saved = saved;
    for (const name of Object.keys(apply) as LlmSettingName[]) {
      this.origins[name] = saved[name] === undefined ? 'default' : 'file';
    }
    if (next.OPENAI_API_KEY !== '') this.deps.secrets.add('OPENAI_API_KEY', next.OPENAI_API_KEY);
    this.current = next;
    this.deps.backends.reconfigure(next);
    this.deps.onChange?.(next);
    this.deps.logger.info(
      { changed: Object.keys(apply), default_backend: next.DEFAULT_LLM_BACKEND },
      `LLM settings saved to ${this.path} and applied`,
    );
    return this.view();
  }
}

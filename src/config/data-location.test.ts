/**
 * Where the data files land as the `navi` command reads its settings (a working folder `cwd`):
 * the data folder for a new install, the working folder for an install from before it, and
 * whatever a setting names, always.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATA_FILE_NAMES, DATA_FILE_SETTINGS, dataLocation, legacyDataNotice } from './data-location.js';
import { loadSettings, parseSetting, settingOrigins, testSettings } from './settings.js';

let base: string;
let cwd: string;
let data: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'navi-data-location-'));
  cwd = join(base, 'work');
  data = join(base, 'data');
  mkdirSync(cwd);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const load = (env: Record<string, string> = {}) => loadSettings({ NAVI_DATA_DIR: data, ...env }, cwd);
const paths = (s: ReturnType<typeof load>) => DATA_FILE_SETTINGS.map((name) => s[name]);
const locate = (s: ReturnType<typeof load>) => dataLocation(s, settingOrigins(s), cwd);

describe('the data files of a new install', () => {
  it('are in the data folder, as absolute paths', () => {
    const s = load();
    expect(paths(s)).toEqual([
      join(data, 'navi.db'),
      join(data, 'session_files'),
      join(data, 'vault.db'),
      join(data, 'vault.key'),
      join(data, 'vault-audit.jsonl'),
    ]);
    const location = locate(s);
    expect(location.legacy).toEqual([]);
    expect(location.files.every((f) => f.where === 'data')).toBe(true);
    expect(legacyDataNotice(location)).toBeUndefined();
  });

  it('follow XDG_DATA_HOME when NAVI_DATA_DIR is unset, and a relative NAVI_DATA_DIR is taken from the working folder', () => {
    const xdg = loadSettings({ XDG_DATA_HOME: join(base, 'xdg') }, cwd);
    expect(xdg.DB_PATH).toBe(join(base, 'xdg', 'navi', 'navi.db'));
    const relative = loadSettings({ NAVI_DATA_DIR: 'here' }, cwd);
    expect(relative.SESSION_FILES_DIR).toBe(join(cwd, 'here', 'session_files'));
    expect(locate(relative).legacy).toEqual([]);
  });

  it('have the names of the settings table defaults', () => {
    for (const name of DATA_FILE_SETTINGS)
      expect(parseSetting(name, undefined)).toEqual({ ok: true, value: DATA_FILE_NAMES[name] });
  });
});

describe('an install from before the data folder', () => {
  it('keeps every data file in the working folder while ./navi.db is there, and says how to move it', () => {
    writeFileSync(join(cwd, 'navi.db'), '');
    const s = load();
    expect(paths(s)).toEqual(DATA_FILE_SETTINGS.map((name) => join(cwd, DATA_FILE_NAMES[name])));
    const location = locate(s);
    expect(location.legacy.map((f) => f.setting)).toEqual([...DATA_FILE_SETTINGS]);
    const notice = legacyDataNotice(location) ?? '';
    expect(notice).toContain(join(cwd, 'navi.db'));
    expect(notice).toContain(data);
    expect(notice).toContain('npx navi data move');
  });

  it('keeps a vault found in the working folder even when DB_PATH names the database', () => {
    writeFileSync(join(cwd, 'vault.db'), '');
    writeFileSync(join(cwd, 'vault.key'), '');
    const s = load({ DB_PATH: join(base, 'elsewhere.db') });
    expect(s.DB_PATH).toBe(join(base, 'elsewhere.db'));
    expect(s.GNEXUS_VAULT_PATH).toBe(join(cwd, 'vault.db'));
    expect(s.GNEXUS_KEY_FILE).toBe(join(cwd, 'vault.key'));
    // Not there, so new: in the data folder.
    expect(s.GNEXUS_AUDIT_LOG).toBe(join(data, 'vault-audit.jsonl'));
    expect(s.SESSION_FILES_DIR).toBe(join(data, 'session_files'));
    expect(locate(s).legacy.map((f) => f.setting)).toEqual(['GNEXUS_VAULT_PATH', 'GNEXUS_KEY_FILE']);
  });
});

describe('settings that name a data file', () => {
  it('win over both folders, from the environment or .env', () => {
    writeFileSync(join(cwd, 'navi.db'), '');
    writeFileSync(join(cwd, '.env'), 'SESSION_FILES_DIR=/srv/navi/files\n');
    const s = load({ DB_PATH: 'mine.db', GNEXUS_VAULT_PATH: '/srv/navi/vault.db' });
    expect(s.DB_PATH).toBe('mine.db');
    expect(s.SESSION_FILES_DIR).toBe('/srv/navi/files');
    expect(s.GNEXUS_VAULT_PATH).toBe('/srv/navi/vault.db');
    // DB_PATH is set, so ./navi.db no longer marks an older install for the others.
    expect(s.GNEXUS_KEY_FILE).toBe(join(data, 'vault.key'));
    const location = locate(s);
    expect(location.files.filter((f) => f.where === 'setting').map((f) => f.setting)).toEqual([
      'DB_PATH',
      'SESSION_FILES_DIR',
      'GNEXUS_VAULT_PATH',
    ]);
    expect(location.files.find((f) => f.setting === 'DB_PATH')?.path).toBe(join(cwd, 'mine.db'));
    expect(legacyDataNotice(location)).toBeUndefined();
  });

  it('a blank value is unset, and takes the data folder', () => {
    expect(load({ DB_PATH: '  ' }).DB_PATH).toBe(join(data, 'navi.db'));
  });
});

describe('without a working folder', () => {
  it('a bare loadSettings(env) and testSettings keep the relative names, as the shipped servers and unit tests expect', () => {
    expect(loadSettings({ NAVI_DATA_DIR: data }).DB_PATH).toBe('navi.db');
    expect(testSettings().GNEXUS_VAULT_PATH).toBe('vault.db');
    expect(loadSettings({ NAVI_DATA_DIR: data }, undefined, { dataFiles: true }).DB_PATH).not.toBe('navi.db');
    expect(loadSettings({ NAVI_DATA_DIR: data }, cwd, { dataFiles: false }).DB_PATH).toBe('navi.db');
  });
});

/**
 * The settings file Navi owns: where it sits in the order of precedence (environment, .env,
 * the file, defaults), which settings it fixes, how a broken one is reported, and how it is
 * written.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ownedSettingsPath, readOwnedSettings, writeOwnedSettings } from './owned-settings.js';
import { loadSettings, SettingsError, settingOrigins, testSettings, withSettings } from './settings.js';

let dir: string;
let dataDir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-owned-'));
  dataDir = join(dir, 'data');
  file = ownedSettingsPath(dataDir);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function saveFile(content: unknown): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
}

function problemsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof SettingsError) return err.problems;
    throw err;
  }
  throw new Error('expected a SettingsError');
}

describe('the settings file in the order of precedence', () => {
  it('fills in what the environment and .env leave unset, and records where each came from', () => {
    saveFile({ DEFAULT_LLM_BACKEND: 'openai', OPENAI_MODEL: 'from-file', OLLAMA_HOST: 'http://file:1/' });
    writeFileSync(join(dir, '.env'), 'OPENAI_MODEL=from-dotenv\n');
    const s = loadSettings({ NAVI_DATA_DIR: dataDir, OLLAMA_HOST: 'http://env:2' }, dir);
    expect(s.DEFAULT_LLM_BACKEND).toBe('openai');
    expect(s.OPENAI_MODEL).toBe('from-dotenv');
    expect(s.OLLAMA_HOST).toBe('http://env:2');
    const origins = settingOrigins(s);
    expect(origins.DEFAULT_LLM_BACKEND).toBe('file');
    expect(origins.OPENAI_MODEL).toBe('dotenv');
    expect(origins.OLLAMA_HOST).toBe('environment');
    expect(origins.OPENAI_BASE_URL).toBe('default');
  });

  it('lets the file win over a variable the environment sets blank', () => {
    saveFile({ OPENAI_API_KEY: 'sk-from-the-file', OPENAI_MODEL: 'from-file' });
    const s = loadSettings({ NAVI_DATA_DIR: dataDir, OPENAI_API_KEY: '', OPENAI_MODEL: '  ' }, dir);
    expect(s.OPENAI_API_KEY).toBe('sk-from-the-file');
    expect(s.OPENAI_MODEL).toBe('from-file');
    expect(settingOrigins(s).OPENAI_API_KEY).toBe('file');
  });

  it('is parsed like the environment (a URL loses its trailing slash)', () => {
    saveFile({ OLLAMA_HOST: 'http://gpu-box:11434/' });
    expect(loadSettings({ NAVI_DATA_DIR: dataDir }, dir).OLLAMA_HOST).toBe('http://gpu-box:11434');
  });

  it('is not read by a bare loadSettings(env), but is by testSettings and on request', () => {
    saveFile({ OPENAI_MODEL: 'from-file' });
    expect(loadSettings({ NAVI_DATA_DIR: dataDir }).OPENAI_MODEL).toBe('gpt-4o-mini');
    expect(loadSettings({ NAVI_DATA_DIR: dataDir }, undefined, { settingsFile: true }).OPENAI_MODEL).toBe(
      'from-file',
    );
    expect(testSettings({ NAVI_DATA_DIR: dataDir }).OPENAI_MODEL).toBe('from-file');
    expect(loadSettings({ NAVI_DATA_DIR: dataDir }, dir, { settingsFile: false }).OPENAI_MODEL).toBe(
      'gpt-4o-mini',
    );
  });

  it('sits in the default data folder when NAVI_DATA_DIR is empty', () => {
    mkdirSync(join(dir, 'xdg', 'navi'), { recursive: true });
    writeFileSync(join(dir, 'xdg', 'navi', 'settings.json'), JSON.stringify({ OPENAI_MODEL: 'xdg-model' }));
    const s = loadSettings({ XDG_DATA_HOME: join(dir, 'xdg') }, dir);
    expect(s.NAVI_DATA_DIR).toBe(join(dir, 'xdg', 'navi'));
    expect(s.OPENAI_MODEL).toBe('xdg-model');
  });

  it('changes nothing when it does not exist', () => {
    const s = loadSettings({ NAVI_DATA_DIR: dataDir }, dir);
    expect(s.DEFAULT_LLM_BACKEND).toBe('ollama');
    expect(settingOrigins(s).DEFAULT_LLM_BACKEND).toBe('default');
  });
});

describe('a broken settings file', () => {
  it('that is not JSON stops start-up naming the file and what to do', () => {
    saveFile('{"DEFAULT_LLM_BACKEND": "openai",');
    const [problem] = problemsOf(() => loadSettings({ NAVI_DATA_DIR: dataDir }, dir));
    expect(problem).toContain(file);
    expect(problem).toMatch(/not valid JSON.*fix it, or delete it/);
  });

  it('that is not an object is refused', () => {
    saveFile('["openai"]');
    expect(problemsOf(() => loadSettings({ NAVI_DATA_DIR: dataDir }, dir))[0]).toMatch(/one JSON object/);
  });

  it('naming a setting it may not hold is refused, with the ones it may', () => {
    saveFile({ NAVI_API_TOKEN: 'x', HTTP_ALLOW_PRIVATE: 'true' });
    const problems = problemsOf(() => loadSettings({ NAVI_DATA_DIR: dataDir }, dir));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /"NAVI_API_TOKEN", which it may not hold \(only DEFAULT_LLM_BACKEND, .*\): set it in the environment or \.env/,
    );
  });

  it('with a value that is not a string, or not accepted, names the setting and the file', () => {
    saveFile({ OLLAMA_DEFAULT_MODEL: 7, DEFAULT_LLM_BACKEND: 'claude' });
    const problems = problemsOf(() => loadSettings({ NAVI_DATA_DIR: dataDir }, dir));
    expect(problems).toEqual([
      expect.stringMatching(/OLLAMA_DEFAULT_MODEL must be a string/),
      `DEFAULT_LLM_BACKEND="claude": accepts ollama, openai, llamacpp (saved in ${file})`,
    ]);
  });

  it('does not matter for a setting the environment fixes', () => {
    saveFile({ DEFAULT_LLM_BACKEND: 'claude' });
    expect(
      loadSettings({ NAVI_DATA_DIR: dataDir, DEFAULT_LLM_BACKEND: 'openai' }, dir).DEFAULT_LLM_BACKEND,
    ).toBe('openai');
  });

  it('that is absurdly large is refused without being parsed', () => {
    saveFile(`{"OPENAI_MODEL": "${'m'.repeat(300 * 1024)}"}`);
    expect(readOwnedSettings(file).problems[0]).toMatch(/larger than .* bytes/);
  });

  it('that cannot be read says so', () => {
    mkdirSync(file, { recursive: true });
    expect(readOwnedSettings(file).problems[0]).toMatch(/cannot be read \(EISDIR\)/);
  });
});

describe('writing the settings file', () => {
  it('creates the folder, writes mode 0600 JSON in a fixed order, and leaves no temporary file', () => {
    writeOwnedSettings(file, { OPENAI_MODEL: 'm', DEFAULT_LLM_BACKEND: 'openai', OPENAI_API_KEY: 'sk-1' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toEqual([
      'DEFAULT_LLM_BACKEND',
      'OPENAI_API_KEY',
      'OPENAI_MODEL',
    ]);
    writeOwnedSettings(file, { OPENAI_MODEL: 'n' });
    expect(readOwnedSettings(file)).toEqual({ values: { OPENAI_MODEL: 'n' }, problems: [] });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dataDir)).toEqual(['settings.json']);
  });

  it('fails without touching the old file when the folder cannot be written', () => {
    writeOwnedSettings(file, { OPENAI_MODEL: 'kept' });
    const blocked = join(dir, 'not-a-folder');
    writeFileSync(blocked, '');
    expect(() => writeOwnedSettings(join(blocked, 'settings.json'), { OPENAI_MODEL: 'x' })).toThrow(
      /EEXIST|ENOTDIR/,
    );
    expect(readOwnedSettings(file).values).toEqual({ OPENAI_MODEL: 'kept' });
  });
});

describe('withSettings', () => {
  it('applies raw values, validated, with their origin; null brings the default back', () => {
    const base = loadSettings({ NAVI_DATA_DIR: dataDir, OPENAI_MODEL: 'env-model' }, dir);
    const next = withSettings(base, { DEFAULT_LLM_BACKEND: 'openai', OPENAI_MODEL: null }, 'file');
    expect(next.DEFAULT_LLM_BACKEND).toBe('openai');
    expect(next.OPENAI_MODEL).toBe('gpt-4o-mini');
    expect(settingOrigins(next).DEFAULT_LLM_BACKEND).toBe('file');
    expect(settingOrigins(next).OPENAI_MODEL).toBe('default');
    expect(Object.isFrozen(next)).toBe(true);
    expect(() => withSettings(base, { OLLAMA_HOST: 'ftp://x' }, 'file')).toThrow(
      /OLLAMA_HOST="ftp:\/\/x": accepts an http/,
    );
  });
});

/** The `navi serve` that `npm run conformance` checks reads and writes nothing of the user's. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { naviEnv, repoRoot, targets } from './targets.js';

let workDir: string;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), 'navi-conformance-env-'));
});
afterEach(() => rmSync(workDir, { recursive: true, force: true }));

const inside = (folder: string, path: string) => !relative(folder, path).startsWith('..');

describe('conformance targets', () => {
  it('checks the four shipped servers and Navi, each with its own baseline name', () => {
    expect(targets.map((t) => t.name)).toEqual(['navi-web', 'gnexus-creds', 'navi-ui', 'navi-3d', 'navi']);
  });

  it("settles every file and folder Navi writes inside the run's folder, on loopback, without shipped servers", () => {
    // A .env in the working folder is read by `navi serve`; the run's folder has none of the user's.
    writeFileSync(join(workDir, '.env'), 'MCP_SHIPPED_SERVERS=true\nNAVI_HOST=0.0.0.0\n');
    const settings = loadSettings(naviEnv(workDir), workDir);
    // The environment wins over .env: these hold even with a hostile one.
    expect(settings.MCP_SHIPPED_SERVERS).toBe(false);
    expect(settings.NAVI_HOST).toBe('127.0.0.1');
    expect(settings.NAVI_API_TOKEN).toBe('');
    expect(settings.DATABASE_URL).toBe('');
    for (const path of [
      settings.NAVI_DATA_DIR,
      settings.NAVI_MODELS_DIR,
      settings.LLAMACPP_RUNTIME_DIR,
      settings.DB_PATH,
      settings.SESSION_FILES_DIR,
      settings.GNEXUS_VAULT_PATH,
      settings.GNEXUS_KEY_FILE,
      settings.GNEXUS_AUDIT_LOG,
      settings.TOOLS_DIR,
      settings.CONTEXT_PROVIDERS_DIR,
      settings.MCP_SERVERS_DIR,
      settings.MCP_SCAFFOLD_DIR,
      settings.SSH_HOSTS_FILE,
    ])
      expect(inside(workDir, path), path).toBe(true);
    expect(inside(repoRoot, settings.PROFILES_DIR)).toBe(true);
  });

  it("passes on no setting of the user's environment but PATH and TMPDIR", () => {
    const saved = { ...process.env };
    process.env.DATABASE_URL = 'postgres://someone:secret@db.example/navi';
    process.env.NAVI_API_TOKEN = 'the-users-token';
    process.env.OLLAMA_HOST = 'http://gpu-box.example:11434';
    try {
      const env = naviEnv(workDir);
      expect(env.DATABASE_URL).toBeUndefined();
      expect(env.NAVI_API_TOKEN).toBeUndefined();
      expect(env.OLLAMA_HOST).toBe('http://127.0.0.1:1');
      expect(env.HOME).toBe(workDir);
    } finally {
      process.env = saved;
    }
  });
});

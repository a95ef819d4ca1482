/**
 * The `navi` command itself, run as a real child process: help, unknown commands, a bad setting
 * stopping start-up with the variable's name, and `navi doctor` against a reachable and an
 * unreachable LLM, with a broken user tool and a broken MCP config reported by name; the
 * pairing links of `navi serve` and `navi pair`.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openVault } from '../../src/vault/index.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { repoRoot, tempDir } from '../support/navi.js';
import { runNavi, spawnNavi } from '../support/navi-process.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

describe('the navi command', () => {
  let fake: FakeLlm;
  const dir = tempDir('navi-cli-');
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    fake = await startFakeLlm();
    env = {
      DB_PATH: join(dir, 'navi.db'),
      SESSION_FILES_DIR: join(dir, 'files'),
      TOOLS_DIR: join(dir, 'tools'),
      CONTEXT_PROVIDERS_DIR: join(dir, 'providers'),
      MCP_SERVERS_DIR: join(dir, 'mcp'),
      OLLAMA_HOST: fake.ollamaUrl,
      OLLAMA_DEFAULT_MODEL: 'test-model',
      PROFILES_DIR: profilesDir([plainProfile]),
      DEFAULT_PROFILE: 'plain',
      LOG_LEVEL: 'ERROR',
      MCP_SHIPPED_SERVERS: 'false',
    };
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('prints its usage for help and refuses an unknown command with exit code 2', async () => {
    const help = await runNavi(['help'], env, dir);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('doctor');
    const unknown = await runNavi(['frobnicate'], env, dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });

  it('stops on a bad setting and names the variable', async () => {
    const run = await runNavi(['doctor'], { ...env, NAVI_PORT: 'eighty' }, dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('NAVI_PORT');
  });

  it('doctor passes when the LLM answers and nothing failed to load', async () => {
    const run = await runNavi(['doctor'], env, dir);
    expect(run.stdout).toMatch(/\[ok\] +database/);
    expect(run.stdout).toMatch(/\[ok\] +llm ollama/);
    expect(run.stdout).toContain('All checks passed.');
    expect(run.code).toBe(0);
  });

  it('doctor reports the vault: none yet, unlocked, or locked with how to unlock it', async () => {
    const vaultDir = tempDir('navi-cli-vault-');
    const vaultEnv = {
      ...env,
      GNEXUS_VAULT_PATH: join(vaultDir, 'vault.db'),
      GNEXUS_KEY_FILE: join(vaultDir, 'vault.key'),
      GNEXUS_AUDIT_LOG: join(vaultDir, 'audit.jsonl'),
    };
    const none = await runNavi(['doctor'], vaultEnv, dir);
    expect(none.stdout).toMatch(
      /\[ok\] +vault: none yet at .*vault\.db; it is created when a secret is first stored/,
    );
    expect(existsSync(join(vaultDir, 'vault.key'))).toBe(false);

    const vault = openVault({
      path: vaultEnv.GNEXUS_VAULT_PATH,
      keyFile: vaultEnv.GNEXUS_KEY_FILE,
      masterKey: '',
      auditLog: vaultEnv.GNEXUS_AUDIT_LOG,
    });
    const secret = vault.create(
      { name: 'k', type: 'api_token', fields: [{ name: 'key', value: 'sk-cli-test-123456', secret: true }] },
      { actor: 'user' },
    );
    vault.close();
    const open = await runNavi(['doctor'], vaultEnv, dir);
    expect(open.stdout).toMatch(/\[ok\] +vault: .*vault\.db unlocked \(key from the key file\)/);
    expect(open.code).toBe(0);

    const locked = await runNavi(
      ['doctor'],
      { ...vaultEnv, GNEXUS_MASTER_KEY: 'a-key-of-another-vault' },
      dir,
    );
    expect(locked.stdout).toMatch(/\[FAIL\] +vault: .*vault\.db is locked: .*GNEXUS_MASTER_KEY/);
    expect(locked.code).toBe(1);

    // A setting naming a secret: resolved when it exists, start-up stopped when it does not.
    const named = await runNavi(
      ['doctor'],
      { ...vaultEnv, OPENAI_API_KEY: secret.fields[0]!.reference! },
      dir,
    );
    expect(named.code).toBe(0);
    const missing = '{{secret:00000000-0000-4000-8000-000000000000.key}}';
    const served = await runNavi(['serve'], { ...vaultEnv, OPENAI_API_KEY: missing, NAVI_PORT: '0' }, dir);
    expect(served.code).toBe(2);
    expect(served.stderr).toContain(`OPENAI_API_KEY=${missing}: `);
  });

  it("doctor shows each MCP server's state", async () => {
    const servers = tempDir('navi-cli-mcp-');
    const config = {
      name: 'everything',
      command: join(repoRoot, 'node_modules/.bin/mcp-server-everything'),
      args: ['stdio'],
    };
    writeFileSync(join(servers, 'everything.json'), JSON.stringify(config));
    const run = await runNavi(['doctor'], { ...env, MCP_SERVERS_DIR: servers }, dir);
    expect(run.stdout).toMatch(
      /\[ok\] +mcp everything: ready \(stdio, [1-9]\d* tools, [1-9]\d* resources, [1-9]\d* prompts\)/,
    );
    expect(run.code).toBe(0);
  });

  it('doctor starts the shipped navi-web and names the Chromium web_view uses, or warns without one', async () => {
    const shipped = { ...env, MCP_SHIPPED_SERVERS: 'true' };
    const run = await runNavi(['doctor'], shipped, dir);
    expect(run.stdout).toMatch(/\[ok\] +mcp navi-web: ready \(stdio, 3 tools\)/);
    expect(run.stdout).toMatch(/\[ok\] +chromium: \/\S+, used by web_view/);
    expect(run.code).toBe(0);

    const without = await runNavi(['doctor'], { ...shipped, CHROMIUM_PATH: join(dir, 'no-chromium') }, dir);
    expect(without.stdout).toMatch(
      /\[warn\] +chromium: CHROMIUM_PATH is .*no-chromium.*web_view still works/,
    );
    expect(without.stdout).toMatch(/\[ok\] +mcp navi-web: ready/);
    expect(without.code).toBe(0);
  });

  it('doctor fails, naming the backend, the broken tool and the broken MCP config', async () => {
    const broken = tempDir('navi-cli-broken-');
    mkdirSync(join(broken, 'tools'));
    writeFileSync(join(broken, 'tools', 'half.ts'), 'export const name = "half";\n');
    mkdirSync(join(broken, 'mcp'));
    writeFileSync(join(broken, 'mcp', 'bad.json'), '{ not json');
    const run = await runNavi(
      ['doctor'],
      {
        ...env,
        OLLAMA_HOST: await closedPortUrl(),
        TOOLS_DIR: join(broken, 'tools'),
        MCP_SERVERS_DIR: join(broken, 'mcp'),
      },
      broken,
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/\[FAIL\] llm ollama: Cannot reach the Ollama server/);
    expect(run.stdout).toMatch(/\[FAIL\] tools: .*half\.ts/);
    expect(run.stdout).toMatch(/\[FAIL\] mcp config bad\.json/);
  });

  it('serve prints a pairing link; navi pair prints a fresh one; each code pairs once; --unpair-all', async () => {
    const port = Number(new URL(await closedPortUrl()).port);
    const serveDir = tempDir('navi-cli-pair-');
    const child = await spawnNavi({
      dir: serveDir,
      port,
      ollamaUrl: fake.ollamaUrl,
      extra: { LOG_LEVEL: 'INFO' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let output = '';
      child.stdout?.on('data', (d: Buffer) => {
        output += d.toString();
      });
      const linkPattern = new RegExp(`Open http://127\\.0\\.0\\.1:${port}/#pair=([0-9A-Z-]+) to use Navi`);
      const deadline = Date.now() + 20_000;
      while (!linkPattern.test(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const served = linkPattern.exec(output)?.[1];
      expect(served, output).toBeDefined();

      const printed = await runNavi(
        ['pair'],
        { ...env, DB_PATH: join(serveDir, 'navi.db'), NAVI_PORT: String(port) },
        dir,
      );
      expect(printed.code).toBe(0);
      expect(printed.stdout).toMatch(/within 10 minutes/);
      const fresh = linkPattern.exec(printed.stdout)?.[1];
      expect(fresh).toBeDefined();
      expect(fresh).not.toBe(served);

      const pair = (code: string | undefined) =>
        fetch(`http://127.0.0.1:${port}/auth/pair`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code }),
        });
      const cookies: string[] = [];
      for (const code of [served, fresh]) {
        const first = await pair(code);
        expect(first.status).toBe(200);
        cookies.push((first.headers.get('set-cookie') ?? '').split(';')[0] ?? '');
        expect((await pair(code)).status).toBe(409);
      }
      const consent = async (cookie: string) =>
        (
          (await (await fetch(`http://127.0.0.1:${port}/auth/status`, { headers: { cookie } })).json()) as {
            consent: boolean;
          }
        ).consent;
      for (const cookie of cookies) expect(await consent(cookie)).toBe(true);

      const dbEnv = { ...env, DB_PATH: join(serveDir, 'navi.db') };
      const typo = await runNavi(['pair', '--everything'], dbEnv, dir);
      expect(typo.code).toBe(2);
      expect(typo.stderr).toContain('unknown option "--everything"');
      const forget = await runNavi(['pair', '--unpair-all'], dbEnv, dir);
      expect(forget.code).toBe(0);
      expect(forget.stdout).toContain('Forgot 2 paired browsers');
      for (const cookie of cookies) expect(await consent(cookie)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

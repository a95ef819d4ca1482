/**
 * `navi doctor` prints lines for people: what its services log while it checks (an MCP server
 * that keeps crashing, a profile file skipped) comes after the checks as plain sentences, once
 * each, never as JSON log lines among them. Run as a real child process.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { runNavi } from '../support/navi-process.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

/** Lines of `text` that are JSON objects, the way a structured log line is. */
function jsonLines(text: string): string[] {
  return text.split('\n').filter((line) => {
    try {
      const parsed: unknown = JSON.parse(line);
      return typeof parsed === 'object' && parsed !== null;
    } catch {
      return false;
    }
  });
}

describe('navi doctor with a broken MCP server', () => {
  let fake: FakeLlm;
  const dir = tempDir('navi-doctor-output-');

  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('says what failed in its own lines, and what was logged as sentences, none of it JSON', async () => {
    const servers = join(dir, 'mcp');
    mkdirSync(servers);
    // A server that writes a JSON log line to stderr and dies, every time it is restarted.
    const crash = `console.error(JSON.stringify({ level: 50, msg: 'cannot start' })); process.exit(3);`;
    writeFileSync(
      join(servers, 'crashing.json'),
      JSON.stringify({ name: 'crashing', command: process.execPath, args: ['-e', crash] }),
    );
    const profiles = profilesDir([plainProfile]);
    writeFileSync(join(profiles, 'broken.json'), '{ "id": ');
    const run = await runNavi(
      ['doctor'],
      {
        DB_PATH: join(dir, 'navi.db'),
        NAVI_DATA_DIR: join(dir, 'data'),
        SESSION_FILES_DIR: join(dir, 'files'),
        TOOLS_DIR: join(dir, 'tools'),
        CONTEXT_PROVIDERS_DIR: join(dir, 'providers'),
        MCP_SERVERS_DIR: servers,
        OLLAMA_HOST: fake.ollamaUrl,
        OLLAMA_DEFAULT_MODEL: 'test-model',
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        MCP_SHIPPED_SERVERS: 'false',
        // What navi serve would log as JSON; doctor still prints sentences.
        LOG_LEVEL: 'INFO',
        LOG_FORMAT: 'json',
      },
      dir,
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^\[FAIL\] mcp crashing: (down|failed|starting)/m);
    expect(run.stdout).toMatch(/^Logged while checking:$/m);
    expect(run.stdout).toMatch(
      /^ {2}MCP server down \(mcp server: crashing; reason: process exited with code 3/m,
    );
    expect(run.stdout).toMatch(/^ {2}profile skipped: .*broken\.json/m);
    expect(run.stdout).toMatch(/^[1-9]\d* check\(s\) failed\.$/m);
    expect(jsonLines(run.stdout)).toEqual([]);
    expect(jsonLines(run.stderr)).toEqual([]);
    // Each note once, however often the server was restarted while doctor waited.
    const downs = run.stdout
      .split('\n')
      .filter((line) => line.includes('MCP server down (mcp server: crashing'));
    expect(new Set(downs).size).toBe(downs.length);
  });
});

/**
 * The driver the conformance suite's client scenarios run (navi-client.ts): it refuses what the
 * suite would never send with a reason, reports a server it cannot reach with the real error, and
 * passes the suite's tools_call scenario through Navi's own client, end to end.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runProgram } from '../support/navi-process.js';
import { repoRoot } from './targets.js';

const driver = join(import.meta.dirname, 'navi-client.ts');
const cli = join(repoRoot, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'navi-conformance-driver-'));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

/** Only what the driver needs: the user's own settings must not reach Navi's client. */
const baseEnv = () => ({ PATH: process.env.PATH, HOME: cwd, TMPDIR: process.env.TMPDIR ?? tmpdir() });

function drive(args: string[], env: Record<string, string> = {}) {
  return runProgram(
    process.execPath,
    ['--import', 'tsx', driver, ...args],
    { ...baseEnv(), ...env },
    repoRoot,
  );
}

describe('navi-client, the conformance driver', () => {
  it('refuses to run without a scenario, saying how the suite calls it', async () => {
    const run = await drive(['http://127.0.0.1:9/mcp']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/usage: MCP_CONFORMANCE_SCENARIO=<scenario> .* <server-url>/);
  });

  it('refuses a missing URL and extra arguments', async () => {
    expect((await drive([], { MCP_CONFORMANCE_SCENARIO: 'initialize' })).code).toBe(2);
    const extra = await drive(['--verbose', 'http://127.0.0.1:9/mcp'], {
      MCP_CONFORMANCE_SCENARIO: 'initialize',
    });
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('usage:');
  });

  it('names the scenarios it knows when given another, clipped when hostile', async () => {
    const run = await drive(['http://127.0.0.1:9/mcp'], { MCP_CONFORMANCE_SCENARIO: `x${'y'.repeat(5000)}` });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /no behaviour for scenario "xy+"; known: initialize, tools_call, .* and auth\/\*/,
    );
    expect(run.stderr.length).toBeLessThan(400);
  });

  it('refuses a URL that is not http(s) and a context that is not a JSON object', async () => {
    const file = await drive(['file:///etc/passwd'], { MCP_CONFORMANCE_SCENARIO: 'initialize' });
    expect(file.code).toBe(1);
    expect(file.stderr).toContain('the server URL must be http:// or https://, not "file:///etc/passwd"');
    const context = await drive(['http://127.0.0.1:9/mcp'], {
      MCP_CONFORMANCE_SCENARIO: 'auth/pre-registration',
      MCP_CONFORMANCE_CONTEXT: '["client_id"]',
    });
    expect(context.code).toBe(1);
    expect(context.stderr).toContain('MCP_CONFORMANCE_CONTEXT is not a JSON object');
  });

  it('reports a server nobody answers at with the connection error Navi recorded', async () => {
    // Port 9 (discard) on loopback: nothing listens there, so the connection is refused.
    const run = await drive(['http://127.0.0.1:9/mcp'], { MCP_CONFORMANCE_SCENARIO: 'initialize' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /navi-client \(initialize\): the server is down, not ready \(last error: .+\)/,
    );
  });

  it("passes the suite's tools_call scenario with Navi's own client", async () => {
    const command = `${process.execPath} --import tsx ${driver}`;
    const run = await runProgram(
      process.execPath,
      [cli, 'client', '--command', command, '--scenario', 'tools_call', '--output-dir', cwd],
      baseEnv(),
      repoRoot,
    );
    expect(run.code, run.stderr).toBe(0);
    const [results] = readdirSync(cwd).filter((d) => d.startsWith('tools_call-'));
    const checks = JSON.parse(readFileSync(join(cwd, results ?? '', 'checks.json'), 'utf8')) as {
      id: string;
      status: string;
    }[];
    expect(checks.find((c) => c.id === 'tool-add-numbers')?.status).toBe('SUCCESS');
    expect(readFileSync(join(cwd, results ?? '', 'stdout.txt'), 'utf8')).toContain('The sum of 2 and 3 is 5');
  });
});

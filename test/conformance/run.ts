/**
 * `npm run conformance`: starts each MCP server of Navi's (the shipped ones, navi-web,
 * gnexus-creds, navi-ui, navi-3d, as Streamable HTTP on a free loopback port, and Navi itself,
 * a real `navi serve` whose `/mcp` is checked; targets.ts), runs the server scenarios of
 * @modelcontextprotocol/conformance against it, and compares the failures with the server's
 * baseline (`<server>.baseline.yml`). Then the suite's client scenarios check Navi's own MCP
 * client (client-suite.ts, against `navi-client.baseline.yml`). Exit code 1 on any failure a baseline does not list;
 * baseline entries that pass now are named so they can be removed. Nothing leaves the machine:
 * the scenarios only talk to the local server, and they call none of its tools. Each server
 * writes only in a temporary folder of its run (gnexus-creds a new vault, Navi a new database).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBaseline, reportComparison, type ScenarioResult } from './baseline.js';
import { CLIENT_TARGET, checkClient } from './client-suite.js';
import { repoRoot, type Target, targets } from './targets.js';

const cli = join(repoRoot, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const RUN_TIMEOUT_MS = 180_000;

function stopServer(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done(child.exitCode);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done(code);
    });
    child.kill('SIGTERM');
  });
}

function runScenarios(url: string, outDir: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [cli, 'server', '--url', url, '--output-dir', outDir], {
      cwd: outDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      output += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      output += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.once('error', fail);
    // The CLI exits 1 whenever a scenario fails; the baseline decides what that means.
    child.once('exit', () => {
      clearTimeout(timer);
      done(output);
    });
  });
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Every scenario of the summary, with the messages of its failed or warning checks. */
function readResults(output: string, outDir: string): ScenarioResult[] {
  const checks = new Map<string, Check[]>();
  for (const dir of readdirSync(outDir)) {
    const scenario = dir.match(/^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/)?.[1];
    const file = join(outDir, dir, 'checks.json');
    if (scenario && existsSync(file)) checks.set(scenario, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
  }
  const summary = [...output.matchAll(/^[✓✗] ([\w/-]+): (\d+) passed, (\d+) failed$/gm)];
  if (summary.length === 0) throw new Error(`the conformance CLI printed no summary:\n${output}`);
  return summary.map(([, scenario = '', , failed = '0']) => {
    const own = checks.get(scenario);
    const failures = own
      ? own
          .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
          .map((c) => `${c.id}: ${c.status === 'WARNING' ? 'warning: ' : ''}${c.errorMessage ?? c.status}`)
      : Number(failed) > 0
        ? ['the scenario did not run to the end (see the CLI output above)']
        : [];
    return { scenario, failures };
  });
}

/** Runs the suite against one server; resolves to whether it met its baseline. */
async function check(target: Target): Promise<boolean> {
  const baselineName = `${target.name}.baseline.yml`;
  const baseline = parseBaseline(readFileSync(join(import.meta.dirname, baselineName), 'utf8'), baselineName);
  const outDir = mkdtempSync(join(tmpdir(), 'navi-conformance-'));
  const workDir = mkdtempSync(join(tmpdir(), `navi-conformance-${target.name}-`));
  let results: ScenarioResult[];
  try {
    const { url, child } = await target.start(workDir);
    let output: string;
    try {
      output = await runScenarios(url, outDir);
    } finally {
      const code = await stopServer(child);
      if (code !== 0)
        console.error(`conformance: ${target.name} did not shut down cleanly on SIGTERM (exit ${code}).`);
    }
    results = readResults(output, outDir);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
  const { unexpected } = reportComparison(results, baseline, {
    label: target.name,
    baselineName,
    fixHint: 'fix the server',
  });
  return unexpected.length === 0;
}

async function main(): Promise<number> {
  if (!existsSync(cli)) {
    console.error(`conformance: ${cli} is missing; run npm ci to install the devDependencies.`);
    return 1;
  }
  // `npm run conformance -- navi-ui navi` checks only the servers named; `navi-client`, Navi's client.
  const wanted = process.argv.slice(2);
  const known = [...targets.map((t) => t.name), CLIENT_TARGET];
  const unknown = wanted.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    console.error(`conformance: no server named ${unknown.join(', ')}; known: ${known.join(', ')}.`);
    return 1;
  }
  let ok = true;
  // One after the other: each run is short, and their output stays apart.
  for (const target of targets)
    if (wanted.length === 0 || wanted.includes(target.name)) ok = (await check(target)) && ok;
  if (wanted.length === 0 || wanted.includes(CLIENT_TARGET)) ok = (await checkClient()) && ok;
  return ok ? 0 : 1;
}

process.exitCode = await main();

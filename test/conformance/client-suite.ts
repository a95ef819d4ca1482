/**
 * The client half of `npm run conformance` (`npm run conformance -- navi-client`): every client
 * scenario of @modelcontextprotocol/conformance (core, auth, back-compat and extensions) run
 * against Navi's own MCP client (navi-client.ts), judged against navi-client.baseline.yml. The
 * suite's CLI reads that baseline itself (`--expected-failures`) and fails a scenario that fails
 * unlisted or passes while listed; an entry naming no scenario of the suite fails the run too.
 *
 * The scenarios without OAuth run one at a time first: sse-retry measures how long the client
 * waits before reconnecting, which a machine busy with other scenarios would skew. The auth
 * scenarios then run a few at a time. Nothing leaves the machine: every scenario's servers
 * listen on loopback, and the authorisation "browser" only fetches their pages.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseClientBaseline, reportComparison, type ScenarioResult } from './baseline.js';
import { repoRoot } from './targets.js';

export const CLIENT_TARGET = 'navi-client';
const cli = join(repoRoot, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const baselineFile = join(import.meta.dirname, `${CLIENT_TARGET}.baseline.yml`);
const driver = join(import.meta.dirname, 'navi-client.ts');
/** The suite's limit for one client run; a driver that waits longer has hung. */
const SCENARIO_TIMEOUT_MS = 30_000;
/** A bound on one CLI run: the scenario's own timeout plus starting and stopping its servers. */
const CLI_TIMEOUT_MS = 60_000;
const AUTH_PARALLEL = 5;
/** How much of a failed driver's stderr the report shows. */
const STDERR_TAIL_CHARS = 600;

interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

interface CliRun {
  code: number | null;
  output: string;
}

function runCli(args: string[]): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const read = (chunk: string) => {
      output += chunk;
    };
    child.stdout.setEncoding('utf8').on('data', read);
    child.stderr.setEncoding('utf8').on('data', read);
    const timer = setTimeout(() => child.kill('SIGKILL'), CLI_TIMEOUT_MS);
    child.once('error', fail);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

/** The client scenarios this version of the suite has, from `conformance list`. */
async function clientScenarios(): Promise<string[]> {
  const { output } = await runCli(['list']);
  const section = output.split(/^Client scenarios.*$/m)[1] ?? '';
  const names = [...section.matchAll(/^ {2}- (\S+)$/gm)].map((m) => m[1] ?? '');
  if (names.length === 0) throw new Error(`conformance list named no client scenarios:\n${output}`);
  return names;
}

/** The command the suite runs, the server URL appended; quoted, since the suite hands it to a shell. */
function driverCommand(): string {
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  return [process.execPath, '--import', 'tsx', driver].map(quote).join(' ');
}

/** The saved results of one scenario: `<outDir>/<scenario>-<timestamp>/`. */
function resultDir(outDir: string, scenario: string): string | undefined {
  const parent = join(outDir, dirname(scenario));
  if (!existsSync(parent)) return undefined;
  const prefix = `${basename(scenario)}-`;
  const found = readdirSync(parent).find(
    (d) => d.startsWith(prefix) && /^\d{4}-\d\d-\d\dT[\d-]+Z$/.test(d.slice(prefix.length)),
  );
  return found === undefined ? undefined : join(parent, found);
}

/** Why the driver gave up (its own `navi-client (…): …` line), else the end of its stderr. */
function driverSaid(stderr: string): string[] {
  const own = stderr.split('\n').filter((line) => line.startsWith('navi-client ('));
  if (own.length > 0) return own.map((line) => `client: ${line.slice(0, STDERR_TAIL_CHARS)}`);
  const tail = stderr.trim().slice(-STDERR_TAIL_CHARS);
  return tail ? [`client stderr: …${tail}`] : [];
}

/** Runs one scenario; its failed or warning checks, and what the driver said about them. */
async function runScenario(
  scenario: string,
  outDir: string,
): Promise<ScenarioResult & { cliCode: number | null }> {
  const { code, output } = await runCli([
    'client',
    '--command',
    driverCommand(),
    '--scenario',
    scenario,
    '--timeout',
    String(SCENARIO_TIMEOUT_MS),
    '--expected-failures',
    baselineFile,
    '--output-dir',
    outDir,
  ]);
  const dir = resultDir(outDir, scenario);
  const checksFile = dir && join(dir, 'checks.json');
  if (!checksFile || !existsSync(checksFile))
    return {
      scenario,
      cliCode: code,
      failures: [`the scenario did not run to the end:\n${output.slice(-2000)}`],
    };
  const checks = JSON.parse(readFileSync(checksFile, 'utf8')) as Check[];
  const failures = checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map(
      (c) =>
        `${c.id}: ${c.status === 'WARNING' ? 'warning: ' : ''}${c.errorMessage ?? c.description ?? c.status}`,
    );
  if (failures.length > 0 && dir) failures.push(...driverSaid(readFileSync(join(dir, 'stderr.txt'), 'utf8')));
  return { scenario, cliCode: code, failures };
}

async function pool<T, R>(items: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return results;
}

/** Runs every client scenario against Navi's client; resolves to whether the baseline holds. */
export async function checkClient(): Promise<boolean> {
  const baselineName = `${CLIENT_TARGET}.baseline.yml`;
  const baseline = parseClientBaseline(readFileSync(baselineFile, 'utf8'), baselineName);
  const scenarios = await clientScenarios();
  const outDir = mkdtempSync(join(tmpdir(), 'navi-conformance-client-'));
  let results: Awaited<ReturnType<typeof runScenario>>[];
  try {
    const plain = scenarios.filter((s) => !s.startsWith('auth/'));
    const auth = scenarios.filter((s) => s.startsWith('auth/'));
    results = [
      ...(await pool(plain, 1, (s) => runScenario(s, outDir))),
      ...(await pool(auth, AUTH_PARALLEL, (s) => runScenario(s, outDir))),
    ];
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
  const { unexpected, nowPassing, notRun } = reportComparison(results, baseline, {
    label: `${CLIENT_TARGET} (Navi's MCP client)`,
    baselineName,
    fixHint: "fix Navi's client",
  });
  // The suite's own verdict on the same baseline must agree: it is what anyone running it by hand sees.
  const cliFailed = results.filter((r) => r.cliCode !== 0).map((r) => r.scenario);
  const ownVerdict = unexpected.length === 0 && nowPassing.length === 0 && notRun.length === 0;
  if (ownVerdict && cliFailed.length > 0)
    console.log(
      `\nThe suite's CLI failed ${cliFailed.join(', ')} although the baseline holds; see its output.`,
    );
  return ownVerdict && cliFailed.length === 0;
}

/**
 * The conformance baselines: the scenarios a server (or Navi's client) is expected to fail, each
 * with the reason. A server's file is a flat YAML map under `server:`, one `scenario: reason` line
 * per entry (comments and blank lines allowed), which this reads without a YAML library and
 * refuses anything else; the client's is described at `parseClientBaseline`.
 */

export type Baseline = ReadonlyMap<string, string>;

/** Parses the baseline text; throws an Error naming the line that is not `scenario: reason`. */
export function parseBaseline(text: string, file = 'baseline'): Baseline {
  const entries = new Map<string, string>();
  let inServer = false;
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\s+$/, '');
    const where = `${file}:${index + 1}`;
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    if (line === 'server:') {
      inServer = true;
      return;
    }
    const entry = line.match(/^ {2}([a-z0-9][a-z0-9-]*):\s+(\S.*)$/);
    if (!inServer || !entry)
      throw new Error(
        `${where}: expected "  scenario-name: why it is expected to fail" under "server:", found ${JSON.stringify(raw)}`,
      );
    const [, scenario = '', reason = ''] = entry;
    if (entries.has(scenario)) throw new Error(`${where}: ${scenario} is listed twice`);
    entries.set(scenario, reason);
  });
  return entries;
}

/**
 * Parses a client baseline, the YAML the suite's own `--expected-failures` reads: a list under
 * `client:`, one `  - scenario  # why it is expected to fail` line per entry (the reason is a
 * comment there, since the suite takes only names), or `client: []` when nothing is expected
 * to fail. Throws an Error naming the line that is anything else.
 */
export function parseClientBaseline(text: string, file = 'baseline'): Baseline {
  const entries = new Map<string, string>();
  let section: 'none' | 'list' | 'empty' = 'none';
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\s+$/, '');
    const where = `${file}:${index + 1}`;
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    if (section === 'none' && (line === 'client:' || line === 'client: []')) {
      section = line === 'client:' ? 'list' : 'empty';
      return;
    }
    const entry = line.match(/^ {2}- ([a-z0-9][\w./-]*)\s+#\s*(\S.*)$/);
    if (section !== 'list' || !entry)
      throw new Error(
        `${where}: expected "  - scenario-name  # why it is expected to fail" under "client:", found ${JSON.stringify(raw)}`,
      );
    const [, scenario = '', reason = ''] = entry;
    if (entries.has(scenario)) throw new Error(`${where}: ${scenario} is listed twice`);
    entries.set(scenario, reason);
  });
  if (section === 'none') throw new Error(`${file}: no "client:" list (write "client: []" when it is empty)`);
  if (section === 'list' && entries.size === 0)
    throw new Error(`${file}: "client:" lists nothing, which the suite cannot read; write "client: []"`);
  return entries;
}

export interface ScenarioResult {
  scenario: string;
  /** Messages of the failed (or warning) checks; empty when the scenario passed. */
  failures: string[];
}

export interface Comparison {
  /** Failed and not in the baseline: these make the run fail. */
  unexpected: ScenarioResult[];
  /** Failed, as the baseline says. */
  expected: ScenarioResult[];
  /** In the baseline but passing now: the entry can go. */
  nowPassing: string[];
  /** In the baseline but not run at all (renamed or removed from the suite). */
  notRun: string[];
}

export function compare(results: readonly ScenarioResult[], baseline: Baseline): Comparison {
  const ran = new Set(results.map((r) => r.scenario));
  const failed = results.filter((r) => r.failures.length > 0);
  return {
    unexpected: failed.filter((r) => !baseline.has(r.scenario)),
    expected: failed.filter((r) => baseline.has(r.scenario)),
    nowPassing: results
      .filter((r) => r.failures.length === 0 && baseline.has(r.scenario))
      .map((r) => r.scenario),
    notRun: [...baseline.keys()].filter((s) => !ran.has(s)),
  };
}

/**
 * Compares the results with the baseline and prints the summary both drivers show: the counts,
 * the entries the baseline can lose, and each new failure with `fixHint` saying what to do.
 */
export function reportComparison(
  results: readonly ScenarioResult[],
  baseline: Baseline,
  what: { label: string; baselineName: string; fixHint: string },
): Comparison {
  const comparison = compare(results, baseline);
  const { unexpected, expected, nowPassing, notRun } = comparison;
  const passed = results.length - unexpected.length - expected.length;
  console.log(
    `conformance: ${what.label}, ${results.length} scenarios: ${passed} passed, ${expected.length} failed as the baseline expects, ${unexpected.length} new failure(s).`,
  );
  if (nowPassing.length > 0) {
    console.log(`\nNow passing: remove these from test/conformance/${what.baselineName}:`);
    for (const s of nowPassing) console.log(`  ✓ ${s}`);
  }
  if (notRun.length > 0) {
    console.log('\nIn the baseline but not run by this version of the suite (remove or rename them):');
    for (const s of notRun) console.log(`  ? ${s}`);
  }
  if (unexpected.length > 0) {
    console.log(`\nNew failures (${what.fixHint}, or add the scenario to the baseline with the reason):`);
    for (const r of unexpected) {
      console.log(`  ✗ ${r.scenario}`);
      for (const f of r.failures) console.log(`      ${f.replaceAll('\n', '\n      ')}`);
    }
  }
  return comparison;
}

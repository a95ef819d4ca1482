/**
 * The conformance baseline: the scenarios a server is expected to fail, each with the reason.
 * The file is a flat YAML map under `server:`, one `scenario: reason` line per entry (comments
 * and blank lines allowed), which this reads without a YAML library and refuses anything else.
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

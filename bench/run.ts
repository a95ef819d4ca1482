/**
 * `npm run bench`: every figure Navi tracks, printed as one table with its goal and whether it
 * holds. Each group runs on its own, so one that fails (say, a missing optional program) is
 * reported and the others still run. `npm run bench -- relay sessions` runs only the named
 * groups; `--name value` pairs after them reach the groups (`streams --streams 200 --rate 50`).
 */
import type { BenchOptions, BenchRow } from './types.js';

interface Group {
  name: string;
  run: (options: BenchOptions) => Promise<BenchRow[]>;
}

const groups: Group[] = [
  { name: 'relay', run: async () => (await import('./relay.js')).benchRelay() },
  { name: 'streams', run: async (options) => (await import('./streams.js')).benchStreams(options) },
  { name: 'sessions', run: async (options) => (await import('./sessions.js')).benchSessions(options) },
  { name: 'search', run: async () => (await import('./search.js')).benchSearch() },
  { name: 'stores', run: async (options) => (await import('./stores.js')).benchStores(options) },
  { name: 'executor', run: async () => (await import('./executor.js')).benchExecutor() },
  { name: 'budget', run: async () => (await import('./tool-budget.js')).benchToolBudget() },
  { name: 'mcp', run: async () => (await import('./mcp.js')).benchMcp() },
  { name: 'servers', run: async () => (await import('./servers.js')).benchServers() },
  { name: 'llamacpp', run: async () => (await import('./llamacpp.js')).benchLlamacpp() },
  { name: 'footprint', run: async (o) => (await import('./footprint.js')).benchFootprint(o) },
  { name: 'turn', run: async (options) => (await import('./turn.js')).benchTurn(options) },
  {
    name: 'memory',
    run: async (options) => {
      const memory = await import('./memory.js');
      return [...(await memory.benchMemorySearch(options)), ...(await memory.benchCompression())];
    },
  },
];

function format(value: number): string {
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** Group names, and `--name value` flags (a flag with no value is `true`). */
function parseArgs(args: string[]): { wanted: string[]; options: BenchOptions } {
  const wanted: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      wanted.push(arg);
      continue;
    }
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith('--')) {
      flags[arg.slice(2)] = next;
      i++;
    } else {
      flags[arg.slice(2)] = 'true';
    }
  }
  return { wanted, options: { flags } };
}

function verdict(row: BenchRow): string {
  if (!row.goal) return '';
  const { value, direction } = row.goal;
  const holds = direction === 'max' ? row.value <= value : row.value >= value;
  return `${direction === 'max' ? '≤' : '≥'} ${format(value)}  ${holds ? 'holds' : 'MISSES'}`;
}

async function main(): Promise<number> {
  const { wanted, options } = parseArgs(process.argv.slice(2));
  const unknown = wanted.filter((w) => !groups.some((g) => g.name === w));
  if (unknown.length > 0) {
    console.error(
      `unknown bench group(s): ${unknown.join(', ')}; known: ${groups.map((g) => g.name).join(', ')}`,
    );
    return 2;
  }
  const selected = wanted.length > 0 ? groups.filter((g) => wanted.includes(g.name)) : groups;
  const rows: (BenchRow & { group: string })[] = [];
  let failures = 0;
  for (const group of selected) {
    process.stderr.write(`bench: ${group.name}…\n`);
    try {
      for (const row of await group.run(options)) rows.push({ ...row, group: group.name });
    } catch (err) {
      failures += 1;
      process.stderr.write(`bench: ${group.name} failed: ${(err as Error).stack ?? String(err)}\n`);
    }
  }
  const nameWidth = Math.max(...rows.map((r) => r.name.length), 10);
  const unitWidth = Math.max(...rows.map((r) => r.unit.length), 4);
  console.log(
    `\n${'group'.padEnd(10)} ${'measure'.padEnd(nameWidth)} ${'value'.padStart(10)}  ${'unit'.padEnd(unitWidth)}  goal`,
  );
  for (const r of rows) {
    console.log(
      `${r.group.padEnd(10)} ${r.name.padEnd(nameWidth)} ${format(r.value).padStart(10)}  ${r.unit.padEnd(unitWidth)}  ${verdict(r)}`.trimEnd(),
    );
  }
  const notes = rows.filter((r) => r.note);
  if (notes.length > 0) {
    console.log('\nnotes:');
    for (const r of notes) console.log(`  ${r.name}: ${r.note}`);
  }
  console.log(`\nnode ${process.version}, ${process.platform} ${process.arch}, ${new Date().toISOString()}`);
  return failures === 0 ? 0 : 1;
}

process.exitCode = await main();

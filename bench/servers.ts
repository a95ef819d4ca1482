/**
 * Shipped MCP server figures for `npm run bench`: how long navi-web takes from spawn to an
 * answered `initialize` (what Navi waits for before its tools appear), launched as Navi launches
 * it (`node --import tsx`, so TypeScript is compiled on the way), and its resident memory once
 * idle after `initialize` and `tools/list` (Chromium is started only by web_view, so not here).
 * Run alone with `node --import tsx bench/servers.ts`.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { repoRoot } from '../test/support/navi.js';
import type { BenchRow } from './types.js';

const RUNS = 5;

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
  if (!line?.[1]) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(line[1]) / 1024;
}

async function startOnce(): Promise<{ startMs: number; rss: number; tools: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', 'src/servers/navi-web/main.ts'],
    cwd: repoRoot,
    // Defaults for every setting, as in a fresh install.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'bench', version: '0.0.0' });
  try {
    const start = performance.now();
    await client.connect(transport);
    const startMs = performance.now() - start;
    const { tools } = await client.listTools();
    const pid = transport.pid;
    if (pid === null) throw new Error('navi-web has no pid');
    return { startMs, rss: rssMb(pid), tools: tools.length };
  } finally {
    await client.close();
  }
}

export async function benchServers(): Promise<BenchRow[]> {
  const starts: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await startOnce();
    if (run.tools !== 3) throw new Error(`navi-web listed ${run.tools} tools, expected 3`);
    starts.push(run.startMs);
    rss.push(run.rss);
  }
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  const note = `navi-web over stdio, median of ${RUNS} starts`;
  return [
    { name: 'navi-web start-up (spawn → initialize answered)', value: median(starts), unit: 'ms', note },
    { name: 'navi-web idle RSS (after initialize + tools/list)', value: median(rss), unit: 'MB', note },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await benchServers()) {
    console.log(
      `${r.name.padEnd(52)} ${r.value.toFixed(1).padStart(10)} ${r.unit}${r.note ? `  (${r.note})` : ''}`,
    );
  }
}

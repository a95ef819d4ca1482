/**
 * MCP figures for `npm run bench`: the round trip of one tool call to a stdio MCP server
 * (`@modelcontextprotocol/server-everything`'s echo) through McpManager and the registered
 * tool, i.e. JSON-RPC over the child's pipes plus result conversion. Start-up is not counted.
 * Run alone with `node --import tsx bench/mcp.ts`.
 */

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { testSettings } from '../src/config/settings.js';
import { McpManager } from '../src/mcp/manager.js';
import { ToolRegistry } from '../src/tools/registry.js';
import { testContext } from '../src/tools/test-helpers.js';
import { repoRoot, tempDir } from '../test/support/navi.js';
import type { BenchRow } from './types.js';

const CALLS = 200;
const WARMUP = 20;

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

export async function benchMcp(): Promise<BenchRow[]> {
  const dir = tempDir('navi-bench-mcp-');
  writeFileSync(
    join(dir, 'everything.json'),
    JSON.stringify({
      name: 'everything',
      command: join(repoRoot, 'node_modules', '.bin', 'mcp-server-everything'),
      args: ['stdio'],
    }),
  );
  const registry = new ToolRegistry();
  const manager = new McpManager({
    registry,
    settings: testSettings({ MCP_SERVERS_DIR: dir, MCP_SCAFFOLD_DIR: join(dir, 'scaffold') }),
    logger: pino({ level: 'silent' }),
  });
  try {
    manager.start();
    await manager.ready();
    const echo = registry.get('mcp__everything__echo')?.tool;
    if (!echo) {
      const status = manager.server('everything');
      throw new Error(`server-everything did not start: ${status?.last_error ?? status?.state ?? 'unknown'}`);
    }
    const ctx = testContext();
    for (let i = 0; i < WARMUP; i++) await echo.execute({ message: 'warm-up' }, ctx);
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      const result = await echo.execute({ message: `call ${i}` }, ctx);
      times.push(performance.now() - start);
      if (!result.success) throw new Error(`echo failed: ${result.error}`);
    }
    times.sort((a, b) => a - b);
    const note = `server-everything echo over stdio, ${CALLS} calls`;
    return [
      { name: 'MCP tool call round trip, median', value: percentile(times, 50), unit: 'ms/call', note },
      { name: 'MCP tool call round trip, p95', value: percentile(times, 95), unit: 'ms/call', note },
    ];
  } finally {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await benchMcp()) {
    console.log(
      `${r.name.padEnd(45)} ${r.value.toFixed(3).padStart(10)} ${r.unit}${r.note ? `  (${r.note})` : ''}`,
    );
  }
}

/**
 * The refusal every `navi` command prints the same way (src/cli/cli-io.ts): exit code 1 and one
 * line on stderr, `navi <command>: …`. Apart from navi-process.ts, which benchmarks import
 * outside vitest.
 */
import { expect } from 'vitest';
import type { NaviRun } from './navi-process.js';

/** Checks that `run` is a refusal of `navi <command>` whose line holds each of `parts`. */
export function expectCliRefusal(run: NaviRun, command: string, ...parts: string[]): void {
  expect(run.code, run.stderr + run.stdout).toBe(1);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr.startsWith(`navi ${command}: `)).toBe(true);
  for (const part of parts) expect(run.stderr).toContain(part);
}

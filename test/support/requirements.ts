/**
 * Tests that need a system program (Chromium, OpenSCAD, Python, bubblewrap, sshd…) skip with a
 * visible reason when it is missing, and fail instead when NAVI_REQUIRE_ALL=1 (as in CI).
 */
import { execFileSync } from 'node:child_process';

export const requireAll = process.env.NAVI_REQUIRE_ALL === '1';

/** Absolute path of `program` on PATH, or undefined. */
export function findProgram(program: string): string | undefined {
  try {
    const out = execFileSync('sh', ['-c', `command -v ${JSON.stringify(program)}`], {
      encoding: 'utf8',
    }).trim();
    return out.length > 0 ? out : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Returns whether the suite may run. When the program is missing: throws under
 * NAVI_REQUIRE_ALL=1, otherwise prints why the suite is skipped and returns false.
 * Use as `describe.skipIf(!needsProgram('chromium', 'web client e2e'))(…)`.
 */
export function needsProgram(program: string, what: string): boolean {
  if (findProgram(program)) return true;
  const reason = `${what}: "${program}" is not installed`;
  if (requireAll) throw new Error(`${reason}, and NAVI_REQUIRE_ALL=1 forbids skipping`);
  process.stderr.write(`SKIP ${reason} (install it, e.g. apt-get install ${program}, to run these tests)\n`);
  return false;
}

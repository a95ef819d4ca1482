/**
 * Tests that need a system program (Chromium, OpenSCAD, Python, bubblewrap, sshd…) skip with a
 * visible reason when it is missing, and fail instead when NAVI_REQUIRE_ALL=1 (as in CI).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

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

/**
 * Where the tests look for the llama.cpp runtime: LLAMACPP_RUNTIME_DIR, else the checkout's
 * `.navi-runtime` (where .ci/run installs it), else the default data folder's `runtime`.
 */
export function llamacppRuntimeDir(): string {
  const fromEnv = process.env.LLAMACPP_RUNTIME_DIR;
  if (fromEnv) return resolve(fromEnv);
  const inCheckout = resolve(import.meta.dirname, '../../.navi-runtime');
  if (existsSync(join(inCheckout, 'node_modules', 'node-llama-cpp', 'package.json'))) return inCheckout;
  const dataHome = process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(dataHome, 'navi', 'runtime');
}

/**
 * Like `needsProgram`, for tests that run a model on the llama.cpp runtime: true when it is
 * installed in `llamacppRuntimeDir()`.
 */
export function needsLlamacppRuntime(what: string): boolean {
  const dir = llamacppRuntimeDir();
  if (existsSync(join(dir, 'node_modules', 'node-llama-cpp', 'package.json'))) return true;
  const reason = `${what}: the llama.cpp runtime is not installed in ${dir}`;
  if (requireAll) throw new Error(`${reason}, and NAVI_REQUIRE_ALL=1 forbids skipping`);
  process.stderr.write(
    `SKIP ${reason} (install it with \`LLAMACPP_RUNTIME_DIR=${dir} node bin/navi.js llamacpp install\` to run these tests)\n`,
  );
  return false;
}

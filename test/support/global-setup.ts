/**
 * Runs once before any test file: builds the web client when it is missing or stale, so the
 * browser test files (which run in parallel) do not each build it on a cold checkout.
 */
import { ensureWebBuild } from '../../src/cli/web-build.js';
import { silentLogger } from '../../src/config/logger.js';
import { repoRoot } from './navi.js';

export async function setup(): Promise<void> {
  await ensureWebBuild({ root: repoRoot, logger: silentLogger() });
}

/** A profiles folder for a test: the shipped profiles plus the test's own. */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from './navi.js';

export function profilesDir(extra: Record<string, unknown>[] = []): string {
  const dir = join(tempDir('navi-profiles-'), 'profiles');
  mkdirSync(dir, { recursive: true });
  cpSync(join(repoRoot, 'profiles'), dir, { recursive: true });
  for (const p of extra) writeFileSync(join(dir, `${String(p.id)}.json`), JSON.stringify(p));
  return dir;
}

/** A profile without planning, allowed every tool, for tests that script the LLM exactly. */
export const plainProfile = {
  id: 'plain',
  name: 'Plain',
  system_prompt: 'You are a test profile.',
  enabled_tools: ['*'],
  planning_enabled: false,
  temperature: 0.5,
  max_iterations: 5,
};

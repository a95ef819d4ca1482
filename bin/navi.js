#!/usr/bin/env node
// Navi runs its compiled build (dist/, from `npm run build`) when that was built from the
// sources as they are now, and otherwise its TypeScript through tsx: a fresh clone runs with no
// build step, and an edited source file is never run stale.
import { fileURLToPath } from 'node:url';
import { importEntry } from './build-state.js';

const { main } = await importEntry('src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2), {
  checkout: fileURLToPath(new URL('..', import.meta.url)),
});

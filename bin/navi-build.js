#!/usr/bin/env node
// `npm run build` (src/cli/build.ts): compiles src/ to dist/. Plain JavaScript, so it starts the
// same way with or without a build, from any working folder (the service unit runs it).
import { importEntry } from './build-state.js';

const { runBuild } = await importEntry('src/cli/build.ts');
process.exitCode = await runBuild(process.argv.slice(2));

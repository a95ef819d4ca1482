#!/usr/bin/env node
// Navi runs its TypeScript sources directly through tsx: no build step before `npm start`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));

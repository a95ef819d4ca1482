#!/usr/bin/env node
// Runs one of Navi's own programs by its source file, compiled when the build is current:
// `node bin/navi-run.js src/servers/navi-web/main.ts [args…]` is how the shipped MCP servers
// start (mcp_servers.shipped/*.json). The program sees its own file as argv[1], as it would
// run directly.
import { resolve } from 'node:path';
import { importEntry, programFolder } from './build-state.js';

const file = process.argv[2];
if (!file?.endsWith('.ts')) {
  process.stderr.write('usage: node bin/navi-run.js src/<program>.ts [arguments…]\n');
  process.exit(2);
}
process.argv.splice(1, 2, resolve(programFolder, file));
await importEntry(file);

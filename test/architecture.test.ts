/**
 * Checks the layering of CONTRIBUTING.md: a folder of src/ never imports a higher layer, the
 * shipped MCP servers stay apart from Navi, and the web client imports only the protocol types.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const layers: Record<string, number> = {
  protocol: 0,
  config: 0,
  util: 0,
  llm: 1,
  store: 2,
  // The secrets vault, beside the store; the gnexus-creds server opens it too.
  vault: 2,
  machine: 3,
  // Shipped MCP servers: their own processes, built on the machine layer and nothing above it.
  servers: 3.5,
  tools: 4,
  memory: 4,
  recall: 4,
  mcp: 5,
  agent: 6,
  server: 7,
  cli: 8,
};

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist') continue;
    if (statSync(path).isDirectory()) out.push(...files(path));
    else if (/\.(ts|vue)$/.test(name)) out.push(path);
  }
  return out;
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ]
    .map((m) => m[1] ?? m[2] ?? '')
    .filter((s) => s.startsWith('.'));
}

function folderOf(path: string): string | undefined {
  const rel = relative(join(root, 'src'), path);
  if (rel.startsWith('..')) return undefined;
  return rel.split('/')[0];
}

describe('architecture', () => {
  it('src/ layers import only their own or lower layers', () => {
    const violations: string[] = [];
    for (const file of files(join(root, 'src'))) {
      const from = folderOf(file);
      if (!from || layers[from] === undefined) continue;
      for (const spec of imports(file)) {
        const to = folderOf(resolve(file, '..', spec));
        if (!to || layers[to] === undefined) continue;
        if (layers[to]! > layers[from]!) violations.push(`${relative(root, file)} → ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('shipped servers import only the protocol, config, util, vault and machine folders', () => {
    const allowed = new Set(['protocol', 'config', 'util', 'vault', 'machine', 'servers']);
    const violations: string[] = [];
    for (const file of files(join(root, 'src', 'servers'))) {
      for (const spec of imports(file)) {
        const target = resolve(file, '..', spec);
        const to = folderOf(target);
        // Outside src/, only the package's own version, and the shared test set-up for tests.
        const ok = to
          ? allowed.has(to)
          : target === join(root, 'package.json') ||
            (file.endsWith('.test.ts') && target.startsWith(join(root, 'test', 'support')));
        if (!ok) violations.push(`${relative(root, file)} → ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('the vault imports only the protocol, config and util folders', () => {
    const allowed = new Set(['protocol', 'config', 'util', 'vault']);
    const violations: string[] = [];
    for (const file of files(join(root, 'src', 'vault'))) {
      for (const spec of imports(file)) {
        const to = folderOf(resolve(file, '..', spec));
        if (!to || !allowed.has(to)) violations.push(`${relative(root, file)} → ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('Navi never imports a shipped server: it starts them as processes', () => {
    const violations: string[] = [];
    for (const file of files(join(root, 'src'))) {
      if (folderOf(file) === 'servers') continue;
      for (const spec of imports(file)) {
        if (folderOf(resolve(file, '..', spec)) === 'servers')
          violations.push(`${relative(root, file)} → ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('every src/ folder has a layer', () => {
    const folders = readdirSync(join(root, 'src')).filter((n) =>
      statSync(join(root, 'src', n)).isDirectory(),
    );
    expect(folders.filter((f) => layers[f] === undefined)).toEqual([]);
  });

  it('the web client imports nothing of the server but the protocol', () => {
    const web = join(root, 'web', 'src');
    let webFiles: string[] = [];
    try {
      webFiles = files(web);
    } catch {
      return; // no web client yet
    }
    const violations: string[] = [];
    for (const file of webFiles) {
      for (const spec of imports(file)) {
        const target = resolve(file, '..', spec);
        const rel = relative(root, target);
        if (rel.startsWith('src/') && !rel.startsWith('src/protocol/'))
          violations.push(`${relative(root, file)} → ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });
});

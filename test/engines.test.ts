/**
 * A clean `npm install` on Node 20.19 or newer prints no EBADENGINE warning: every package the
 * lock file installs says (in its own `engines.node`) that it runs on that Node. package.json
 * admits any Node 20, but the build tools (vite 8 and its bundler) need 20.19, which the README
 * says, so that is the oldest release checked here. A dependency that raised its floor above
 * ours shows up here, named, instead of as a warning people learn to ignore; the fix is an
 * `overrides` entry in package.json or a pin.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

/** The oldest Node 20 release Navi's dependencies accept (the README's requirement). */
const OLDEST_NODE_20 = '20.19.0';

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
}

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(join(root, file), 'utf8'));
}

const manifest = readJson('package.json') as { engines?: { node?: string } };
const lock = readJson('package-lock.json') as {
  lockfileVersion?: number;
  packages?: Record<string, LockEntry>;
};

/** Every package of a lock file whose `engines.node` does not admit `node`. */
function refusing(node: string, packages = lock.packages ?? {}): string[] {
  return Object.entries(packages).flatMap(([path, entry]) => {
    // "" is Navi itself; an old-style array of engines says nothing about Node's version.
    const range = path === '' || Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (range === undefined || semver.satisfies(node, range, { includePrerelease: true })) return [];
    return [`${path.replace(/^.*node_modules\//, '')}@${entry.version ?? '?'} needs node ${range}`];
  });
}

describe('the Node versions the dependencies accept', () => {
  const ours = manifest.engines?.node;

  it('reads a lock file that lists its packages with their engines', () => {
    expect(lock.lockfileVersion).toBeGreaterThanOrEqual(2);
    expect(Object.keys(lock.packages ?? {}).length).toBeGreaterThan(100);
    expect(ours, 'package.json names the Node versions Navi runs on in engines.node').toBeTypeOf('string');
  });

  it('names a Node 20 as the oldest Node Navi runs on', () => {
    const oldest = semver.minVersion(ours ?? '');
    expect(oldest?.major).toBe(20);
  });

  it('installs no package that refuses Node 20.19, the oldest release the README names', () => {
    expect(
      refusing(OLDEST_NODE_20),
      `packages that npm would warn about (EBADENGINE) on Node ${OLDEST_NODE_20}`,
    ).toEqual([]);
  });

  it('installs no package that refuses the Node these tests run on', () => {
    expect(refusing(process.versions.node)).toEqual([]);
  });

  it('would name a package whose engines refuse that Node', () => {
    // The check itself can fail: a range above Node 20 is reported with the package's name.
    const packages = {
      ...lock.packages,
      'node_modules/fastify/node_modules/too-new': { version: '2.0.2', engines: { node: '>=22' } },
    };
    expect(refusing('20.19.0', packages)).toEqual(['too-new@2.0.2 needs node >=22']);
  });
});

/**
 * The backups folder in the data folder holds copies of the database and the vault's key file
 * (`navi backup`, and the data `navi restore` moved aside), so the shared path guard hides it
 * like the originals, even with FS_ALLOWED_PATHS=*.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { testSettings } from '../../config/settings.js';
import { naviPathGuard } from './navi-paths.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-backups-hidden-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('refuses the backups folder and everything in it, and leaves the rest of the data folder alone', () => {
  const data = join(dir, 'data');
  const backup = join(data, 'backups', 'navi-20260301T120501Z');
  mkdirSync(backup, { recursive: true });
  writeFileSync(join(backup, 'vault.key'), 'a key');
  mkdirSync(join(data, 'models'));
  const guard = naviPathGuard(testSettings({ FS_ALLOWED_PATHS: '*', NAVI_DATA_DIR: data }), dir);
  for (const path of [
    join(data, 'backups'),
    join(backup, 'vault.key'),
    join(data, 'backups', 'later', 'navi.db'),
  ])
    expect(() => guard.assertAllowed(path), path).toThrow(/Navi's own private data/);
  expect(() => guard.assertAllowed(join(data, 'models', 'model.gguf'))).not.toThrow();
  // Nor may a file tool delete the data folder that holds it.
  expect(() => guard.assertRemovable(data)).toThrow(/no file tool may change/);
});

/** The models folder on a real temporary folder: listing, stopped downloads, removing. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CATALOG } from './catalog.js';
import { ModelStore, ModelStoreError } from './model-store.js';

let root: string;
let dir: string;
let store: ModelStore;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'navi-store-'));
  dir = join(root, 'models');
  mkdirSync(dir);
  store = new ModelStore(dir);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function refusal(promise: Promise<unknown>): Promise<ModelStoreError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ModelStoreError);
  return err as ModelStoreError;
}

describe('ModelStore', () => {
  it('lists the GGUF files with sizes, naming the recommended ones by alias', async () => {
    const known = CATALOG[1]!;
    writeFileSync(join(dir, 'mine.gguf'), Buffer.alloc(10));
    writeFileSync(join(dir, known.fileName), Buffer.alloc(20));
    writeFileSync(join(dir, 'notes.txt'), 'x');
    writeFileSync(join(dir, 'half.gguf.partial'), Buffer.alloc(5));
    mkdirSync(join(dir, 'folder.gguf'));
    const models = await store.list();
    expect(models).toEqual(
      [
        { name: known.fileName, size_bytes: 20, alias: known.alias },
        { name: 'mine.gguf', size_bytes: 10 },
      ].sort((a, b) => (a.name < b.name ? -1 : 1)),
    );
    expect(await store.partials()).toEqual([{ name: 'half.gguf', bytes: 5 }]);
  });

  it('lists nothing while the folder does not exist', async () => {
    const missing = new ModelStore(join(root, 'nowhere'));
    expect(await missing.list()).toEqual([]);
    expect(await missing.partials()).toEqual([]);
  });

  it('removes a model by file name or by alias, with its stopped download', async () => {
    writeFileSync(join(dir, 'mine.gguf'), Buffer.alloc(10));
    writeFileSync(join(dir, 'mine.gguf.partial'), Buffer.alloc(3));
    expect(await store.remove('mine.gguf')).toBe('mine.gguf');
    const known = CATALOG[0]!;
    writeFileSync(join(dir, known.fileName), Buffer.alloc(10));
    expect(await store.remove(known.alias)).toBe(known.fileName);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('says so when the model to remove is not there', async () => {
    const err = await refusal(store.remove('missing.gguf'));
    expect(err.kind).toBe('not_found');
    expect(err.message).toContain('there is no model "missing.gguf"');
    expect(err.message).toContain('navi model list');
  });

  it.each([
    ['../x.gguf', 'not a plain file name'],
    ['a/b', 'not a plain file name'],
    ['x.exe', 'does not end in .gguf'],
    ['/etc/passwd', 'not a plain file name'],
  ])('refuses to remove %j and touches nothing outside the folder', async (name, words) => {
    writeFileSync(join(root, 'x.gguf'), 'keep me');
    const err = await refusal(store.remove(name));
    expect(err.kind).toBe('invalid');
    expect(err.message).toContain(words);
    expect(existsSync(join(root, 'x.gguf'))).toBe(true);
  });
});

/** The once-only rule of form submissions, on a real SQLite key-value store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStores, type SqliteStores } from '../store/sqlite/index.js';
import { FormSubmissions } from './form-submissions.js';

let dir: string;
let stores: SqliteStores;
function open(): SqliteStores {
  dir = mkdtempSync(join(tmpdir(), 'forms-'));
  stores = createSqliteStores(join(dir, 'navi.db'));
  return stores;
}
afterEach(() => {
  stores?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('FormSubmissions', () => {
  it('lets each form of each session be submitted once', async () => {
    const forms = new FormSubmissions(open().kv);
    expect(await forms.claim('s1', 'trip')).toBe(true);
    expect(await forms.claim('s1', 'trip')).toBe(false);
    expect(await forms.claim('s1', 'hotel')).toBe(true);
    expect(await forms.claim('s2', 'trip')).toBe(true);
  });

  it('gives exactly one of two simultaneous submissions the claim', async () => {
    const forms = new FormSubmissions(open().kv);
    const answers = await Promise.all([
      forms.claim('s1', 'f'),
      forms.claim('s1', 'f'),
      forms.claim('s1', 'g'),
    ]);
    expect(answers).toEqual([true, false, true]);
  });

  it('remembers across restarts, and a released claim can be made again', async () => {
    open();
    const path = join(dir, 'navi.db');
    expect(await new FormSubmissions(stores.kv).claim('s1', 'f')).toBe(true);
    stores.close();
    stores = createSqliteStores(path);
    const forms = new FormSubmissions(stores.kv);
    expect(await forms.claim('s1', 'f')).toBe(false);
    await forms.release('s1', 'f');
    expect(await forms.claim('s1', 'f')).toBe(true);
  });
});

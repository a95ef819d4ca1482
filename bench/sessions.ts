/**
 * Session persistence at 10, 1 000 and 100 000 messages: the time to load a session (both
 * buffers, as the agent does at the start of a run) and to append one turn to it. Appending
 * should cost what the turn adds, whatever the session's length.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { maskingSessionStore } from '../src/store/masking-store.js';
import { createSqliteStores } from '../src/store/sqlite/index.js';
import type { BufferedMessage, StoredMessage } from '../src/store/types.js';
import { SecretMasker } from '../src/util/secret-masker.js';
import { tempDir } from '../test/support/navi.js';
import type { BenchRow } from './types.js';

const APPENDS = 200;

function message(i: number): StoredMessage {
  return {
    id: `m${i}`,
    role: i % 2 ? 'assistant' : 'user',
    content: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(4)}`,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  };
}

const entry = (i: number): BufferedMessage => ({ message: message(i), display: true, context: true });

export async function benchSessions(sizes: number[] = [10, 1_000, 100_000]): Promise<BenchRow[]> {
  const dir = tempDir('navi-bench-sessions-');
  const stores = createSqliteStores(join(dir, 'navi.db'));
  const rows: BenchRow[] = [];
  try {
    for (const size of sizes) {
      const id = `s${size}`;
      await stores.sessions.create({ id, profile_id: 'bench' });
      for (let start = 0; start < size; start += 5_000) {
        const batch: BufferedMessage[] = [];
        for (let i = start; i < Math.min(size, start + 5_000); i++) batch.push(entry(i));
        await stores.sessions.append(id, batch);
      }
      const loads = size >= 100_000 ? 5 : 50;
      let started = performance.now();
      for (let n = 0; n < loads; n++) {
        await stores.sessions.getMessages(id);
        await stores.sessions.getContext(id);
      }
      rows.push({
        name: `load a session of ${size} messages`,
        value: (performance.now() - started) / loads,
        unit: 'ms',
        note: 'display and context buffers',
      });
      started = performance.now();
      for (let n = 0; n < APPENDS; n++)
        await stores.sessions.append(id, [entry(size + 2 * n), entry(size + 2 * n + 1)]);
      rows.push({
        name: `append a turn to a session of ${size} messages`,
        value: ((performance.now() - started) * 1000) / APPENDS,
        unit: 'µs',
        note: 'two messages, both buffers, one transaction',
      });
    }
    // As Navi writes the transcript: through the masker, with three secrets known.
    const masked = maskingSessionStore(
      stores.sessions,
      new SecretMasker([
        { name: 'NAVI_API_TOKEN', value: 'navi-token-5f2b9c0e7a1d4e3f' },
        { name: 'OPENAI_API_KEY', value: 'sk-proj-0123456789abcdefghijklmnop/+=' },
        { name: 'GITHUB_TOKEN', value: 'ghp_abcdefghijklmnopqrstuvwxyz012345' },
      ]),
    );
    const size = sizes[1] ?? sizes[0]!;
    const started = performance.now();
    for (let n = 0; n < APPENDS; n++)
      await masked.append(`s${size}`, [entry(size * 3 + 2 * n), entry(size * 3 + 2 * n + 1)]);
    rows.push({
      name: `append a turn to a session of ${size} messages, masked`,
      value: ((performance.now() - started) * 1000) / APPENDS,
      unit: 'µs',
      note: 'as Navi writes: both messages checked for 3 secrets first',
    });
    return rows;
  } finally {
    stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await benchSessions()) console.log(row);
}

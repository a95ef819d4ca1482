/**
 * Two Navi processes on one PostgreSQL database: here two connection pools on one schema, each
 * with stores of its own, writing to the same session and redeeming the same codes at once.
 * What one process writes never takes the seq the other took, each append stays in one piece
 * and in order, and one code pairs one client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSchema, needsPostgres } from '../test-engines.js';
import type { BufferedMessage, StoredMessage } from '../types.js';
import { createPostgresStores, type PostgresStores } from './index.js';

const msg = (id: string): StoredMessage => ({
  id,
  role: 'user',
  content: `text ${id}`,
  created_at: '2026-01-01T00:00:00.000Z',
});

describe.runIf(needsPostgres('shared-database tests'))('two processes on one PostgreSQL database', () => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let a: PostgresStores;
  let b: PostgresStores;

  beforeAll(async () => {
    schema = await createTestSchema();
    // Both migrate at once, as two processes starting together do.
    [a, b] = await Promise.all([
      createPostgresStores(schema.url, { max: 4 }),
      createPostgresStores(schema.url, { max: 4 }),
    ]);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await schema?.drop();
  });

  it('appends from both at once without losing, splitting or reordering any append', async () => {
    await a.sessions.create({ id: 's', profile_id: 'p' });
    const rounds = 25;
    const perAppend = 3;
    // Two lanes per process, each awaiting its own appends in turn as a run does; all four at once.
    const lanes = [
      ['ax', a, b],
      ['ay', a, b],
      ['bx', b, a],
      ['by', b, a],
    ] as const;
    const lane = async ([name, stores, other]: (typeof lanes)[number]) => {
      for (let i = 0; i < rounds; i++) {
        const entries: BufferedMessage[] = [];
        for (let k = 0; k < perAppend; k++) {
          // Every third message is display-only, so the two buffers number differently.
          entries.push({ message: msg(`${name}${i}.${k}`), display: true, context: k !== 2 });
        }
        await stores.sessions.append('s', entries, { context_token_count: i });
        // The other process saves into it, as a streamed answer's saver would.
        await other.sessions.updateMessage('s', `${name}${i}.0`, { content: 'saved' });
      }
    };
    const renames = async () => {
      // A rename interleaves with the appends, as an edit of the title would.
      for (let i = 0; i < rounds; i++) await b.sessions.update('s', { title: `title ${i}` });
    };
    await Promise.all([...lanes.map(lane), renames()]);

    const display = (await b.sessions.getMessages('s')).map((m) => m.id);
    const context = (await a.sessions.getContext('s')).map((m) => m.id);
    expect(display).toHaveLength(rounds * lanes.length * perAppend);
    expect(new Set(display).size).toBe(display.length);
    expect(context).toEqual(display.filter((id) => !id.endsWith('.2')));
    const saved = (await a.sessions.getMessages('s')).filter((m) => m.content === 'saved');
    expect(saved.map((m) => m.id).sort()).toEqual(display.filter((id) => id.endsWith('.0')).sort());
    // Each append's messages are next to each other, in the order given.
    for (let at = 0; at < display.length; at += perAppend) {
      const prefix = display[at]!.slice(0, -2);
      expect(display.slice(at, at + perAppend)).toEqual([`${prefix}.0`, `${prefix}.1`, `${prefix}.2`]);
    }
    // And each lane's appends keep the order it made them in.
    for (const [name] of lanes) {
      const firsts = display.filter((id) => id.startsWith(name) && id.endsWith('.0'));
      expect(firsts).toEqual(firsts.map((_, i) => `${name}${i}.0`));
    }
    // Paging from either pool walks the same display buffer.
    const newest = await a.sessions.getMessagePage('s', { limit: 4 });
    expect(newest?.messages.map((m) => m.id)).toEqual(display.slice(-4));
  });

  it('pairs one client per code when both redeem every code at once', async () => {
    const codes = await Promise.all(Array.from({ length: 10 }, () => a.consent.createPairingCode(60_000)));
    const results = await Promise.all(
      codes.flatMap((code) => [
        a.consent.redeemPairingCode(code, 'process a'),
        b.consent.redeemPairingCode(code, 'process b'),
      ]),
    );
    for (let i = 0; i < codes.length; i++) {
      const pair = [results[2 * i]!, results[2 * i + 1]!];
      expect(pair.filter((r) => r.ok)).toHaveLength(1);
      expect(pair.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'used' }]);
    }
    const [row] = await a.pg.rows<{ n: number }>('SELECT count(*) AS n FROM paired_clients');
    expect(row?.n).toBe(codes.length);
  });

  it('rewinds in one process while the other appends, leaving both buffers in step', async () => {
    await a.sessions.create({ id: 'r', profile_id: 'p' });
    const both = (id: string): BufferedMessage => ({ message: msg(id), display: true, context: true });
    await a.sessions.append('r', ['r0', 'r1', 'r2', 'r3'].map(both));
    const [rewound] = await Promise.all([
      a.sessions.rewind('r', 'r2', { keepAnchor: false }),
      b.sessions.append('r', [both('late')]),
    ]);
    expect(rewound.ok).toBe(true);
    const display = (await a.sessions.getMessages('r')).map((m) => m.id);
    // Whichever went first, the rewind cut at r2 and the late message is either cut or after r1.
    expect(display.slice(0, 2)).toEqual(['r0', 'r1']);
    expect(display.length === 2 || (display.length === 3 && display[2] === 'late')).toBe(true);
    expect((await b.sessions.getContext('r')).map((m) => m.id)).toEqual(display);
  });
});

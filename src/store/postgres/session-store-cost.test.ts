/**
 * On PostgreSQL an append costs what it appends and a page costs the page, not the session:
 * each hot statement of the session store, run under EXPLAIN ANALYZE on a session of 20 000
 * messages, reads no more rows of a message table than its own answer needs. The table is
 * analysed first, as autovacuum does: the last seq's read (ORDER BY … LIMIT 1) stays one row even
 * without statistics, but a page's plan needs them; right after a bulk load and before any
 * ANALYZE the planner thinks a session short and sorts all of it. Speed itself is measured by
 * `npm run bench`, never asserted here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSchema, needsPostgres } from '../test-engines.js';
import type { StoredMessage } from '../types.js';
import type { PgClient } from './database.js';
import { createPostgresStores, type PostgresStores } from './index.js';
import { sessionStatements } from './session-store.js';

const TOTAL = 20_000;
const PAGE = 100;

const msg = (i: number): StoredMessage => ({
  id: `m${i}`,
  role: i % 2 ? 'assistant' : 'user',
  content: `message ${i}`,
  created_at: '2026-01-01T00:00:00.000Z',
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

/** Rows each node over a message table or its indexes produced, with a description of the node. */
function messageTableReads(node: PlanNode, out: [string, number][] = []): [string, number][] {
  const target = node['Relation Name'] ?? node['Index Name'] ?? '';
  if (
    /^(messages|context_messages)/.test(target) &&
    !/^(Insert|Update|Delete|ModifyTable)$/.test(node['Node Type'])
  ) {
    out.push([`${node['Node Type']} on ${target}`, node['Actual Rows'] * node['Actual Loops']]);
  }
  for (const child of node.Plans ?? []) messageTableReads(child, out);
  return out;
}

describe.runIf(needsPostgres('the PostgreSQL cost test'))('session statements on a long session', () => {
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let stores: PostgresStores;
  let client: PgClient;

  beforeAll(async () => {
    schema = await createTestSchema();
    stores = await createPostgresStores(schema.url, { max: 2 });
    for (const id of ['s', 'other']) await stores.sessions.create({ id, profile_id: 'p' });
    for (let start = 0; start < TOTAL; start += 5_000) {
      const entries = Array.from({ length: 5_000 }, (_, i) => ({
        message: msg(start + i),
        display: true,
        context: true,
      }));
      await stores.sessions.append('s', entries);
    }
    await stores.sessions.append('other', [{ message: msg(0), display: true, context: true }]);
    client = await stores.pg.pool.connect();
    await client.query('ANALYZE messages, context_messages');
  }, 120_000);

  afterAll(async () => {
    client?.release();
    await stores?.close();
    await schema?.drop();
  });

  /** The rows `sql` reads from the message tables, run and rolled back. */
  async function reads(sql: string, values: unknown[]): Promise<[string, number][]> {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
        values,
      );
      return messageTableReads(rows[0]!['QUERY PLAN'][0].Plan);
    } finally {
      await client.query('ROLLBACK');
    }
  }

  const atMost = (found: [string, number][], limit: number) => {
    expect(found.length).toBeGreaterThan(0);
    for (const [node, rows] of found) expect(rows, node).toBeLessThanOrEqual(limit);
  };

  it('an append reads the last seq of each buffer, one row each', async () => {
    const { append } = sessionStatements;
    const values = append.values(
      's',
      [
        { message: msg(TOTAL), display: true, context: true },
        { message: msg(TOTAL + 1), display: true, context: false },
      ],
      { last_active: '2026-02-01T00:00:00.000Z' },
    );
    atMost(await reads(append.text, values), 1);
  });

  it('a streamed update touches the one message in each buffer', async () => {
    const values = ['s', `m${TOTAL - 1}`, true, 'streamed', '{"thinking":"t"}', ['interrupted']];
    atMost(await reads(sessionStatements.updateMessage, values), 1);
  });

  it('the newest page and a page before a cursor read the page and one row more', async () => {
    atMost(await reads(sessionStatements.pageNewest, ['s', PAGE + 1]), PAGE + 1);
    atMost(await reads(sessionStatements.pageBefore, ['s', `m${TOTAL / 2}`, PAGE + 1]), PAGE + 1);
  });

  it('and still answer correctly at this length', async () => {
    const page = await stores.sessions.getMessagePage('s', { limit: 3, before: 'm3' });
    expect(page).toEqual({ messages: [msg(0), msg(1), msg(2)], next_before: null });
    await stores.sessions.append('s', [{ message: msg(TOTAL), display: true, context: true }]);
    const [row] = await stores.pg.rows<{ seq: number }>(
      `SELECT seq FROM messages WHERE session_id = 's' AND id = $1`,
      [`m${TOTAL}`],
    );
    expect(row?.seq).toBe(TOTAL + 1);
  });
});

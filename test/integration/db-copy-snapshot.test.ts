/**
 * `navi db copy` reads its source as one moment: rows a Navi writes while the copy runs are not
 * half in it (a session without its messages, one table from later than another). Each end is
 * opened as the copy opens it, on a real SQLite file and a real PostgreSQL schema, and written to
 * by the stores over another connection while it is open.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresSource } from '../../src/cli/db/postgres-end.js';
import { openSqliteSource } from '../../src/cli/db/sqlite-end.js';
import { COPIED_TABLES } from '../../src/cli/db/tables.js';
import { openStores } from '../../src/store/open-stores.js';
import { createSqliteStores } from '../../src/store/sqlite/index.js';
import { createTestSchema, needsPostgres } from '../../src/store/test-engines.js';
import type { SessionStore } from '../../src/store/types.js';
import { tempDir } from '../support/navi.js';

const sessionsTable = COPIED_TABLES.find((t) => t.name === 'sessions')!;

async function writeAChat(sessions: SessionStore, id: string): Promise<void> {
  await sessions.create({ id, profile_id: 'plain', title: id });
  await sessions.append(id, [
    {
      message: { id: `${id}-m`, role: 'user', content: 'hello', created_at: '2026-01-01T00:00:00.000Z' },
      display: true,
      context: true,
    },
  ]);
}

describe('navi db copy reads its source as one snapshot', () => {
  const dir = tempDir('navi-db-copy-snap-');

  it('a SQLite source: what is written after it was opened is not read', async () => {
    const file = join(dir, 'snap.db');
    const before = createSqliteStores(file);
    await writeAChat(before.sessions, 's-before');
    before.close();
    const { end } = openSqliteSource(file);
    const writer = createSqliteStores(file);
    try {
      await writeAChat(writer.sessions, 's-during');
      expect(await end.count('sessions')).toBe(1);
      expect(await end.count('messages')).toBe(1);
      expect((await end.read(sessionsTable, undefined, 10)).map((r) => r[0])).toEqual(['s-before']);
    } finally {
      writer.close();
      await end.close();
    }
    // Closing ends the read transaction: the file opened again shows both chats.
    const { end: later } = openSqliteSource(file);
    try {
      expect(await later.count('sessions')).toBe(2);
    } finally {
      await later.close();
    }
  });
});

describe.runIf(needsPostgres('navi db copy snapshot'))(
  'navi db copy reads a PostgreSQL source as one snapshot',
  () => {
    const drops: (() => Promise<void>)[] = [];
    afterAll(async () => {
      for (const drop of drops) await drop();
    });

    it('what is written after it was opened is not read, and the source cannot be written through it', async () => {
      const schema = await createTestSchema();
      drops.push(schema.drop);
      const stores = await openStores({ DB_PATH: '', DATABASE_URL: schema.url });
      try {
        await writeAChat(stores.sessions, 's-before');
        const { end } = await openPostgresSource(schema.url);
        try {
          await writeAChat(stores.sessions, 's-during');
          expect(await end.count('sessions')).toBe(1);
          expect(await end.count('messages')).toBe(1);
          expect((await end.read(sessionsTable, undefined, 10)).map((r) => r[0])).toEqual(['s-before']);
          await expect(end.insert(sessionsTable, [])).resolves.toBe(0);
          const row = [
            's-x',
            'plain',
            '',
            false,
            '2026-01-01T00:00:00.000Z',
            '2026-01-01T00:00:00.000Z',
            0,
            null,
          ];
          await expect(end.insert(sessionsTable, [row])).rejects.toThrow(/read-only transaction/);
        } finally {
          await end.close();
        }
        const { end: later } = await openPostgresSource(schema.url);
        try {
          expect(await later.count('sessions')).toBe(2);
        } finally {
          await later.close();
        }
      } finally {
        await stores.close();
      }
    });
  },
);

/**
 * The RecallStore contract, on every engine: storing and listing recalls, patching them, and the
 * claim that fires one occurrence exactly once. The PostgreSQL part at the end is about several
 * processes: claims from two pools, and a claim held by a process killed with -9.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecallSchedule } from '../../protocol/rest.js';
import type { OpenedStores } from '../open-stores.js';
import { PgDatabase } from '../postgres/database.js';
import { PgRecallStore } from '../postgres/recall-store.js';
import { needsPostgres, storeEngines, type TestStores } from '../test-engines.js';
import type { RecallClaim, RecallRecord, RecallStore } from '../types.js';

const every5m: RecallSchedule = { kind: 'recurring', every_ms: 300_000 };
/** Where `pg` resolves from, for the child process that holds a lock. */
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

function recall(id: string, fields: Partial<RecallRecord> = {}): RecallRecord {
  return {
    id,
    session_id: 's1',
    prompt: `prompt of ${id}`,
    schedule: every5m,
    status: 'active',
    next_run_at: '2026-11-25T12:05:00.000Z',
    last_run_at: null,
    last_outcome: null,
    run_count: 0,
    chain: 1,
    created_at: '2026-11-25T12:00:00.000Z',
    ...fields,
  };
}

/**
 * Sessions are written with plain SQL: the recall store only needs the rows its foreign key
 * points at, and this keeps its contract apart from the session store's.
 */
async function sql(stores: OpenedStores, statement: string, params: unknown[]): Promise<void> {
  if (stores.engine === 'sqlite') stores.db.prepare(statement.replace(/\$\d+/g, '?')).run(...params);
  else await stores.pg.query(statement, params);
}

async function addSession(stores: OpenedStores, id: string): Promise<void> {
  await sql(
    stores,
    'INSERT INTO sessions (id, profile_id, created_at, last_active) VALUES ($1, $2, $3, $4)',
    [id, 'plain', '2026-11-25T12:00:00.000Z', '2026-11-25T12:00:00.000Z'],
  );
}

/** A `start` that records the record it was given and moves the recall on by `next`. */
function startMovingTo(next: string | null, seen: RecallRecord[] = []) {
  return async (current: RecallRecord) => {
    seen.push(current);
    return {
      value: current.id,
      patch: {
        next_run_at: next,
        status: next ? ('active' as const) : ('done' as const),
        last_run_at: current.next_run_at,
        run_count: current.run_count + 1,
      },
    };
  };
}

describe.each(storeEngines('recall store contract'))('recall store on $name', ({ open }) => {
  let t: TestStores;
  let store: RecallStore;

  beforeEach(async () => {
    t = await open();
    store = t.stores.recalls;
    await addSession(t.stores, 's1');
    await addSession(t.stores, 's2');
  });
  afterEach(() => t.dispose());

  describe('storing', () => {
    it('gives back what was added, schedules and outcomes as they were', async () => {
      const cron: RecallSchedule = { kind: 'recurring', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' };
      const stored = recall('r1', {
        schedule: cron,
        last_outcome: { status: 'failed', message: 'The LLM server "x" cannot be reached' },
        run_count: 3,
        last_run_at: '2026-11-25T11:00:00.000Z',
      });
      await store.add(stored);
      expect(await store.get('r1')).toEqual(stored);
      expect(await store.get('nope')).toBeUndefined();
    });

    it('refuses a recall of a session that does not exist, and a second recall with the same id', async () => {
      await expect(store.add(recall('r1', { session_id: 'gone' }))).rejects.toThrow();
      await store.add(recall('r1'));
      await expect(store.add(recall('r1'))).rejects.toThrow();
      expect(await store.soonest(10)).toHaveLength(1);
    });

    it('refuses an active recall with no next run', async () => {
      await expect(store.add(recall('r1', { next_run_at: null }))).rejects.toThrow();
    });

    it('keeps hostile text as text', async () => {
      const prompt = `'); DROP TABLE recalls; -- \u0000? ${'é'.repeat(5000)} $1 ?`.replace('\u0000', '');
      await store.add(recall('r1', { prompt }));
      expect((await store.get('r1'))?.prompt).toBe(prompt);
      expect(await store.get("r1' OR '1'='1")).toBeUndefined();
    });

    it("removes a session's recalls with the session", async () => {
      await store.add(recall('r1'));
      await store.add(recall('r2', { session_id: 's2' }));
      await sql(t.stores, 'DELETE FROM sessions WHERE id = $1', ['s1']);
      expect(await store.get('r1')).toBeUndefined();
      expect((await store.soonest(10)).map((r) => r.id)).toEqual(['r2']);
    });
  });

  describe('listing', () => {
    beforeEach(async () => {
      await store.add(recall('late', { next_run_at: '2026-11-25T14:00:00.000Z' }));
      await store.add(recall('soon', { next_run_at: '2026-11-25T12:01:00.000Z' }));
      // Same time as `late`, created earlier: ties go by creation.
      await store.add(
        recall('tie', { next_run_at: '2026-11-25T14:00:00.000Z', created_at: '2026-11-25T11:00:00.000Z' }),
      );
      await store.add(recall('other', { session_id: 's2', next_run_at: '2026-11-25T12:00:30.000Z' }));
      for (let i = 0; i < 3; i++) {
        await store.add(
          recall(`done${i}`, {
            status: 'done',
            next_run_at: null,
            last_run_at: `2026-11-2${i}T08:00:00.000Z`,
          }),
        );
      }
      await store.add(
        recall('cancelled', {
          status: 'cancelled',
          next_run_at: null,
          created_at: '2026-11-24T09:00:00.000Z',
        }),
      );
    });

    it("lists a session's active recalls soonest first, then finished ones newest first", async () => {
      expect((await store.listForSession('s1')).map((r) => r.id)).toEqual([
        'soon',
        'tie',
        'late',
        'cancelled',
        'done2',
        'done1',
        'done0',
      ]);
      expect((await store.listForSession('s1', 1)).map((r) => r.id)).toEqual([
        'soon',
        'tie',
        'late',
        'cancelled',
      ]);
      expect((await store.listForSession('s1', 0)).map((r) => r.id)).toEqual(['soon', 'tie', 'late']);
      expect(await store.listForSession('nobody')).toEqual([]);
    });

    it('counts active recalls per session', async () => {
      expect(await store.countActive('s1')).toBe(3);
      expect(await store.countActive('s2')).toBe(1);
      expect(await store.countActive('nobody')).toBe(0);
    });

    it('gives the soonest active recalls of every session, at most the limit, as ids and times only', async () => {
      expect((await store.soonest(10)).map((r) => r.id)).toEqual(['other', 'soon', 'tie', 'late']);
      expect(await store.soonest(2)).toEqual([
        { id: 'other', next_run_at: '2026-11-25T12:00:30.000Z' },
        { id: 'soon', next_run_at: '2026-11-25T12:01:00.000Z' },
      ]);
      expect(await store.soonest(0)).toEqual([]);
    });

    it('gives the active recalls due by a time (that time included), soonest first, whole', async () => {
      expect(await store.due('2026-11-25T12:00:29.999Z', 10)).toEqual([]);
      expect((await store.due('2026-11-25T12:01:00.000Z', 10)).map((r) => r.id)).toEqual(['other', 'soon']);
      expect(await store.due('2026-11-25T12:01:00.000Z', 1)).toEqual([
        recall('other', { session_id: 's2', next_run_at: '2026-11-25T12:00:30.000Z' }),
      ]);
      // Finished recalls are never due, however late it is.
      expect((await store.due('2099-01-01T00:00:00.000Z', 10)).map((r) => r.id)).toEqual([
        'other',
        'soon',
        'tie',
        'late',
      ]);
      expect(await store.due('2099-01-01T00:00:00.000Z', 0)).toEqual([]);
      expect(await store.due("' OR '1'='1", 10)).toEqual([]);
    });
  });

  describe('updating', () => {
    it('changes what the patch names and gives back the updated recall', async () => {
      await store.add(recall('r1'));
      const updated = await store.update('r1', {
        last_outcome: { status: 'stopped', message: 'stopped before it finished' },
        run_count: 2,
      });
      expect(updated).toEqual(
        recall('r1', {
          last_outcome: { status: 'stopped', message: 'stopped before it finished' },
          run_count: 2,
        }),
      );
      expect(
        await store.update('r1', { status: 'cancelled', next_run_at: null, last_outcome: null }),
      ).toMatchObject({
        status: 'cancelled',
        next_run_at: null,
        last_outcome: null,
      });
      expect(await store.update('r1', {})).toMatchObject({ id: 'r1', status: 'cancelled' });
    });

    it('gives back nothing for a recall that does not exist', async () => {
      expect(await store.update('nope', { run_count: 1 })).toBeUndefined();
    });
  });

  describe('claiming', () => {
    const due = '2026-11-25T12:05:00.000Z';

    it('starts a due occurrence once and stores the patch its start returns', async () => {
      await store.add(recall('r1'));
      const seen: RecallRecord[] = [];
      const claim = await store.claim('r1', due, startMovingTo('2026-11-25T12:10:00.000Z', seen));
      expect(claim).toEqual({ kind: 'claimed', value: 'r1' });
      expect(seen).toEqual([recall('r1')]);
      expect(await store.get('r1')).toMatchObject({
        next_run_at: '2026-11-25T12:10:00.000Z',
        last_run_at: due,
        run_count: 1,
      });
      // The same occurrence again: it has moved on.
      expect(await store.claim('r1', due, startMovingTo(null))).toEqual({ kind: 'gone' });
      expect(await store.get('r1')).toMatchObject({ run_count: 1, next_run_at: '2026-11-25T12:10:00.000Z' });
    });

    it('says gone, without starting, for another due time, a finished recall or none at all', async () => {
      await store.add(recall('r1'));
      await store.add(recall('cancelled', { status: 'cancelled', next_run_at: null }));
      const seen: RecallRecord[] = [];
      expect(await store.claim('r1', '2026-11-25T12:00:00.000Z', startMovingTo(null, seen))).toEqual({
        kind: 'gone',
      });
      expect(await store.claim('cancelled', due, startMovingTo(null, seen))).toEqual({ kind: 'gone' });
      expect(await store.claim('nope', due, startMovingTo(null, seen))).toEqual({ kind: 'gone' });
      expect(seen).toEqual([]);
    });

    it('leaves the recall due when start returns no patch, and when start throws', async () => {
      await store.add(recall('r1'));
      expect(await store.claim('r1', due, async () => ({ value: 'busy' }))).toEqual({
        kind: 'claimed',
        value: 'busy',
      });
      await expect(
        store.claim('r1', due, async () => {
          throw new Error('the runner broke');
        }),
      ).rejects.toThrow('the runner broke');
      expect(await store.get('r1')).toEqual(recall('r1'));
      // Neither left the occurrence held.
      expect(await store.claim('r1', due, startMovingTo(null))).toEqual({ kind: 'claimed', value: 'r1' });
      expect(await store.get('r1')).toMatchObject({ status: 'done', next_run_at: null, run_count: 1 });
    });

    it('lets one of two claims of the same occurrence at the same time start it', async () => {
      await store.add(recall('r1'));
      let release!: () => void;
      const holding = new Promise<void>((resolve) => {
        release = resolve;
      });
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const first = store.claim('r1', due, async (current) => {
        entered();
        await holding;
        return startMovingTo('2026-11-25T12:10:00.000Z')(current);
      });
      await inside;
      const seen: RecallRecord[] = [];
      expect(await store.claim('r1', due, startMovingTo(null, seen))).toEqual({ kind: 'taken' });
      release();
      expect(await first).toEqual({ kind: 'claimed', value: 'r1' });
      expect(await store.claim('r1', due, startMovingTo(null, seen))).toEqual({ kind: 'gone' });
      expect(seen).toEqual([]);
      expect(await store.get('r1')).toMatchObject({ run_count: 1, next_run_at: '2026-11-25T12:10:00.000Z' });
    });

    it('claims different recalls independently', async () => {
      await store.add(recall('r1'));
      await store.add(recall('r2'));
      const claims = await Promise.all([
        store.claim('r1', due, startMovingTo(null)),
        store.claim('r2', due, startMovingTo(null)),
      ]);
      expect(claims).toEqual([
        { kind: 'claimed', value: 'r1' },
        { kind: 'claimed', value: 'r2' },
      ]);
    });
  });
});

/** The PostgreSQL store seen from several processes: each has a pool of its own. */
describe.runIf(needsPostgres('recall claims across processes'))(
  'recall claims across PostgreSQL pools',
  () => {
    const due = '2026-11-25T12:05:00.000Z';
    let t: TestStores;
    let others: PgDatabase[];
    let children: ChildProcess[];

    beforeEach(async () => {
      const [postgres] = storeEngines().filter((e) => e.name === 'postgres');
      if (!postgres) throw new Error('no PostgreSQL case');
      t = await postgres.open();
      others = [];
      children = [];
      await addSession(t.stores, 's1');
    });
    afterEach(async () => {
      // A test that failed half-way leaves no lock holder behind.
      for (const child of children)
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const pool of others) await pool.close();
      await t.dispose();
    });

    function pool(): PgDatabase {
      if (t.stores.engine !== 'postgres') throw new Error('not PostgreSQL');
      return t.stores.pg;
    }

    async function otherProcess(): Promise<PgRecallStore> {
      const pool = await PgDatabase.open(t.settings.DATABASE_URL, { max: 4 });
      others.push(pool);
      return new PgRecallStore(pool);
    }

    it('starts an occurrence claimed from many pools at once exactly once', async () => {
      const stores = [t.stores.recalls, await otherProcess(), await otherProcess(), await otherProcess()];
      for (let i = 0; i < 10; i++) await t.stores.recalls.add(recall(`r${i}`));
      const started: string[] = [];
      const claims: Promise<RecallClaim<string>>[] = [];
      for (let i = 0; i < 10; i++) {
        for (const store of stores) {
          claims.push(
            store.claim(`r${i}`, due, async (current) => {
              started.push(current.id);
              // Starting takes a moment, as a run does, so that the others' claims meet the lock.
              await new Promise((resolve) => setTimeout(resolve, 5));
              return startMovingTo('2026-11-25T12:10:00.000Z')(current);
            }),
          );
        }
      }
      const results = await Promise.all(claims);
      // Four claims of each recall, pushed recall by recall: exactly one of each four started it.
      for (let i = 0; i < 10; i++) {
        const kinds = results.slice(i * stores.length, (i + 1) * stores.length).map((r) => r.kind);
        expect(
          kinds.filter((k) => k === 'claimed'),
          `r${i}: ${kinds.join(', ')}`,
        ).toHaveLength(1);
      }
      expect([...started].sort()).toEqual([...Array(10).keys()].map((i) => `r${i}`).sort());
      const after = await t.stores.recalls.due('2099-01-01T00:00:00.000Z', 20);
      expect(after).toHaveLength(10);
      for (const r of after) expect(r.run_count).toBe(1);
    });

    it('says taken while another pool holds the occurrence, and gone once that one moved it on', async () => {
      const other = await otherProcess();
      await t.stores.recalls.add(recall('r1'));
      let release!: () => void;
      const holding = new Promise<void>((resolve) => {
        release = resolve;
      });
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const first = other.claim('r1', due, async (current) => {
        entered();
        await holding;
        return startMovingTo(null)(current);
      });
      await inside;
      expect(await t.stores.recalls.claim('r1', due, startMovingTo(null))).toEqual({ kind: 'taken' });
      // Reading is not blocked by the claim.
      expect(await t.stores.recalls.get('r1')).toMatchObject({ status: 'active', run_count: 0 });
      release();
      await first;
      expect(await t.stores.recalls.claim('r1', due, startMovingTo(null))).toEqual({ kind: 'gone' });
      expect(await t.stores.recalls.get('r1')).toMatchObject({ status: 'done', run_count: 1 });
    });

    it('frees an occurrence held by a process killed with -9', async () => {
      await t.stores.recalls.add(recall('r1'));
      // A real process takes the claim's lock and is killed while it holds it.
      const script = `
      const pg = require('pg');
      const client = new pg.Client({ connectionString: process.env.URL, application_name: process.env.NAME });
      (async () => {
        await client.connect();
        await client.query('BEGIN');
        await client.query('SELECT id FROM recalls WHERE id = $1 FOR UPDATE', ['r1']);
        process.stdout.write('locked\\n');
        setInterval(() => {}, 1000);
      })();
    `;
      // Its own name, so that the wait below is for this holder's session alone.
      const holder = `navi-holder-${randomBytes(4).toString('hex')}`;
      const child = spawn(process.execPath, ['-e', script], {
        cwd: repoRoot,
        env: { ...process.env, URL: t.settings.DATABASE_URL, NAME: holder },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          if (d.toString().includes('locked')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`the lock holder exited early (${code})`)));
      });
      expect(await t.stores.recalls.claim('r1', due, startMovingTo(null))).toEqual({ kind: 'taken' });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      // The server ends the dead process's session when it reads the closed socket.
      for (;;) {
        const [row] = await pool().rows<{ n: number }>(
          'SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
          [holder],
        );
        if (row?.n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await t.stores.recalls.claim('r1', due, startMovingTo(null))).toEqual({
        kind: 'claimed',
        value: 'r1',
      });
    });
  },
);

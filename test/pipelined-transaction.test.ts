import { sql } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransactionLane, withPipelinedTransaction } from '../src/platform/db/pipelined-transaction.js';
import { WriteStatement } from '../src/platform/db/write-statement.js';
import { prepared, preparedStatementName } from '../src/platform/db/prepared-statements.js';
import { createTestApp, type TestContext } from './harness.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
  await sql`CREATE TABLE pipeline_probe (id int PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), xid text)`.execute(t.deps.db);
});
afterAll(async () => {
  await t.close();
});

const rows = async () =>
  (await sql<{ id: number; at: Date; xid: string | null }>`SELECT id, at, xid FROM pipeline_probe ORDER BY id`.execute(t.deps.db)).rows;

const clear = () => sql`DELETE FROM pipeline_probe`.execute(t.deps.db);

describe('a pipelined transaction that succeeds', () => {
  it('runs the last statement inside the transaction, before COMMIT, even under concurrency', async () => {
    await clear();
    // now() and the transaction id are the transaction's: a last statement that ran after COMMIT
    // (outside the transaction) would store a later moment and another id.
    const seen = await Promise.all(
      Array.from({ length: 12 }, (_, id) =>
        withPipelinedTransaction(t.database.pool, async (tx) => {
          const first = await sql<{ at: Date; xid: string }>`SELECT now() AS at, txid_current()::text AS xid`.execute(tx);
          const last = sql`INSERT INTO pipeline_probe (id, at, xid) VALUES (${id}, now(), txid_current()::text)`.compile(tx);
          return { result: first.rows[0], last };
        }),
      ),
    );
    const stored = await rows();
    expect(stored).toHaveLength(12);
    for (const row of stored) {
      expect(row.at).toEqual(seen[row.id]?.at);
      expect(row.xid).toBe(seen[row.id]?.xid);
    }
  });

  it('answers statements sent without waiting in between, in order, all in one transaction', async () => {
    const answers = await withPipelinedTransaction(t.database.pool, async (tx) => {
      const sent = [1, 2, 3].map((n) => sql<{ n: number; xid: string }>`SELECT ${n}::int AS n, txid_current()::text AS xid`.execute(tx));
      return { result: (await Promise.all(sent)).map((result) => result.rows[0]) };
    });
    expect(answers.map((answer) => answer?.n)).toEqual([1, 2, 3]);
    expect(new Set(answers.map((answer) => answer?.xid)).size).toBe(1);
  });

  it('reuses the generic plan of a prepared statement from its first run, and leaves the setting inside the transaction', async () => {
    const probe = () => prepared(sql<{ n: string }>`SELECT count(*)::text AS n FROM unnest(${[1]}::int[]) AS u (x) JOIN pipeline_probe p ON p.id = u.x`);
    const plans = await withPipelinedTransaction(t.database.pool, async (tx) => {
      for (let run = 0; run < 6; run++) await probe().execute(tx);
      const name = preparedStatementName(probe().compile(tx).sql);
      const counted = await sql<{ generic_plans: string; custom_plans: string }>`
        SELECT generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name = ${name}`.execute(tx);
      return { result: counted.rows[0] };
    });
    // Without the setting, PostgreSQL plans the first five runs for their parameters.
    expect(plans).toEqual({ generic_plans: '6', custom_plans: '0' });
    const mode = await sql<{ plan_cache_mode: string }>`SHOW plan_cache_mode`.execute(t.deps.db);
    expect(mode.rows[0]?.plan_cache_mode).toBe('auto');
  });

  it('commits without a last statement', async () => {
    await clear();
    await withPipelinedTransaction(t.database.pool, async (tx) => {
      await sql`INSERT INTO pipeline_probe (id) VALUES (100)`.execute(tx);
      return { result: undefined };
    });
    expect((await rows()).map((row) => row.id)).toEqual([100]);
  });
});

describe('a pipelined transaction that fails', () => {
  it('rolls everything back when the last statement fails (the COMMIT behind it becomes a rollback)', async () => {
    await clear();
    await sql`INSERT INTO pipeline_probe (id) VALUES (1)`.execute(t.deps.db);
    const attempt = withPipelinedTransaction(t.database.pool, async (tx) => {
      await sql`INSERT INTO pipeline_probe (id) VALUES (2)`.execute(tx);
      return { result: 'done', last: sql`INSERT INTO pipeline_probe (id) VALUES (1)`.compile(tx) };
    });
    await expect(attempt).rejects.toMatchObject({ code: '23505' });
    expect((await rows()).map((row) => row.id)).toEqual([1]);
  });

  it('sends nothing after the COMMIT a failed last statement turned into a rollback (a ROLLBACK there made PostgreSQL warn "there is no transaction in progress")', async () => {
    await clear();
    await sql`INSERT INTO pipeline_probe (id) VALUES (1)`.execute(t.deps.db);
    const sent: string[] = [];
    let restore = () => {};
    // The pool's connection, its statements noted as they are sent.
    const noting = {
      connect: async () => {
        const client = await t.database.pool.connect();
        const original = Object.getOwnPropertyDescriptor(client, 'query');
        const query = client.query.bind(client) as (...given: unknown[]) => unknown;
        client.query = ((...args: unknown[]) => {
          const [text] = args as [string | { text: string }];
          sent.push(typeof text === 'string' ? text : text.text);
          return query(...args);
        }) as pg.PoolClient['query'];
        restore = () => {
          if (original) Object.defineProperty(client, 'query', original);
          else delete (client as { query?: unknown }).query;
        };
        return client;
      },
    } as unknown as pg.Pool;
    try {
      const attempt = withPipelinedTransaction(noting, async (tx) => {
        await sql`INSERT INTO pipeline_probe (id) VALUES (2)`.execute(tx);
        return { result: 'done', last: sql`INSERT INTO pipeline_probe (id) VALUES (1)`.compile(tx) };
      });
      await expect(attempt).rejects.toMatchObject({ code: '23505' });
    } finally {
      restore();
    }
    expect(sent.at(-1)).toBe('COMMIT');
    expect(sent.filter((text) => text === 'ROLLBACK')).toEqual([]);
    expect((await rows()).map((row) => row.id)).toEqual([1]);
    // The connection went back to the pool in working order.
    const again = await withPipelinedTransaction(t.database.pool, async (tx) => ({ result: (await sql<{ one: number }>`SELECT 1 AS one`.execute(tx)).rows[0]?.one }));
    expect(again).toBe(1);
  });

  it('rolls back when work throws, and the connection is reusable afterwards', async () => {
    await clear();
    await expect(
      withPipelinedTransaction(t.database.pool, async (tx) => {
        await sql`INSERT INTO pipeline_probe (id) VALUES (3)`.execute(tx);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await rows()).toEqual([]);
    const again = await withPipelinedTransaction(t.database.pool, async (tx) => ({ result: (await sql<{ one: number }>`SELECT 1 AS one`.execute(tx)).rows[0]?.one }));
    expect(again).toBe(1);
  });
});

describe('a write statement with expected row counts', () => {
  const insertReturning = (ids: number[]) => sql`INSERT INTO pipeline_probe (id) SELECT * FROM unnest(${ids}::int[]) RETURNING 1`;

  it('commits when every counted part returned what it was expected to', async () => {
    await clear();
    await withPipelinedTransaction(t.database.pool, async (tx) => {
      const write = new WriteStatement();
      write.add('probe', insertReturning([5, 6]), { expectRows: 2 });
      return { result: undefined, last: write.compile(tx) };
    });
    expect((await rows()).map((row) => row.id)).toEqual([5, 6]);
  });

  it('fails inside the database, so nothing commits, when a part returned another count', async () => {
    await clear();
    const attempt = withPipelinedTransaction(t.database.pool, async (tx) => {
      const write = new WriteStatement();
      write.add('probe', insertReturning([7, 8]), { expectRows: 3 });
      return { result: undefined, last: write.compile(tx) };
    });
    await expect(attempt).rejects.toThrow('consistency check failed: probe: expected 3 rows');
    expect(await rows()).toEqual([]);
  });
});

describe('a pipelined transaction whose work sends only its last statement', () => {
  /** Runs `body`, counting the ReadyForQuery messages of the connections it takes from the pool. */
  async function counting<T>(body: () => Promise<T>): Promise<{ value: T; readyForQuery: number; clients: Set<pg.PoolClient> }> {
    let readyForQuery = 0;
    const clients = new Set<pg.PoolClient>();
    const count = () => readyForQuery++;
    const listening: pg.PoolClient[] = [];
    const onAcquire = (client: pg.PoolClient) => {
      clients.add(client);
      (client as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', count);
      listening.push(client);
    };
    t.database.pool.on('acquire', onAcquire);
    try {
      const value = await body();
      return { value, readyForQuery, clients };
    } finally {
      t.database.pool.off('acquire', onAcquire);
      for (const client of listening) (client as unknown as { connection: NodeJS.EventEmitter }).connection.off('readyForQuery', count);
    }
  }

  it('sends it as a transaction of its own, between the plan setting and its reset, without a BEGIN or COMMIT', async () => {
    await clear();
    const { value, readyForQuery } = await counting(() =>
      withPipelinedTransaction(t.database.pool, async (tx) => ({
        result: 'done',
        last: sql`INSERT INTO pipeline_probe (id, xid) VALUES (20, txid_current()::text), (21, txid_current()::text)`.compile(tx),
      })),
    );
    expect(value).toBe('done');
    // The setting, the statement (committed at its own Sync) and the reset: three answers.
    expect(readyForQuery).toBe(3);
    const stored = await rows();
    expect(stored.map((row) => row.id)).toEqual([20, 21]);
    expect(new Set(stored.map((row) => row.xid)).size).toBe(1);
  });

  it('plans a prepared statement generically there too, and leaves the setting inside the transaction', async () => {
    await clear();
    const insert = (id: number) => prepared(sql`INSERT INTO pipeline_probe (id) SELECT x FROM unnest(${[id]}::int[]) AS u (x)`);
    const { clients } = await counting(async () => {
      for (let id = 30; id < 36; id++) await withPipelinedTransaction(t.database.pool, async (tx) => ({ result: undefined, last: insert(id).compile(tx) }));
    });
    const name = preparedStatementName(insert(0).compile(t.deps.db).sql);
    let generic = 0;
    let custom = 0;
    for (const client of clients) {
      const counted = await client.query<{ generic_plans: string; custom_plans: string }>('SELECT generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name = $1', [name]);
      generic += Number(counted.rows[0]?.generic_plans ?? 0);
      custom += Number(counted.rows[0]?.custom_plans ?? 0);
      const mode = await client.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
      expect(mode.rows[0]?.plan_cache_mode).toBe('auto');
    }
    expect({ generic, custom }).toEqual({ generic: 6, custom: 0 });
    expect((await rows()).map((row) => row.id)).toEqual([30, 31, 32, 33, 34, 35]);
  });

  it('rolls back when the statement fails, with PostgreSQL\'s error, and the connection works afterwards', async () => {
    await clear();
    await sql`INSERT INTO pipeline_probe (id) VALUES (40)`.execute(t.deps.db);
    const { clients } = await counting(async () => {
      const failed = withPipelinedTransaction(t.database.pool, async (tx) => ({
        result: undefined,
        last: sql`INSERT INTO pipeline_probe (id) VALUES (41), (40)`.compile(tx),
      }));
      await expect(failed).rejects.toMatchObject({ code: '23505' });
      // The next transaction takes the same connection (the pool hands out the one just returned).
      await withPipelinedTransaction(t.database.pool, async (tx) => ({ result: undefined, last: sql`INSERT INTO pipeline_probe (id) VALUES (42)`.compile(tx) }));
    });
    expect(clients.size).toBe(1);
    expect((await rows()).map((row) => row.id)).toEqual([40, 42]);
  });

  it('parses a prepared statement again when its first parse failed', async () => {
    const insert = () => prepared(sql`INSERT INTO pipeline_late (id) SELECT x FROM unnest(${[1]}::int[]) AS u (x)`);
    const write = () => withPipelinedTransaction(t.database.pool, async (tx) => ({ result: undefined, last: insert().compile(tx) }));
    await sql`DROP TABLE IF EXISTS pipeline_late`.execute(t.deps.db);
    await expect(write()).rejects.toMatchObject({ code: '42P01' });
    await sql`CREATE TABLE pipeline_late (id int PRIMARY KEY)`.execute(t.deps.db);
    await write();
    const stored = await sql<{ id: number }>`SELECT id FROM pipeline_late`.execute(t.deps.db);
    expect(stored.rows).toEqual([{ id: 1 }]);
  });
});

describe('a transaction lane', () => {
  const insert = (lane: TransactionLane, ...ids: number[]) =>
    lane.run(async (tx) => ({
      result: ids,
      last: sql`INSERT INTO pipeline_probe (id, xid) SELECT x, txid_current()::text FROM unnest(${ids}::int[]) AS u (x)`.compile(tx),
    }));

  it('sends transactions one behind the other on one connection without waiting, each committed on its own', async () => {
    await clear();
    const lane = new TransactionLane(t.database.pool);
    const acquired: unknown[] = [];
    const onAcquire = (client: unknown) => acquired.push(client);
    t.database.pool.on('acquire', onAcquire);
    try {
      const sent = [insert(lane, 50, 51), insert(lane, 52), insert(lane, 53)];
      expect(lane.inFlight).toBe(3);
      expect(await Promise.all(sent)).toEqual([[50, 51], [52], [53]]);
    } finally {
      t.database.pool.off('acquire', onAcquire);
    }
    expect(acquired).toHaveLength(1);
    expect(lane.inFlight).toBe(0);
    const stored = await rows();
    expect(stored.map((row) => row.id)).toEqual([50, 51, 52, 53]);
    // Three transactions: the first two rows share one, the other two have one each.
    expect(new Set(stored.map((row) => row.xid)).size).toBe(3);
  });

  it('rolls back a transaction that fails without touching the ones before and behind it', async () => {
    await clear();
    await sql`INSERT INTO pipeline_probe (id) VALUES (60)`.execute(t.deps.db);
    const lane = new TransactionLane(t.database.pool);
    const outcomes = await Promise.allSettled([insert(lane, 61), insert(lane, 62, 60), insert(lane, 63)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
    expect((await rows()).map((row) => row.id)).toEqual([60, 61, 63]);
  });

  it('gives its connection back to the pool once nothing is in flight', async () => {
    const lane = new TransactionLane(t.database.pool);
    await Promise.all([insert(lane, 70), insert(lane, 71)]);
    // Every connection of the pool is idle again (PGlite's pool has one, which another query needs).
    expect(t.database.pool.idleCount).toBe(t.database.pool.totalCount);
    const count = await sql<{ n: string }>`SELECT count(*)::text AS n FROM pipeline_probe WHERE id IN (70, 71)`.execute(t.deps.db);
    expect(count.rows[0]?.n).toBe('2');
  });

  it('plans its prepared statements generically, and the next user of its connection has the default setting back', async () => {
    await clear();
    const lane = new TransactionLane(t.database.pool);
    const insert = (id: number) => prepared(sql`INSERT INTO pipeline_probe (id) SELECT x FROM unnest(${[id]}::int[]) AS u (x)`);
    let laneClient: pg.PoolClient | undefined;
    const onAcquire = (client: pg.PoolClient) => (laneClient ??= client);
    t.database.pool.on('acquire', onAcquire);
    try {
      await Promise.all([90, 91, 92, 93, 94, 95].map((id) => lane.run(async (tx) => ({ result: id, last: insert(id).compile(tx) }))));
    } finally {
      t.database.pool.off('acquire', onAcquire);
    }
    if (!laneClient) return expect.fail('the lane took no connection');
    // The pool hands out the connection given back last: the lane's.
    const next = await t.database.pool.connect();
    try {
      expect(next).toBe(laneClient);
      const mode = await next.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
      expect(mode.rows[0]?.plan_cache_mode).toBe('auto');
      const name = preparedStatementName(insert(0).compile(t.deps.db).sql);
      const counted = await next.query<{ generic_plans: string; custom_plans: string }>('SELECT generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name = $1', [name]);
      expect(Number(counted.rows[0]?.custom_plans ?? -1)).toBe(0);
    } finally {
      next.release();
    }
    expect((await rows()).map((row) => row.id)).toEqual([90, 91, 92, 93, 94, 95]);
  });

  it('refuses work that sends a statement of its own, and sends nothing', async () => {
    await clear();
    const lane = new TransactionLane(t.database.pool);
    const attempt = lane.run(async (tx) => {
      await sql`INSERT INTO pipeline_probe (id) VALUES (80)`.execute(tx);
      return { result: undefined };
    });
    await expect(attempt).rejects.toThrow('a transaction on a lane sends nothing but its last statement');
    expect(await rows()).toEqual([]);
    expect(lane.inFlight).toBe(0);
  });
});

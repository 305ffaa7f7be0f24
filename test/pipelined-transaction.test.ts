import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPipelinedTransaction } from '../src/platform/db/pipelined-transaction.js';
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

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPipelinedTransaction } from '../src/platform/db/pipelined-transaction.js';
import { createTestApp, type TestContext } from './harness.js';

// The pipelined transactions (pipelined-transaction.ts) issue BEGIN and the statements behind it
// without awaiting each other. Both databases' pools run node-postgres in its pipeline mode (its
// public `pipeline` option), so such statements go out in order instead of waiting in the client's
// query queue, whose use node-postgres deprecates: the DeprecationWarning "Calling client.query()
// when the client is already executing a query" must not appear (issue 26, item 7).

let t: TestContext;
const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);

beforeAll(async () => {
  process.on('warning', onWarning);
  t = await createTestApp();
  await sql`CREATE TABLE query_order_probe (id int PRIMARY KEY, xid text NOT NULL)`.execute(t.deps.db);
});
afterAll(async () => {
  process.off('warning', onWarning);
  await t.close();
});

const deprecations = () => warnings.filter((warning) => warning.name === 'DeprecationWarning').map((warning) => warning.message);

describe('statements issued without awaiting each other', () => {
  it('pipelined transactions run their statements in order, inside their own transaction, with no deprecation warning', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, id) =>
        withPipelinedTransaction(t.database.pool, async (tx) => {
          // Two independent reads issued together, as the batched write path issues them.
          const [xid, count] = await Promise.all([
            sql<{ xid: string }>`SELECT txid_current()::text AS xid`.execute(tx),
            sql<{ count: string }>`SELECT count(*)::text AS count FROM query_order_probe`.execute(tx),
          ]);
          expect(count.rows).toHaveLength(1);
          const last = sql`INSERT INTO query_order_probe (id, xid) VALUES (${id}, txid_current()::text)`.compile(tx);
          return { result: { id, xid: xid.rows[0]?.xid }, last };
        }),
      ),
    );
    const stored = (await sql<{ id: number; xid: string }>`SELECT id, xid FROM query_order_probe ORDER BY id`.execute(t.deps.db)).rows;
    expect(stored.map((row) => row.id)).toEqual([0, 1, 2, 3, 4, 5]);
    // Each INSERT ran in the transaction of the reads issued before it.
    for (const row of stored) expect(row.xid).toBe(results[row.id]?.xid);
    expect(deprecations()).toEqual([]);
  });

  it('plain queries issued together on one client keep their order and their own results, a failure included', async () => {
    const client = await t.database.pool.connect();
    try {
      const answers = await Promise.all(Array.from({ length: 5 }, (_, index) => client.query<{ n: number }>('SELECT $1::int AS n', [index])));
      expect(answers.map((answer) => answer.rows[0]?.n)).toEqual([0, 1, 2, 3, 4]);
      const failing = client.query('SELECT 1/0');
      const after = client.query<{ n: number }>('SELECT 7 AS n');
      await expect(failing).rejects.toThrow(/division by zero/);
      expect((await after).rows[0]?.n).toBe(7);
    } finally {
      client.release();
    }
    expect(deprecations()).toEqual([]);
  });
});

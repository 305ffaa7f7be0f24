import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/platform/db/transaction.js';
import { createTestApp, testDatabase, type TestContext } from './harness.js';

// On the embedded database a query is answered inside this process, without I/O: a loop of
// transactions that only awaits the database would never let the event loop read a socket, so every
// other request waited for the loop to end. Each taking of the connection waits for the next turn of
// the event loop (database.ts), whichever way it is taken; on PostgreSQL the queries' own I/O does it.

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/**
 * Runs `step` 20 times in a row; tells, for each step, whether a callback queued for the event
 * loop's next turn before the loop (setImmediate: it runs once the loop has polled for I/O) had run.
 * A timer would need a millisecond to pass as well: on PostgreSQL ten quick round trips on loopback
 * can take less, and the test failed there once in CI's pre-check (2026-12-05) though the loop turned.
 */
async function loopSeeing(step: () => Promise<unknown>): Promise<boolean[]> {
  let fired = false;
  setImmediate(() => {
    fired = true;
  });
  const seen: boolean[] = [];
  for (let index = 0; index < 20; index++) {
    await step();
    seen.push(fired);
  }
  return seen;
}

const lastTen = Array.from({ length: 10 }, () => true);

describe('a loop of database work lets the event loop turn between two uses of the connection', () => {
  it('transactions taken through Kysely', async () => {
    const seen = await loopSeeing(() => withTransaction(t.deps.db, (tx) => sql`SELECT 1`.execute(tx)));
    expect(seen.slice(-10)).toEqual(lastTen);
  });

  it('queries sent on the pool itself (which takes its connection with a callback)', async () => {
    const seen = await loopSeeing(() => t.database.pool.query('SELECT 1'));
    expect(seen.slice(-10)).toEqual(lastTen);
  });

  it('a connection taken and released by hand', async () => {
    const seen = await loopSeeing(async () => {
      const client = await t.database.pool.connect();
      try {
        await client.query('SELECT 1');
      } finally {
        client.release();
      }
    });
    expect(seen.slice(-10)).toEqual(lastTen);
  });

  it(`runs on ${testDatabase}`, () => {
    expect(['pglite', 'postgres']).toContain(testDatabase);
  });
});

import crypto from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/database.js';
import { TransactionGroups } from '../src/platform/db/transaction-groups.js';
import { withTransaction, type Tx } from '../src/platform/db/transaction.js';

// A deadlock inside a transaction group (the card messages' transactions) runs the group again, as
// a deadlock runs a plain transaction again (withTransaction). Until 2026-12-07 a group of one
// answered the deadlock as its error (a 500 to the card message), because the member's failure was
// wrapped without its SQLSTATE; a money audit saw it under mixed load on PostgreSQL.

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const table = `group_deadlock_${crypto.randomBytes(4).toString('hex')}`;
let database: DatabaseHandle;
let admin: pg.Client;

beforeAll(async () => {
  admin = new pg.Client(url);
  await admin.connect();
  await admin.query(`CREATE TABLE ${table} (id text PRIMARY KEY, v int NOT NULL)`);
  database = await openDatabase({ databaseUrl: url, poolMax: 4, connectTimeoutMs: 10_000 });
});
afterAll(async () => {
  await database.close();
  await admin.query(`DROP TABLE ${table}`);
  await admin.end();
});

/**
 * Runs `member` (through `run`) against another transaction that takes the rows in the other
 * order: the member locks b, then waits for a, which the other holds; the other then wants b.
 * PostgreSQL's deadlock check (deadlock_timeout, 1 s by default) fires first in the member, which
 * has waited longer, and cancels its statement with 40P01.
 */
async function deadlockAgainst(run: (work: (tx: Tx) => Promise<string>) => Promise<string>): Promise<{ outcome: string; attempts: number; other: string }> {
  await admin.query(`DELETE FROM ${table}; INSERT INTO ${table} VALUES ('a', 0), ('b', 0)`);
  const other = new pg.Client(url);
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query(`UPDATE ${table} SET v = v + 1 WHERE id = 'a'`);
    let attempts = 0;
    const member = run(async (tx) => {
      attempts++;
      await sql`UPDATE ${sql.table(table)} SET v = v + 1 WHERE id = 'b'`.execute(tx);
      await sql`UPDATE ${sql.table(table)} SET v = v + 1 WHERE id = 'a'`.execute(tx);
      return 'committed';
    }).then(
      (value) => value,
      (error: { code?: string }) => `rejected ${error.code ?? ''}`,
    );
    // The member waits for a before the other asks for b, and a while before (its deadlock check
    // then fires first): until 2026-12-08 a fixed 300 ms, which a loaded machine could outrun, so
    // that no deadlock happened at all (attempts 1; a flaky-test review).
    const otherPid = (await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const waiting = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND $1::int = ANY (pg_blocking_pids(pid))', [otherPid]);
      if ((waiting.rows[0]?.n ?? 0) > 0) break;
      if (Date.now() > deadline) throw new Error('the member never waited for the row the other transaction holds');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const otherDone = other.query(`UPDATE ${table} SET v = v + 1 WHERE id = 'b'`).then(
      async () => {
        await other.query('COMMIT');
        return 'committed';
      },
      async (error: { code?: string }) => {
        await other.query('ROLLBACK');
        return `rejected ${error.code ?? ''}`;
      },
    );
    const [outcome, otherOutcome] = await Promise.all([member, otherDone]);
    return { outcome, attempts, other: otherOutcome };
  } finally {
    await other.end();
  }
}

describe('a deadlock in a transaction group runs the group again', () => {
  const groups = () => new TransactionGroups(database, { sizeMax: 64, concurrency: 1 });
  it.each([
    ['a plain transaction, for comparison', (work: (tx: Tx) => Promise<string>) => withTransaction(database.db, work)],
    ['a group of one', (work: (tx: Tx) => Promise<string>) => groups().run(['only'], work)],
  ])('%s: the deadlocked attempt is run again and commits, once', async (_name, run) => {
    const result = await deadlockAgainst(run);
    expect(result).toEqual({ outcome: 'committed', attempts: 2, other: 'committed' });
    const rows = await admin.query<{ id: string; v: number }>(`SELECT id, v FROM ${table} ORDER BY id`);
    // Each transaction added 1 to both rows, once.
    expect(rows.rows).toEqual([
      { id: 'a', v: 2 },
      { id: 'b', v: 2 },
    ]);
  }, 20_000);
});

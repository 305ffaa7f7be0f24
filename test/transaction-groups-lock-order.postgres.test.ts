import crypto from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/database.js';
import { GroupConflict, inGroupLockOrder, passLockTurn, TransactionGroups } from '../src/platform/db/transaction-groups.js';
import type { Tx } from '../src/platform/db/transaction.js';

// The members of a transaction group (card messages) lock their wallets' ledger accounts through
// `inGroupLockOrder`: the group sends those statements together, in the accounts' lock order, once
// every member still at work has asked or finished. Until the thirty-fourth session each member
// locked its account when it got there, so a group could hold one account while waiting for
// another that a transfer batch held, the batch waiting for the first: a deadlock, broken by
// PostgreSQL after deadlock_timeout (a money audit measured card messages' p99 at 6–10 s).

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const table = `group_lock_order_${crypto.randomBytes(4).toString('hex')}`;
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

const groups = () => new TransactionGroups(database, { sizeMax: 64, concurrency: 1 });
const lockRow = (tx: Tx, id: string) => inGroupLockOrder(tx, id, () => sql`SELECT v FROM ${sql.table(table)} WHERE id = ${id} FOR NO KEY UPDATE`.execute(tx));
const addOne = (tx: Tx, id: string) => sql`UPDATE ${sql.table(table)} SET v = v + 1 WHERE id = ${id}`.execute(tx);

describe("a group's members take the rows they lock through inGroupLockOrder in that order", () => {
  it('with the first row in lock order held elsewhere, the group waits before it takes the second (no cycle with a transaction taking them in order)', async () => {
    await admin.query(`DELETE FROM ${table}; INSERT INTO ${table} VALUES ('a', 0), ('b', 0)`);
    const other = new pg.Client(url);
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM ${table} WHERE id = 'a' FOR NO KEY UPDATE`);
      const group = groups();
      // The member locking b comes first in the group; the one locking a second.
      const members = ['b', 'a'].map((id) =>
        group.run([id], async (tx) => {
          await lockRow(tx, id);
          await addOne(tx, id);
          return id;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      // b is free: the group asks for a first and waits for it (before, the member that came first
      // held b, and NOWAIT failed with 55P03).
      await expect(other.query(`SELECT 1 FROM ${table} WHERE id = 'b' FOR NO KEY UPDATE NOWAIT`)).resolves.toMatchObject({ rowCount: 1 });
      await other.query('COMMIT');
      await expect(Promise.all(members)).resolves.toEqual(['b', 'a']);
      const rows = await admin.query<{ id: string; v: number }>(`SELECT id, v FROM ${table} ORDER BY id`);
      expect(rows.rows).toEqual([
        { id: 'a', v: 1 },
        { id: 'b', v: 1 },
      ]);
    } finally {
      await other.end();
    }
  }, 20_000);

  it('a member that passes (passLockTurn) lets the others ask without waiting for it to finish', async () => {
    await admin.query(`DELETE FROM ${table}; INSERT INTO ${table} VALUES ('a', 0)`);
    // The order in which the database ran the statements (one connection runs them in the order they
    // were sent): the order their answers reach the members' code is not it, as answers arriving
    // together resume their members after more or fewer steps (until the thirty-seventh session this
    // test compared the latter, and failed about once in ten runs on a loaded machine).
    const sequence = `${table}_turns`;
    await admin.query(`CREATE SEQUENCE ${sequence}`);
    try {
      const group = groups();
      const turn = async (tx: Tx, statement: ReturnType<typeof sql<{ turn: string }>>) => Number((await statement.execute(tx)).rows[0]?.turn);
      const [passing, locking] = await Promise.all([
        group.run(['passes'], async (tx) => {
          passLockTurn(tx);
          const first = await turn(tx, sql<{ turn: string }>`SELECT nextval(${sequence}) AS turn FROM pg_sleep(0.2)`);
          const second = await turn(tx, sql<{ turn: string }>`SELECT nextval(${sequence}) AS turn`);
          return { first, second };
        }),
        group.run(['a'], (tx) =>
          inGroupLockOrder(tx, 'a', () => turn(tx, sql<{ turn: string }>`SELECT nextval(${sequence}) AS turn FROM ${sql.table(table)} WHERE id = 'a' FOR NO KEY UPDATE`)),
        ),
      ]);
      // The lock left with the first statement; waiting for the member to finish, it would have run last.
      expect([passing.first, locking, passing.second]).toEqual([1, 2, 3]);
    } finally {
      await admin.query(`DROP SEQUENCE ${sequence}`);
    }
  }, 20_000);

  it('a statement that fails to start fails its own member only; the others\' still leave', async () => {
    await admin.query(`DELETE FROM ${table}; INSERT INTO ${table} VALUES ('b', 0)`);
    const group = groups();
    const outcomes = await Promise.allSettled([
      group.run(['a'], (tx) =>
        inGroupLockOrder(tx, 'a', () => {
          throw new Error('cannot start');
        }),
      ),
      group.run(['b'], async (tx) => {
        await lockRow(tx, 'b');
        await addOne(tx, 'b');
        return 'b';
      }),
    ]);
    expect(outcomes[0]).toMatchObject({ status: 'rejected', reason: { message: 'cannot start' } });
    expect(outcomes[1]).toEqual({ status: 'fulfilled', value: 'b' });
    expect((await admin.query<{ v: number }>(`SELECT v FROM ${table} WHERE id = 'b'`)).rows).toEqual([{ v: 1 }]);
  }, 20_000);

  it('members that finish, fail or leave the group without asking hold no one up; outside a group it is sent at once', async () => {
    await admin.query(`DELETE FROM ${table}; INSERT INTO ${table} VALUES ('a', 0), ('b', 0), ('c', 0)`);
    const group = groups();
    let leaves = 0;
    const outcomes = await Promise.allSettled([
      group.run(['slow'], async (tx) => {
        await sql`SELECT pg_sleep(0.2)`.execute(tx);
        return 'slow';
      }),
      group.run(['c'], async (tx) => {
        await lockRow(tx, 'c');
        await addOne(tx, 'c');
        return 'c';
      }),
      group.run(['leaves'], async () => {
        leaves++;
        if (leaves === 1) throw new GroupConflict('leaves', Promise.resolve());
        return 'left once';
      }),
      group.run(['a'], async (tx) => {
        await lockRow(tx, 'a');
        await addOne(tx, 'a');
        return 'a';
      }),
    ]);
    // The member that left ran again in a later group; the others committed in the first.
    expect(outcomes).toEqual(['slow', 'c', 'left once', 'a'].map((value) => ({ status: 'fulfilled', value })));
    await database.db.transaction().execute(async (tx) => {
      await lockRow(tx, 'b');
      await addOne(tx, 'b');
    });
    const rows = await admin.query<{ id: string; v: number }>(`SELECT id, v FROM ${table} ORDER BY id`);
    expect(rows.rows.map((row) => row.v)).toEqual([1, 1, 1]);
  }, 20_000);
});

import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimInGroup, deferToGroup, transactionShard, GroupConflict, GroupsInFlight, TransactionGroups } from '../src/platform/db/transaction-groups.js';
import { WriteStatement, type RowsKind } from '../src/platform/db/write-statement.js';
import { withTransaction, type Tx } from '../src/platform/db/transaction.js';
import { systemAccountShards } from '../src/modules/ledger/ledger.js';
import { createTestApp, type TestContext } from './harness.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
  await sql`CREATE TABLE group_probe (id int PRIMARY KEY, xid text NOT NULL)`.execute(t.deps.db);
  await sql`CREATE TABLE group_totals (id int PRIMARY KEY, total int NOT NULL)`.execute(t.deps.db);
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  await sql`DELETE FROM group_probe`.execute(t.deps.db);
  await sql`DELETE FROM group_totals`.execute(t.deps.db);
});

interface Observed {
  members: number;
  committed: boolean;
  deferred: number;
}

function groupsOf(observed: Observed[] = []) {
  return new TransactionGroups(t.database, { sizeMax: 64, concurrency: 1, observe: (members, committed, deferred) => observed.push({ members, committed, deferred }) });
}

const xidOf = async (tx: Tx) => (await sql<{ xid: string }>`SELECT txid_current()::text AS xid`.execute(tx)).rows[0]?.xid ?? '';
const insert = async (tx: Tx, id: number) => {
  await sql`INSERT INTO group_probe (id, xid) VALUES (${id}, txid_current()::text)`.execute(tx);
};
const stored = async () => (await sql<{ id: number; xid: string }>`SELECT id, xid FROM group_probe ORDER BY id`.execute(t.deps.db)).rows;

/** Any 16 consecutive groups took 16 different shards of the ledger. */
function expectShardsInTurn(shards: readonly number[]): void {
  for (let start = 0; start + 16 <= shards.length; start++) {
    expect(new Set(shards.slice(start, start + 16).map((shard) => shard % systemAccountShards)).size).toBe(16);
  }
}

describe('members that arrive together', () => {
  it('share one transaction and commit together', async () => {
    const observed: Observed[] = [];
    const groups = groupsOf(observed);
    const ids = [1, 2, 3, 4, 5, 6];
    const answers = await Promise.all(ids.map((id) => groups.run([], async (tx) => (await insert(tx, id), id * 10))));
    expect(answers).toEqual([10, 20, 30, 40, 50, 60]);
    const rows = await stored();
    expect(rows.map((row) => row.id)).toEqual(ids);
    expect(new Set(rows.map((row) => row.xid)).size).toBe(1);
    expect(observed).toEqual([{ members: 6, committed: true, deferred: 0 }]);
  });

  it('with the same key never share a group: the second runs in a later transaction', async () => {
    const groups = groupsOf();
    const xids = await Promise.all([
      groups.run(['key-a'], async (tx) => (await insert(tx, 1), xidOf(tx))),
      groups.run(['key-a'], async (tx) => (await insert(tx, 2), xidOf(tx))),
      groups.run(['key-b'], async (tx) => (await insert(tx, 3), xidOf(tx))),
    ]);
    expect(xids[0]).toBe(xids[2]);
    expect(xids[1]).not.toBe(xids[0]);
    expect((await stored()).map((row) => row.id)).toEqual([1, 2, 3]);
  });

  it('take one system account shard for the whole group; a transaction outside a group draws one of its own', async () => {
    const groups = groupsOf();
    const shards = await Promise.all([1, 2, 3].map(() => groups.run([], async (tx) => (await xidOf(tx), transactionShard(tx)))));
    expect(shards[0]).toBeTypeOf('number');
    expect(new Set(shards).size).toBe(1);
    // Outside a group, a transaction draws its own, and keeps it.
    const alone = await withTransaction(t.deps.db, async (tx) => [transactionShard(tx), transactionShard(tx)]);
    expect(alone[0]).toBeTypeOf('number');
    expect(alone[1]).toBe(alone[0]);
  });

  it('take shards in turn: any 16 groups in a row take 16 different shards of the ledger (so two groups in flight never wait for one)', async () => {
    const groups = groupsOf();
    const shards: number[] = [];
    for (let group = 0; group < 40; group++) shards.push(await groups.run([], async (tx) => transactionShard(tx)));
    expectShardsInTurn(shards);
  });
});

describe('the next group', () => {
  /** group_probe rows whose part takes `seconds` more (a slow merged write). */
  const slowProbeRows = (seconds: number): RowsKind<number> => ({
    name: 'slow_probe',
    parts: (ids) => [
      { name: 'slow_probe', statement: sql`INSERT INTO group_probe (id, xid) SELECT id, txid_current()::text FROM unnest(${ids}::int[]) AS n (id), pg_sleep(${seconds})` },
    ],
  });

  /** group_probe rows whose part first waits for the advisory lock `key` (a slow merged write, for as long as the test holds it). */
  const gatedProbeRows = (key: number): RowsKind<number> => ({
    name: 'gated_probe',
    parts: (ids) => [
      {
        name: 'gated_probe',
        statement: sql`INSERT INTO group_probe (id, xid) SELECT id, txid_current()::text FROM unnest(${ids}::int[]) AS n (id), (SELECT pg_advisory_xact_lock_shared(${key})) AS gate`,
      },
    ],
  });
  const until = async (condition: () => boolean, ms: number) => {
    for (const end = Date.now() + ms; !condition() && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it('starts, with overlapCommit on PostgreSQL, while the last group sends its merged write and COMMIT; otherwise once it has ended', async () => {
    const postgres = t.database.kind === 'postgres';
    const gateKey = 7_300_417;
    for (const overlapCommit of [false, true]) {
      await sql`DELETE FROM group_probe`.execute(t.deps.db);
      const groups = new TransactionGroups(t.database, { sizeMax: 64, concurrency: 1, overlapCommit });
      // On PostgreSQL the first group's merged write waits for an advisory lock the test holds on a
      // connection of its own, until the second group is at work (or, not overlapping, a while has
      // passed): nothing depends on how fast the machine is (until the thirty-seventh session it
      // slept 0.4 s, and a loaded CI machine once started the second group later than that). The
      // embedded database has one connection: the groups take turns whatever the timing.
      const gate = postgres ? await t.database.pool.connect() : undefined;
      await gate?.query('SELECT pg_advisory_lock($1)', [gateKey]);
      try {
        const seen: string[] = [];
        let firstMemberDone = false;
        const first = groups
          .run([], async (tx) => {
            const write = new WriteStatement();
            write.addRows(postgres ? gatedProbeRows(gateKey) : slowProbeRows(0.4), [1]);
            firstMemberDone = true;
            return deferToGroup(tx, write);
          })
          .then(() => seen.push('first committed'));
        // Arrives once the first group's member has finished: its write is under way, or about to be.
        await until(() => firstMemberDone, 10_000);
        const second = groups.run([], async (tx) => {
          seen.push('second at work');
          await insert(tx, 2);
          return xidOf(tx);
        });
        const overlapped = overlapCommit && postgres;
        await until(() => overlapped && seen.includes('second at work'), overlapped ? 10_000 : 300);
        await gate?.query('SELECT pg_advisory_unlock($1)', [gateKey]);
        await Promise.all([first, second]);
        expect(seen, `overlapCommit ${overlapCommit}`).toEqual(overlapped ? ['second at work', 'first committed'] : ['first committed', 'second at work']);
        expect((await stored()).map((row) => row.id)).toEqual([1, 2]);
      } finally {
        gate?.release(true);
      }
    }
  });

  it('with overlapCommit waits again for a group run again after its merged write failed (a serialization failure): its members are at work again', async () => {
    await sql`CREATE SEQUENCE IF NOT EXISTS group_attempts`.execute(t.deps.db);
    await sql`ALTER SEQUENCE group_attempts RESTART`.execute(t.deps.db);
    // A serialization failure the first time only (a sequence is not rolled back): the group runs again.
    await sql`CREATE OR REPLACE FUNCTION group_probe_fail_once() RETURNS text LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('group_attempts') = 1 THEN RAISE EXCEPTION 'probe' USING ERRCODE = 'serialization_failure'; END IF;
        RETURN txid_current()::text;
      END $$`.execute(t.deps.db);
    const failingFirst: RowsKind<number> = {
      name: 'failing_first',
      parts: (ids) => [
        {
          name: 'failing_first',
          statement: sql`INSERT INTO group_probe (id, xid)
            SELECT id, group_probe_fail_once() FROM unnest(${ids}::int[]) AS n (id)`,
        },
      ],
    };
    const groups = new TransactionGroups(t.database, { sizeMax: 64, concurrency: 1, overlapCommit: true });
    let attempts = 0;
    let firstAtWork = false;
    const first = groups.run([], async (tx) => {
      attempts++;
      firstAtWork = true;
      // The second attempt's work takes a while: the second group arrives meanwhile.
      if (attempts > 1) await sql`SELECT pg_sleep(0.3)`.execute(tx);
      firstAtWork = false;
      const write = new WriteStatement();
      write.addRows(failingFirst, [1]);
      return deferToGroup(tx, write);
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    let sawFirstAtWork: boolean | undefined;
    const second = groups.run([], async (tx) => {
      sawFirstAtWork = firstAtWork;
      await insert(tx, 2);
    });
    await Promise.all([first, second]);
    expect(attempts).toBe(2);
    expect(sawFirstAtWork).toBe(false);
    expect((await stored()).map((row) => row.id)).toEqual([1, 2]);
  });

  it('with overlapCommit still waits outside for what the group still committing claimed', async () => {
    const groups = new TransactionGroups(t.database, { sizeMax: 64, concurrency: 1, overlapCommit: true });
    const first = groups.run([], async (tx) => {
      claimInGroup(tx, ['card-7']);
      const write = new WriteStatement();
      write.addRows(slowProbeRows(0.3), [1]);
      return deferToGroup(tx, write);
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = groups.run([], async (tx) => {
      claimInGroup(tx, ['card-7']);
      // Runs once the first group has committed: its row is there.
      return (await sql<{ n: number }>`SELECT count(*)::int AS n FROM group_probe`.execute(tx)).rows[0]?.n;
    });
    await first;
    expect(await second).toBe(1);
  });
});

describe('a member that fails', () => {
  it('commits nothing of its group: it runs again alone and gets its own error; the others run again together and commit', async () => {
    const observed: Observed[] = [];
    const groups = groupsOf(observed);
    const results = await Promise.allSettled(
      [1, 2, 3, 4].map((id) =>
        groups.run([], async (tx) => {
          await insert(tx, id);
          if (id === 3) throw new Error('member 3 refuses');
          return id;
        }),
      ),
    );
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).toEqual(new Error('member 3 refuses'));
    const rows = await stored();
    expect(rows.map((row) => row.id)).toEqual([1, 2, 4]);
    // The three others ran again as one group: one transaction.
    expect(new Set(rows.map((row) => row.xid)).size).toBe(1);
    expect(observed).toEqual([
      { members: 4, committed: false, deferred: 0 },
      { members: 3, committed: true, deferred: 0 },
    ]);
  });

  it('several of one group: each runs again alone, the others together, one member fewer each time (every member runs at most once more per failing one)', async () => {
    const groups = groupsOf();
    const attempts = new Map<number, number>();
    const ids = [1, 2, 3, 4, 5, 6, 7, 8];
    const failing = new Set([3, 6]);
    const results = await Promise.allSettled(
      ids.map((id) =>
        groups.run([], async (tx) => {
          attempts.set(id, (attempts.get(id) ?? 0) + 1);
          await insert(tx, id);
          if (failing.has(id)) throw new Error(`member ${id} refuses`);
          return id;
        }),
      ),
    );
    expect(results.map((result) => result.status)).toEqual(ids.map((id) => (failing.has(id) ? 'rejected' : 'fulfilled')));
    const rows = await stored();
    expect(rows.map((row) => row.id)).toEqual([1, 2, 4, 5, 7, 8]);
    expect(new Set(rows.map((row) => row.xid)).size).toBe(1);
    // 3 failed the first group and ran alone; 6 failed the second (seven members) and ran alone; the six others committed in the third.
    expect(Object.fromEntries(attempts)).toEqual({ 1: 3, 2: 3, 3: 2, 4: 3, 5: 3, 6: 3, 7: 3, 8: 3 });
  });

  it('whose merged write fails: nothing commits; the group runs again in halves, halved again while it fails, down to the member alone, which gets its own error', async () => {
    await sql`INSERT INTO group_probe (id, xid) VALUES (99, 'before')`.execute(t.deps.db);
    const kind = probeRows();
    const observed: Observed[] = [];
    const groups = groupsOf(observed);
    const attempts = new Map<number, number>();
    const ids = [1, 2, 3, 4, 5, 6, 7, 8];
    const results = await Promise.allSettled(
      ids.map((id) =>
        groups.run([], async (tx) => {
          attempts.set(id, (attempts.get(id) ?? 0) + 1);
          // Left to the group every time: 5 repeats the existing row 99, so every merged write with it fails.
          const write = new WriteStatement();
          write.addRows(kind, [id === 5 ? 99 : id]);
          if (!deferToGroup(tx, write)) throw new Error('not in a group');
          return id;
        }),
      ),
    );
    expect(results.map((result) => result.status)).toEqual(ids.map((id) => (id === 5 ? 'rejected' : 'fulfilled')));
    expect(((results[4] as PromiseRejectedResult).reason as { code?: string }).code).toBe('23505');
    // 8 fails; 1–4 commit; 5–8 fail; 5–6 fail; 5 alone fails; 6 alone commits; 7–8 commit: one group at a time.
    expect(observed.map(({ members, committed }) => `${members}${committed ? '+' : '-'}`)).toEqual(['8-', '4+', '4-', '2-', '1-', '1+', '2+']);
    expect(Object.fromEntries(attempts)).toEqual({ 1: 2, 2: 2, 3: 2, 4: 2, 5: 4, 6: 4, 7: 3, 8: 3 });
    expect((await stored()).map((row) => row.id)).toEqual([1, 2, 3, 4, 6, 7, 8, 99]);
  });

  it('whose statement PostgreSQL refuses (aborting the shared transaction) fails alone; its neighbours commit', async () => {
    await sql`INSERT INTO group_probe (id, xid) VALUES (99, 'before')`.execute(t.deps.db);
    const groups = groupsOf();
    const results = await Promise.allSettled([1, 99, 2].map((id) => groups.run([], async (tx) => (await insert(tx, id), id))));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as { code?: string }).code).toBe('23505');
    expect((await stored()).map((row) => row.id)).toEqual([1, 2, 99]);
  });

  it('that PostgreSQL refused is the one run again alone, not a neighbour whose later statement found the transaction aborted', async () => {
    await sql`INSERT INTO group_probe (id, xid) VALUES (99, 'before')`.execute(t.deps.db);
    const groups = groupsOf();
    const attempts = new Map<number, number>();
    const errors = new Map<number, string | undefined>();
    const results = await Promise.allSettled(
      [1, 99, 2].map((id) =>
        groups.run([], async (tx) => {
          attempts.set(id, (attempts.get(id) ?? 0) + 1);
          // 1 and 2 read first: their inserts leave after 99's, which fails.
          if (id !== 99) await xidOf(tx);
          try {
            await insert(tx, id);
          } catch (error) {
            if (!errors.has(id)) errors.set(id, (error as { code?: string }).code);
            throw error;
          }
          return id;
        }),
      ),
    );
    expect(errors.get(1)).toBe('25P02');
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    // 99 ran again alone, 1 and 2 together: each twice.
    expect(Object.fromEntries(attempts)).toEqual({ 1: 2, 2: 2, 99: 2 });
    const rows = (await stored()).filter((row) => row.id !== 99);
    expect(rows.map((row) => row.id)).toEqual([1, 2]);
    expect(new Set(rows.map((row) => row.xid)).size).toBe(1);
  });
});

describe('claims', () => {
  it('a member claiming what another member of its group claimed leaves it and runs after the group committed', async () => {
    const observed: Observed[] = [];
    const groups = groupsOf(observed);
    const member = (id: number, claims: string[]) =>
      groups.run([], async (tx) => {
        claimInGroup(tx, claims);
        // The same member may claim again what it holds.
        claimInGroup(tx, claims);
        await insert(tx, id);
        return { xid: await xidOf(tx), seen: (await sql<{ n: number }>`SELECT count(*)::int AS n FROM group_probe`.execute(tx)).rows[0]?.n };
      });
    const [first, second, third] = await Promise.all([member(1, ['card-1', 'wallet-1']), member(2, ['card-2', 'wallet-1']), member(3, ['card-3', 'wallet-3'])]);
    expect(first?.xid).toBe(third?.xid);
    expect(second?.xid).not.toBe(first?.xid);
    // It ran once the group had committed: it sees the group's rows and its own.
    expect(second?.seen).toBe(3);
    expect((await stored()).map((row) => row.id)).toEqual([1, 2, 3]);
    expect(observed).toEqual([
      { members: 3, committed: true, deferred: 1 },
      { members: 1, committed: true, deferred: 0 },
    ]);
  });

  it('members that each claim what the other claimed first (in the opposite order) both finish: the first runs alone, then the other', async () => {
    // Until 2026-12-03 both left the group, ran again together, left again, for ever (found by the cooperative model test).
    const observed: Observed[] = [];
    const groups = groupsOf(observed);
    const member = (id: number, claims: [string, string]) =>
      groups.run([], async (tx) => {
        claimInGroup(tx, [claims[0]]);
        // Both members hold their first claim before either asks for its second.
        await xidOf(tx);
        claimInGroup(tx, [claims[1]]);
        await insert(tx, id);
        return xidOf(tx);
      });
    const [first, second] = await Promise.all([member(1, ['card-1', 'key-1']), member(2, ['key-1', 'card-1'])]);
    expect(first).not.toBe(second);
    expect((await stored()).map((row) => row.id)).toEqual([1, 2]);
    // The group where both left; the first then ran alone (a transaction of its own, not a group); the second in a group of its own.
    expect(observed).toEqual([
      { members: 2, committed: true, deferred: 2 },
      { members: 1, committed: true, deferred: 0 },
    ]);
  }, 10_000);

  it('a member claiming what another group in flight holds waits for that group to end, then runs', async () => {
    const observed: Observed[] = [];
    const groups = new TransactionGroups(t.database, { sizeMax: 64, concurrency: 2, observe: (members, committed, deferred) => observed.push({ members, committed, deferred }) });
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const first = Promise.all([
      groups.run([], async (tx) => {
        claimInGroup(tx, ['card-9']);
        await insert(tx, 1);
        await gate;
        return xidOf(tx);
      }),
      groups.run([], async (tx) => (await insert(tx, 2), xidOf(tx))),
    ]);
    // The first group is in flight (its member holds card-9) when the second starts.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = groups.run([], async (tx) => {
      claimInGroup(tx, ['card-9']);
      await insert(tx, 3);
      return { xid: await xidOf(tx), seen: (await sql<{ n: number }>`SELECT count(*)::int AS n FROM group_probe`.execute(tx)).rows[0]?.n };
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    open();
    const [[xid1, xid2], later] = await Promise.all([first, second]);
    expect(xid1).toBe(xid2);
    expect(later.xid).not.toBe(xid1);
    expect(later.seen).toBe(3);
    // On PostgreSQL the second group started while the first held card-9 and its member waited
    // outside; the embedded database's one connection let it start only after the first had ended.
    expect(observed.filter((entry) => entry.deferred > 0)).toHaveLength(t.database.kind === 'postgres' ? 1 : 0);
  });

  it('lanes sharing their groups in flight: a member of one lane claiming what a group of the other holds waits outside, then runs', async () => {
    const observed: Observed[] = [];
    const inFlight = new GroupsInFlight();
    const lane = () => new TransactionGroups(t.database, { sizeMax: 64, concurrency: 1, inFlight, observe: (members, committed, deferred) => observed.push({ members, committed, deferred }) });
    const [messages, decisions] = [lane(), lane()];
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const first = messages.run([], async (tx) => {
      claimInGroup(tx, ['card-7']);
      await insert(tx, 1);
      await gate;
      return xidOf(tx);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The other lane starts at once (its own concurrency), finds card-7 held and leaves its group.
    const second = decisions.run([], async (tx) => {
      claimInGroup(tx, ['card-7']);
      await insert(tx, 2);
      return { xid: await xidOf(tx), seen: (await sql<{ n: number }>`SELECT count(*)::int AS n FROM group_probe`.execute(tx)).rows[0]?.n };
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    open();
    const [xid1, later] = await Promise.all([first, second]);
    expect(later.xid).not.toBe(xid1);
    expect(later.seen).toBe(2);
    // On PostgreSQL the lanes ran at once and the claim sent the second outside; the embedded
    // database's one connection let it start only after the first had ended.
    expect(observed.filter((entry) => entry.deferred > 0)).toHaveLength(t.database.kind === 'postgres' ? 1 : 0);
  });

  it('lanes sharing their groups in flight take the ledger shards in one turn', async () => {
    const inFlight = new GroupsInFlight();
    const lanes = [0, 1].map(() => new TransactionGroups(t.database, { sizeMax: 64, concurrency: 1, inFlight }));
    const shards: number[] = [];
    for (let group = 0; group < 32; group++) shards.push(await (lanes[group % 2] as TransactionGroups).run([], async (tx) => transactionShard(tx)));
    expectShardsInTurn(shards);
  });

  it('is free outside a group, and a conflict is its own error type', async () => {
    await withTransaction(t.deps.db, async (tx) => {
      claimInGroup(tx, ['card-1']);
      claimInGroup(tx, ['card-1']);
    });
    expect(new GroupConflict('card-1', Promise.resolve())).toBeInstanceOf(Error);
  });
});

/** group_probe rows as a kind of rows; `parts` notes the rows of every part it builds. */
function probeRows(built: number[][] = []): RowsKind<number> {
  return {
    name: 'probe',
    parts: (ids) => {
      built.push([...ids]);
      return [{ name: 'probe', statement: sql`INSERT INTO group_probe (id, xid) SELECT id, txid_current()::text FROM unnest(${ids}::int[]) AS n (id)` }];
    },
  };
}

/** Additions to group_totals rows, summed when merged (as a system account shard's are). */
const totals: RowsKind<{ id: number; amount: number }> = {
  name: 'totals',
  parts: (rows) => [
    {
      name: 'totals',
      statement: sql`INSERT INTO group_totals (id, total) SELECT * FROM unnest(${rows.map((row) => row.id)}::int[], ${rows.map((row) => row.amount)}::int[])
        ON CONFLICT (id) DO UPDATE SET total = group_totals.total + EXCLUDED.total`,
    },
  ],
  merge: (rows) => {
    const byId = new Map<number, number>();
    for (const row of rows) byId.set(row.id, (byId.get(row.id) ?? 0) + row.amount);
    return [...byId].map(([id, amount]) => ({ id, amount }));
  },
};

describe('writes left to the group', () => {
  it('are written by one statement with one part per kind for all members, in the group’s transaction', async () => {
    const built: number[][] = [];
    const kind = probeRows(built);
    const groups = groupsOf();
    const deferred = await Promise.all(
      [1, 2, 3, 4].map((id) =>
        groups.run([], async (tx) => {
          const write = new WriteStatement();
          write.addRows(kind, [id]);
          write.addRows(totals, [{ id: 1, amount: id }]);
          return deferToGroup(tx, write);
        }),
      ),
    );
    expect(deferred).toEqual([true, true, true, true]);
    expect(built).toEqual([[1, 2, 3, 4]]);
    const rows = await stored();
    expect(rows.map((row) => row.id)).toEqual([1, 2, 3, 4]);
    expect(new Set(rows.map((row) => row.xid)).size).toBe(1);
    // The four additions to one row were summed into one (an upsert cannot change a row twice).
    expect((await sql<{ total: number }>`SELECT total FROM group_totals WHERE id = 1`.execute(t.deps.db)).rows).toEqual([{ total: 10 }]);
  });

  it('refused by PostgreSQL commit nothing: the group runs again in halves until the refused row’s member is alone, and each member gets its own answer', async () => {
    await sql`INSERT INTO group_probe (id, xid) VALUES (99, 'before')`.execute(t.deps.db);
    const kind = probeRows();
    const observed: Observed[] = [];
    const groups = groupsOf(observed);
    const results = await Promise.allSettled(
      [1, 99, 2].map((id) =>
        groups.run([], async (tx) => {
          const write = new WriteStatement();
          write.addRows(kind, [id]);
          if (!deferToGroup(tx, write)) throw new Error('not in a group');
          return id;
        }),
      ),
    );
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as { code?: string }).code).toBe('23505');
    // 1, 99, 2 fails; 1, 99 fails; 1 commits; 99 fails alone; 2 commits.
    expect(observed).toEqual([
      { members: 3, committed: false, deferred: 0 },
      { members: 2, committed: false, deferred: 0 },
      { members: 1, committed: true, deferred: 0 },
      { members: 1, committed: false, deferred: 0 },
      { members: 1, committed: true, deferred: 0 },
    ]);
    const rows = await stored();
    expect(rows.map((row) => row.id)).toEqual([1, 2, 99]);
    expect(rows[0]?.xid).not.toBe(rows[1]?.xid);
  });

  it('are sent by the caller outside a group, or when the statement has a part that is not rows of a kind', async () => {
    const kind = probeRows();
    await withTransaction(t.deps.db, async (tx) => {
      const write = new WriteStatement();
      write.addRows(kind, [7]);
      expect(deferToGroup(tx, write)).toBe(false);
    });
    const groups = groupsOf();
    const mixed = await groups.run([], async (tx) => {
      const write = new WriteStatement();
      write.addRows(kind, [8]);
      write.add('other', sql`INSERT INTO group_probe (id, xid) VALUES (9, 'other')`);
      return deferToGroup(tx, write);
    });
    expect(mixed).toBe(false);
  });
});

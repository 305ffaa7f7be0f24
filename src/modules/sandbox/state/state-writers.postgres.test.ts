import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, subscribeNowhere, type TestClient, type TestContext } from '../../../../test/harness.js';
import { balanceOf, expectLedgerClean } from '../../../../test/bank/fixtures.js';
import { fundWallet, newWallet } from '../../../../test/ledger/fixtures.js';
import { fundedCard } from '../../../../test/cards/card-network.js';
import { withTransaction, type Tx } from '../../../platform/db/transaction.js';
import { findAsset } from '../../../platform/money/assets.js';
import * as ledger from '../../ledger/index.js';
import { runDueTimers, scheduleTimer, type TimerKind } from '../../timers/index.js';

/**
 * A reset or a restore while the client's writers run (PostgreSQL only: on the embedded database
 * one connection runs one transaction at a time). Until 2026-12-07 a reset or a restore locked
 * only the client's row, which an internal transfer never touches, and deleted the client's
 * tables one statement after the other: a transfer that committed in between kept its ledger
 * entries while its transfer and wallet records were deleted (`ledger verify` failed); and card
 * messages deadlocked with it (found by an audit with two servers under load).
 */
let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const usd = findAsset('USD', 'sandbox');

/**
 * Holds a transfer between two of the client's funded wallets uncommitted (as an internal
 * transfer: their ledger accounts locked, the entries written, nothing inserted that references
 * the client's row) while `request` is sent and waits for it, then commits it; answers the
 * request's response.
 */
async function whileATransferIsInFlight(client: TestClient, from: string, to: string, request: () => ReturnType<TestContext['request']>) {
  if (!usd) throw new Error('no USD');
  let sent: ReturnType<TestContext['request']> | undefined;
  await withTransaction(t.deps.db, async (tx) => {
    const backend = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(tx);
    await ledger.postTransfer(tx, {
      clientId: client.id,
      now: t.clock.now(),
      asset: usd,
      legs: [{ from: { walletId: from }, to: { walletId: to }, amount: 2_500n }],
      history: { parentTransactionId: crypto.randomUUID(), type: 'INTERNAL_TRANSFER', traceId: 'in-flight' },
    });
    sent = request();
    await untilWaiting(backend.rows[0]?.pid ?? 0);
  });
  if (!sent) throw new Error('the request was not sent');
  return sent;
}

/** Two wallets of a new client, each funded with 100.00 USD. */
async function fundedPair(name: string): Promise<{ client: TestClient; from: string; to: string }> {
  const client = await t.newClient(name);
  const [from, to] = await Promise.all([newWallet(t, client), newWallet(t, client)]);
  await fundWallet(t, client.id, from, 10_000n);
  await fundWallet(t, client.id, to, 10_000n);
  return { client, from, to };
}

describe('a reset or a restore while a transfer of the client is in flight: the transfer commits first, and the ledger verifies clean', () => {
  it('restore: the transfer is gone with the rest of what came after the snapshot', async () => {
    const { client, from, to } = await fundedPair('restore while a transfer runs');
    const snapshot = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'funded' } });
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(201);
    const restored = await whileATransferIsInFlight(client, from, to, () =>
      t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${snapshot.body.data.id}/restore`, key: client.key, body: {} }),
    );
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(await balanceOf(t, from, 'USD', client)).toMatchObject({ AVAILABLE: '100.00' });
    expect(await balanceOf(t, to, 'USD', client)).toMatchObject({ AVAILABLE: '100.00' });
    await expectLedgerClean(t);
  });

  it('reset: the transfer is deleted with everything else', async () => {
    const { client, from, to } = await fundedPair('reset while a transfer runs');
    const reset = await whileATransferIsInFlight(client, from, to, () =>
      t.request({ method: 'POST', url: '/v1/sandbox/reset', key: client.key, body: { confirm: 'RESET' } }),
    );
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    // The two fundings and the transfer: one entry per leg, one record per wallet the transfer touches.
    expect(reset.body.data.deleted, JSON.stringify(reset.body.data.deleted)).toMatchObject({ ledger_transfers: 3, ledger_entries: 3 });
    await expectLedgerClean(t);
  });
});

describe('a restore while the client\'s card messages run', () => {
  it('answers 200 (not 500 after a deadlock), and the ledger verifies clean', async () => {
    const client = await t.newClient('restore while cards swipe');
    const cards = await Promise.all([0, 1, 2, 3].map(() => fundedCard(t, '500.00', client)));
    const snapshot = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'cards funded' } });
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(201);
    let swiping = true;
    const swipes = Array.from({ length: 12 }, async (_, loop) => {
      const statuses: number[] = [];
      while (swiping) {
        const card = cards[loop % cards.length];
        if (!card) break;
        const response = await t.request({ method: 'POST', url: `/v1/sandbox/cards/${card.cardId}/financial`, key: client.key, body: { amount: 1 } });
        statuses.push(response.status);
      }
      return statuses;
    });
    const restores: number[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const restored = await t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${snapshot.body.data.id}/restore`, key: client.key, body: {} });
        restores.push(restored.status);
      }
    } finally {
      swiping = false;
    }
    const statuses = (await Promise.all(swipes)).flat();
    expect(restores).toEqual([200, 200, 200]);
    // A message may be refused while its card is being replaced (docs/sandbox.md), never answered 500.
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThan(0);
    await expectLedgerClean(t);
  });
});

describe('a restore while the webhook worker records an attempt of one of the client\'s deliveries', () => {
  it('answers 200: the attempt is recorded before the restore deletes the deliveries, or not at all (until 2026-12-07 a 500, the deliveries\' delete refused by the attempt\'s foreign key)', async () => {
    const client = await t.newClient('restore while a delivery is attempted');
    await subscribeNowhere(t, client, 'owed', ['CUSTOMER_CREATED']);
    const created = await t.request({ method: 'POST', url: '/v1/sandbox/customers', key: client.key, body: { count: 1 } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const snapshot = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'a delivery owed' } });
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(201);
    const delivery = await t.deps.db.selectFrom('webhook_deliveries').select(['id', 'attempt_count']).where('client_id', '=', client.id).executeTakeFirstOrThrow();

    // As the worker records an outcome: the delivery's row held (its foreign key check, here by
    // hand) while the restore comes, then the attempt inserted and committed.
    const connection = await t.deps.database.pool.connect();
    let restored: ReturnType<TestContext['request']> | undefined;
    try {
      await connection.query('BEGIN');
      await connection.query('SELECT 1 FROM webhook_deliveries WHERE client_id = $1 AND id = $2 FOR KEY SHARE', [client.id, delivery.id]);
      const pid = (await connection.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
      restored = t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${snapshot.body.data.id as string}/restore`, key: client.key, body: {} });
      await untilWaiting(pid);
      await connection.query(
        `INSERT INTO webhook_delivery_attempts (client_id, delivery_id, attempt_number, attempted_at, succeeded, error, worker)
         VALUES ($1, $2, $3, now(), false, 'connection refused', 'test')`,
        [client.id, delivery.id, delivery.attempt_count + 1],
      );
      await connection.query('COMMIT');
    } finally {
      connection.release();
    }
    const answer = await restored;
    expect(answer?.status, JSON.stringify(answer?.body)).toBe(200);
    await expectLedgerClean(t);
  });
});

/** The sessions that wait for a lock the session `pid` holds, with the kind of lock each waits for (advisory: the client fence). */
async function waitingFor(pid: number): Promise<{ pid: number; locktype: string }[]> {
  const result = await sql<{ pid: number; locktype: string }>`
    SELECT l.pid, l.locktype FROM pg_locks l WHERE NOT l.granted AND ${pid}::int = ANY (pg_blocking_pids(l.pid)) ORDER BY l.pid`.execute(t.deps.db);
  return result.rows;
}

/** Waits until a reset or a restore of the client holds its fence (client-fence.ts: an exclusive advisory lock). */
async function untilFenced(clientId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const result = await sql<{ held: number }>`
      SELECT count(*)::int AS held FROM pg_locks
      WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' AND granted AND objsubid = 2 AND objid = (hashtext(${clientId}::text)::bigint & 4294967295)::oid`.execute(t.deps.db);
    if ((result.rows[0]?.held ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error(`nothing held the fence of the client ${clientId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until a session waits for the session `pid`; answers the first of them. */
async function untilWaiting(pid: number): Promise<{ pid: number; locktype: string }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [waiting] = await waitingFor(pid);
    if (waiting) return waiting;
    if (Date.now() > deadline) throw new Error(`nothing waited for the session ${pid}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a restore while a timer of the client runs (the client fence)', () => {
  it('waits for the timer\'s transaction before it locks anything, and the client\'s writes sent meanwhile wait for the restore: no deadlock, the timer runs once, the write is kept', async () => {
    const { client, from, to } = await fundedPair('restore while a timer runs');
    const snapshot = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'funded' } });
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(201);

    // A timer that, as a payment's settlement does, holds its timer's row and then moves the
    // client's money; it pauses in between until the restore (and a write) wait.
    let runs = 0;
    let claimedBy: (pid: number) => void = () => {};
    const claimed = new Promise<number>((resolve) => (claimedBy = resolve));
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const settles: TimerKind = {
      kind: 'test.settles-a-transfer',
      async run(tx, context) {
        runs += 1;
        claimedBy((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(tx)).rows[0]?.pid ?? 0);
        await released;
        if (!usd) throw new Error('no USD');
        await ledger.postTransfer(tx, {
          clientId: context.clientId,
          now: context.now,
          asset: usd,
          legs: [{ from: { walletId: from }, to: { walletId: to }, amount: 2_500n }],
          history: { parentTransactionId: crypto.randomUUID(), type: 'INTERNAL_TRANSFER', traceId: context.traceId },
        });
      },
    };
    await withTransaction(t.deps.db, (tx) => scheduleTimer(tx, { clientId: client.id, kind: settles.kind, subjectId: crypto.randomUUID(), dueAt: t.clock.now(), now: t.clock.now() }));
    const worker = runDueTimers(t.deps.db, t.clock, [settles], { newTraceId: () => crypto.randomUUID() });
    const timerPid = await claimed;

    const restored = t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${snapshot.body.data.id as string}/restore`, key: client.key, body: {} });
    let created: ReturnType<TestContext['request']> | undefined;
    try {
      const restoring = await untilWaiting(timerPid);
      // The restore waits on the fence, holding none of the client's rows (until 2026-12-08 it
      // locked the ledger accounts the timer was about to move and waited for the timer's row: a
      // deadlock once the timer went on).
      expect(restoring.locktype).toBe('advisory');
      // A write of the client sent now waits for the restore, and runs on the restored data.
      created = t.request({ method: 'POST', url: '/v1/sandbox/customers', key: client.key, body: { count: 1 } });
      expect((await untilWaiting(restoring.pid)).locktype).toBe('advisory');
    } finally {
      release();
    }

    const [ran, restoredAnswer, createdAnswer] = await Promise.all([worker, restored, created]);
    expect(ran.map((timer) => timer.kind)).toEqual([settles.kind]);
    expect(runs).toBe(1);
    expect(restoredAnswer.status, JSON.stringify(restoredAnswer.body)).toBe(200);
    // The timer's transfer came before the snapshot was put back: gone with it.
    expect(await balanceOf(t, from, 'USD', client)).toMatchObject({ AVAILABLE: '100.00' });
    expect(await balanceOf(t, to, 'USD', client)).toMatchObject({ AVAILABLE: '100.00' });
    // The customer created while the restore waited was created after it: kept.
    expect(createdAnswer.status, JSON.stringify(createdAnswer.body)).toBe(201);
    const customers = await t.request({ url: '/v1/customers', key: client.key });
    expect(customers.body.data).toHaveLength(3);
    await expectLedgerClean(t);
  });
});

describe('the timer worker while a restore of a client waits for that client\'s writers', () => {
  it('leaves that client\'s due timers to a later pass, without waiting, and runs the other clients\' timers', async () => {
    const { client, from, to } = await fundedPair('timers while a restore waits');
    const other = await t.newClient('timers beside a restore');
    const snapshot = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'funded' } });
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(201);
    const ranFor: string[] = [];
    const records: TimerKind = {
      kind: 'test.records-its-client',
      async run(_tx, context) {
        ranFor.push(context.clientId);
      },
    };
    const due = (clientId: string) => (tx: Tx) => scheduleTimer(tx, { clientId, kind: records.kind, subjectId: crypto.randomUUID(), dueAt: t.clock.now(), now: t.clock.now() });
    await withTransaction(t.deps.db, due(client.id));
    await withTransaction(t.deps.db, due(other.id));
    // The restore holds the client's fence and waits for a transfer in flight (a writer that
    // began before it); the worker runs meanwhile.
    const restored = await whileATransferIsInFlight(client, from, to, async () => {
      const answer = t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${snapshot.body.data.id as string}/restore`, key: client.key, body: {} });
      await untilFenced(client.id);
      const ran = await runDueTimers(t.deps.db, t.clock, [records], { newTraceId: () => crypto.randomUUID() });
      expect(ran.map((timer) => timer.clientId)).toEqual([other.id]);
      return answer;
    });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    // Until 2026-12-08 the worker ran the timer of the client being restored.
    expect(ranFor).toEqual([other.id]);
    await expectLedgerClean(t);
  });
});

describe('a reset or a restore that deadlocks on every attempt', () => {
  // Every attempt is made to fail as a deadlock would (a trigger of this test's schema raising
  // 40P01 as the client's customers are deleted): what the client gets once the attempts run out.
  it('answers 503 WRITE_CONFLICT, as every write that conflicts on every attempt does, not 500 (until 2026-12-07 a 500 after 16–21 s under load, then a 409 of these routes\' own); the same key restores once the writers are quiet', async () => {
    const client = await t.newClient('restore that always deadlocks');
    const created = await t.request({ method: 'POST', url: '/v1/sandbox/customers', key: client.key, body: { count: 1, fundAmount: '10.00', asset: 'USD' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const snapshot = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'one customer' } });
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(201);
    await sql`
      CREATE FUNCTION deadlock_always() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'deadlock detected (made by the test)' USING ERRCODE = '40P01'; END $$`.execute(t.deps.db);
    await sql.raw(`CREATE TRIGGER deadlock_always BEFORE DELETE ON customers FOR EACH ROW WHEN (OLD.client_id = '${client.id}') EXECUTE FUNCTION deadlock_always()`).execute(t.deps.db);
    try {
      const restored = await t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${snapshot.body.data.id as string}/restore`, key: client.key, body: {}, idempotencyKey: 'restore-deadlocked' });
      expect(restored.status, JSON.stringify(restored.body)).toBe(503);
      expect(restored.body.code).toBe('WRITE_CONFLICT');
      const reset = await t.request({ method: 'POST', url: '/v1/sandbox/reset', key: client.key, body: { confirm: 'RESET' } });
      expect(reset.status, JSON.stringify(reset.body)).toBe(503);
      expect(reset.body.code).toBe('WRITE_CONFLICT');
    } finally {
      await sql`DROP TRIGGER deadlock_always ON customers`.execute(t.deps.db);
      await sql`DROP FUNCTION deadlock_always()`.execute(t.deps.db);
    }
    // Not kept under the key: the same request runs once the writers are quiet.
    const again = await t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${snapshot.body.data.id as string}/restore`, key: client.key, body: {}, idempotencyKey: 'restore-deadlocked' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const customers = await t.request({ url: '/v1/customers', key: client.key });
    expect(customers.body.data).toHaveLength(1);
  });
});

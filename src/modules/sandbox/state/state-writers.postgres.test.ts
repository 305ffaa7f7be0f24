import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../../test/harness.js';
import { balanceOf, expectLedgerClean } from '../../../../test/bank/fixtures.js';
import { fundWallet, newWallet } from '../../../../test/ledger/fixtures.js';
import { fundedCard } from '../../../../test/cards/card-network.js';
import { withTransaction } from '../../../platform/db/transaction.js';
import { findAsset } from '../../../platform/money/assets.js';
import * as ledger from '../../ledger/index.js';

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

/** Waits until another session's statement waits for a lock the session `pid` holds. */
async function untilSomeoneWaitsFor(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const result = await sql<{ waiting: number }>`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE ${pid}::int = ANY (pg_blocking_pids(pid))`.execute(t.deps.db);
    if ((result.rows[0]?.waiting ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error('nothing waited for the transfer');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

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
    await untilSomeoneWaitsFor(backend.rows[0]?.pid ?? 0);
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

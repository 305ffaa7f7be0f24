import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../../test/harness.js';
import { expectLedgerClean } from '../../../../test/bank/fixtures.js';
import { balances, fundedCard, panOf } from '../../../../test/cards/card-network.js';
import { CoopReceiver } from '../../../../test/cards/coop-receiver.js';
import { TransactionGroups } from '../../../platform/db/transaction-groups.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { buildSandboxMessage, newNetworkDataRef } from '../sandbox/sandbox-messages.js';
import { finishCoopDecision, isCoopDecisionStep, processCardMessage } from './processor.js';
import { lockCardWithProgram } from './processor-reads.js';

/**
 * The second transaction of a cooperative decision in a transaction group (docs/cards.md): a card
 * that another group in flight holds is waited for outside the group, never in PostgreSQL, where
 * the whole group would wait behind one member's lock. Only PostgreSQL runs two groups at once
 * (the embedded database has one connection).
 */

let t: TestContext;
let receiver: CoopReceiver;
beforeAll(async () => {
  t = await createTestApp();
  receiver = await CoopReceiver.start();
  const response = await t.request({ method: 'POST', url: '/v1/webhooks', key: t.clientA.key, body: { name: 'Decisions', url: receiver.url(), subscribedEventTypes: ['COOP_AUTH_0100'] } });
  expect(response.status).toBe(201);
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

/** Backends waiting for a row lock on this test's cards table. */
async function cardLockWaits(): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_locks waiting
    JOIN pg_locks tuple ON tuple.pid = waiting.pid AND tuple.locktype = 'tuple' AND tuple.relation = 'cards'::regclass
    WHERE NOT waiting.granted`.execute(t.deps.db);
  return result.rows[0]?.n ?? 0;
}

it("a decision's second transaction waits outside its group for a card another group in flight holds", async () => {
  const card = await fundedCard(t, '10.00', t.clientA, 'Cooperative Debit');
  const observed: Array<{ members: number; deferred: number }> = [];
  const groups = new TransactionGroups(t.database, { sizeMax: 64, concurrency: 2, observe: (members, _committed, deferred) => observed.push({ members, deferred }) });
  const context: RequestContext = { clientId: t.clientA.id, traceId: 'coop-claims', now: t.clock.now() };
  const message = buildSandboxMessage({ pan: await panOf(t, card.cardId), expiry: await expiryOf(card.cardId), network: 'VISA' }, context.now, {
    mti: '0100',
    processingCode: '000000',
    amountMinor: 100n,
    networkDataRef: newNetworkDataRef(),
  });

  // The first transaction: 1.00 reserved, the decision request recorded.
  const step = await groups.run([], (tx) => processCardMessage(tx, context, t.deps, message));
  if (!isCoopDecisionStep(step)) throw new Error('expected a decision request');
  expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '9.00', RESERVED: '1.00' });

  // Another group holds the card (a new message of the same card, say) until the gate opens.
  let open = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const holder = groups.run([], async (tx) => {
    await lockCardWithProgram(tx, t.clientA.id, { id: card.cardId });
    await gate;
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const finished = groups.run([], (tx) => finishCoopDecision(tx, context, t.deps, step.pendingDecision, null, context.now));

  // For a while, nobody waits in PostgreSQL for the card's row.
  const waits: number[] = [];
  try {
    for (let check = 0; check < 10; check++) {
      waits.push(await cardLockWaits());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    open();
  }
  expect(waits).toEqual(Array(10).fill(0));
  await holder;
  const { outcome, verdict } = await finished;
  expect(verdict).toMatchObject({ kind: 'STAND_IN', reason: 'NO_ENDPOINT' });
  expect(outcome.responseCode).toBe('91');
  // It left its first group for a later one, once the holder had ended.
  expect(observed.some((entry) => entry.deferred === 1)).toBe(true);
  expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '10.00', RESERVED: '0.00' });
  await expectLedgerClean(t);
});

async function expiryOf(cardId: string): Promise<{ expiryMonth: number; expiryYear: number }> {
  const row = await t.deps.db.selectFrom('cards').select(['expiry_month', 'expiry_year']).where('id', '=', cardId).executeTakeFirstOrThrow();
  return { expiryMonth: row.expiry_month, expiryYear: row.expiry_year };
}

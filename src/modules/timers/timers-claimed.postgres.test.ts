import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { expectLedgerClean } from '../../../test/bank/fixtures.js';
import { authorize, balances, fundedCard, lifecycle, onParent } from '../../../test/cards/card-network.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/**
 * Sends `message` while a side connection holds the lifecycle's hold-expiry timer, as a runner (the
 * timer worker or a clock advance) does between its claim and its lock of the card. Answers
 * whether the message was answered within 3 s of the claim (until 2026-12-06 a cancel, and until
 * the same day a move, waited for the claim; a real runner, waiting for the card, deadlocked with
 * it), and its answer once the claim is given up.
 */
async function whileClaimed<T>(parentId: string, message: () => Promise<T>): Promise<{ outcome: string; answer: T }> {
  const runner = await t.deps.database.pool.connect();
  try {
    await runner.query('BEGIN');
    const claimed = await runner.query(`SELECT subject_id FROM timers WHERE kind = 'card.hold-expiry' AND subject_id = $1 FOR UPDATE`, [parentId]);
    expect(claimed.rowCount).toBe(1);
    const pending = message();
    const outcome = await Promise.race([pending.then(() => 'answered'), new Promise<string>((resolve) => setTimeout(() => resolve('waiting'), 3000))]);
    await runner.query('ROLLBACK');
    return { outcome, answer: await pending };
  } finally {
    await runner.query('ROLLBACK').catch(() => undefined);
    runner.release();
  }
}

describe('cancelling a timer a runner has claimed', () => {
  it('does not wait for the runner: a completion finishes while the hold expiry is claimed, and the expiry then finds the lifecycle closed', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 25 });
    const { outcome } = await whileClaimed(auth.parentCardTransactionId, () => onParent(t, auth.parentCardTransactionId, 'completions', {}));
    expect(outcome).toBe('answered');
    // The timer the completion left runs (a clock advance past it) and finds the lifecycle closed.
    const advance = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 8 * 24 * 3600 } });
    expect(advance.status).toBe(200);
    expect((advance.body.data.ran as { kind: string }[]).filter((timer) => timer.kind === 'card.hold-expiry')).toHaveLength(1);
    const group = await lifecycle(t, auth.parentCardTransactionId);
    expect(group).toMatchObject({ status: 'COMPLETED', heldAmount: 0, postedAmount: 25 });
    expect(group.children.map((child: { type: string }) => child.type)).toEqual(['PRE_AUTHORIZATION', 'PRE_AUTH_COMPLETION']);
    expect(await balances(t, card.walletId)).toEqual({ AVAILABLE: '75.00', RESERVED: '0.00', PENDING: '0.00' });
    await expectLedgerClean(t);
  });
});

describe('moving a timer a runner has claimed', () => {
  it('does not wait for the runner: an increment finishes while the hold expiry is claimed, and the expiry, run at its old time, follows the lifecycle to its new one', async () => {
    const dayS = 24 * 3600;
    const client = await t.newClient();
    const card = await fundedCard(t, '100.00', client);
    const auth = await authorize(t, card.cardId, { amount: 25 }, client);
    const timerDue = async (): Promise<string[]> =>
      (await t.deps.database.pool.query(`SELECT due_at FROM timers WHERE kind = 'card.hold-expiry' AND subject_id = $1`, [auth.parentCardTransactionId])).rows.map((row: { due_at: Date }) => row.due_at.toISOString());
    const [firstDue] = await timerDue();
    expect(firstDue).toBe(auth.record.expiresAt);
    // Two days on, an increment moves the expiry to seven days from then.
    expect((await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 2 * dayS }, key: client.key })).status).toBe(200);
    const { outcome, answer: increment } = await whileClaimed(auth.parentCardTransactionId, () => onParent(t, auth.parentCardTransactionId, 'increments', { amount: 15 }, client));
    expect(outcome).toBe('answered');
    expect(increment.record).toMatchObject({ status: 'PENDING', responseCode: '00' });
    const movedTo = increment.record.expiresAt as string;
    expect(Date.parse(movedTo) - Date.parse(firstDue as string)).toBe(2 * dayS * 1000);
    // The move was left undone (the timer was held), so the timer is still due at the first expiry.
    expect(await timerDue()).toEqual([firstDue]);
    // Past the first expiry: the timer runs, finds the lifecycle due later and moves itself there.
    const first = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 6 * dayS }, key: client.key });
    expect((first.body.data.ran as { kind: string }[]).filter((timer) => timer.kind === 'card.hold-expiry')).toHaveLength(1);
    expect(await lifecycle(t, auth.parentCardTransactionId, client)).toMatchObject({ status: 'PENDING', heldAmount: 40 });
    expect(await balances(t, card.walletId, client)).toEqual({ AVAILABLE: '60.00', RESERVED: '40.00', PENDING: '0.00' });
    expect(await timerDue()).toEqual([movedTo]);
    // Past the moved expiry: the hold is released.
    const second = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 2 * dayS }, key: client.key });
    expect((second.body.data.ran as { kind: string }[]).filter((timer) => timer.kind === 'card.hold-expiry')).toHaveLength(1);
    expect(await lifecycle(t, auth.parentCardTransactionId, client)).toMatchObject({ status: 'CANCELLED', heldAmount: 0 });
    expect(await balances(t, card.walletId, client)).toEqual({ AVAILABLE: '100.00', RESERVED: '0.00', PENDING: '0.00' });
    expect(await timerDue()).toEqual([]);
    await expectLedgerClean(t);
  });
});

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

describe('cancelling a timer a runner has claimed', () => {
  it('does not wait for the runner: a completion finishes while the hold expiry is claimed, and the expiry then finds the lifecycle closed', async () => {
    const card = await fundedCard(t, '100.00');
    const auth = await authorize(t, card.cardId, { amount: 25 });
    // A runner's claim of the hold's expiry (as the timer worker or a clock advance takes it, before it locks the card).
    const runner = await t.deps.database.pool.connect();
    try {
      await runner.query('BEGIN');
      const claimed = await runner.query(`SELECT subject_id FROM timers WHERE kind = 'card.hold-expiry' AND subject_id = $1 FOR UPDATE`, [auth.parentCardTransactionId]);
      expect(claimed.rowCount).toBe(1);
      // Until 2026-12-06 the completion waited here for the timer's row (and a real runner, waiting for the card, deadlocked with it).
      const completion = onParent(t, auth.parentCardTransactionId, 'completions', {});
      const outcome = await Promise.race([completion.then(() => 'completed'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 3000))]);
      await runner.query('ROLLBACK');
      expect(outcome).toBe('completed');
      await completion;
    } finally {
      await runner.query('ROLLBACK').catch(() => undefined);
      runner.release();
    }
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

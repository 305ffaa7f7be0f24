import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { authorize, balances, fundedCard } from './card-network.js';
import { withOtherTransaction } from '../support/row-locks.js';

// A card message in a transaction group takes its card with SKIP LOCKED: when a transaction
// outside the process's groups holds the card (another server process on the same database, a
// worker), the message leaves the group and runs alone, waiting for the card there. Until the
// thirty-fourth session it waited inside the group, holding its neighbours' card locks in an order
// no other process knew, so two servers' groups on the same cards deadlocked (found by a re-audit
// with two servers: 45–50 deadlocks, most cooperative requests then declined by the stand-in).

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('a card locked outside the groups', () => {
  it('does not hold up the other messages of its group; its own message is answered once the lock is released', async () => {
    const [held, free] = [await fundedCard(t, '100.00'), await fundedCard(t, '100.00')];
    await withOtherTransaction(t.deps.database.pool, async (other) => {
      await other.lock('cards', t.clientA.id, held.cardId, 'FOR UPDATE');
      let heldAnswered = false;
      const heldMessage = authorize(t, held.cardId, { amount: 5 }).then((result) => {
        heldAnswered = true;
        return result;
      });
      const freeMessage = authorize(t, free.cardId, { amount: 7 });
      // The free card's message is answered while the other card is still locked (before the fix,
      // its group waited for that lock with it).
      const first = await Promise.race([freeMessage.then(() => 'free'), new Promise((resolve) => setTimeout(() => resolve('timeout'), 5_000))]);
      expect(first).toBe('free');
      expect(heldAnswered).toBe(false);
      await other.commit();
      const [heldResult, freeResult] = await Promise.all([heldMessage, freeMessage]);
      expect([heldResult.responseCode, freeResult.responseCode]).toEqual(['00', '00']);
      expect(await balances(t, held.walletId)).toMatchObject({ AVAILABLE: '95.00', RESERVED: '5.00' });
      expect(await balances(t, free.walletId)).toMatchObject({ AVAILABLE: '93.00', RESERVED: '7.00' });
    });
  }, 30_000);
});

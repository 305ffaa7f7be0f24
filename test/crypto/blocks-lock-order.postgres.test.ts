import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { withOtherTransaction } from '../support/row-locks.js';
import { walletAccountId } from '../../src/modules/ledger/ledger.js';
import { destinations, fundCrypto, newWallet } from './fixtures.js';

// Mining blocks completes the client's pending withdrawals in one transaction. Until 2026-12-07 it
// locked their wallet accounts one by one in the order of the withdrawals, while a ledger batch
// (internal transfers between the same wallets) locks them by account id: each could hold what the
// other waited for, PostgreSQL broke the deadlock after deadlock_timeout (1 s by default) and, under
// load, the blocks call answered 500 after eight tries (found by a money audit). It now locks them
// first, in the ledger's order.

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('mining locks the wallet accounts it moves money on in the ledger lock order', () => {
  it('a transaction holding the first account in that order makes mining wait, not deadlock with it', async () => {
    const wallets = [await newWallet(t), await newWallet(t)];
    for (const wallet of wallets) await fundCrypto(t, wallet, 'BTC', '0.10000000');
    const accountOf = (wallet: string) => walletAccountId(t.clientA.id, wallet, 'BTC');
    // The withdrawal of the wallet whose account comes last in lock order is made first.
    const [low, high] = [...wallets].sort((a, b) => (accountOf(a) < accountOf(b) ? -1 : 1)) as [string, string];
    for (const wallet of [high, low]) {
      const response = await t.request({ method: 'POST', url: '/v1/digital/withdrawal', body: { walletId: wallet, asset: 'BTC', amount: '0.01000000', address: destinations.BITCOIN } });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
    }
    // Another transaction takes the accounts in lock order, as a ledger batch does: the first one now.
    await withOtherTransaction(t.deps.database.pool, async (other) => {
      await other.lock('ledger_accounts', t.clientA.id, accountOf(low));
      const mining = t.request({ method: 'POST', url: '/v1/sandbox/chains/BITCOIN/blocks', body: { count: 10 } });
      // Mining has reached the accounts and waits for the first one meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The second is free: mining holds nothing the other transaction needs, so there is no lock
      // cycle (before the fix mining held it, and NOWAIT failed with 55P03).
      await expect(other.tryLock('ledger_accounts', t.clientA.id, accountOf(high))).resolves.toBeUndefined();
      await other.commit();
      const mined = await mining;
      expect(mined.status, JSON.stringify(mined.body)).toBe(200);
      expect(mined.body.data.completed).toBe(2);
    });
  }, 30_000);
});

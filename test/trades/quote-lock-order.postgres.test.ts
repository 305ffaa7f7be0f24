import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { createIndividual } from '../customers/fixtures.js';
import { fundWallet } from '../ledger/fixtures.js';
import { walletAccountId } from '../../src/modules/ledger/ledger.js';
import { withOtherTransaction } from '../support/row-locks.js';

// An execution the process cannot assume (a quote it did not give, or one whose write must read the
// balance, as the sandbox's liquidity failure does) ran the checked way: it locked the quote, then
// the wallet's accounts. An assumed batch executing the same quote in another process (or after its
// own fallback) takes the accounts first and the quote last, in one statement: each waited for the
// other until PostgreSQL broke the deadlock after deadlock_timeout (found by an audit of two server
// processes, 4 to 5 deadlocks in ten rounds of six executions of one quote). The checked way now
// locks the accounts first too.

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('a trade execution run the checked way locks the ledger accounts before the quote', () => {
  it('waiting for the wallet\'s account, it holds no lock on the quote', async () => {
    const customer = await createIndividual(t, t.clientA);
    const wallets = await t.request({ url: `/v1/wallets?customerId=${customer.id}`, key: t.clientA.key });
    const walletId = wallets.body.data[0].id as string;
    await fundWallet(t, t.clientA.id, walletId, 1_000n, 'BTC');
    // The sandbox's liquidity-failure amount: its execution reads the balance, so it is never assumed.
    const quote = await t.request({
      method: 'POST',
      url: '/v1/trades/quotes',
      key: t.clientA.key,
      body: { customerId: customer.id, fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.00000999', feeAssetId: 'USD', side: 'sell', direction: 'direct' },
    });
    expect(quote.status, JSON.stringify(quote.body)).toBe(201);
    const quoteId = quote.body.data.quoteId as string;

    await withOtherTransaction(t.deps.database.pool, async (other) => {
      await other.lock('ledger_accounts', t.clientA.id, walletAccountId(t.clientA.id, walletId, 'BTC'));
      let answered = false;
      const execution = t.request({ method: 'POST', url: `/v1/trades/quotes/${quoteId}/execute`, key: t.clientA.key, body: { walletId } }).finally(() => {
        answered = true;
      });
      // The execution has started and waits for the account meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(answered).toBe(false);
      // The quote is free (before the fix the execution held it, and NOWAIT failed with 55P03).
      await expect(other.tryLock('trade_quotes', t.clientA.id, quoteId, 'FOR UPDATE')).resolves.toBeUndefined();
      await other.commit();
      const response = await execution;
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body.data).toMatchObject({ success: false, status: 'FAILED', error: { code: 'LIQUIDITY_UNAVAILABLE' } });
    });
  });
});

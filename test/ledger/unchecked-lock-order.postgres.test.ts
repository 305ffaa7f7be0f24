import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import * as ledger from '../../src/modules/ledger/index.js';
import { walletAccountId } from '../../src/modules/ledger/ledger.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { requireAsset } from '../../src/platform/money/assets.js';
import { fundWallet, newWallet } from './fixtures.js';
import { withOtherTransaction } from '../support/row-locks.js';

// A batch that reads nothing and opens the accounts it only credits (trades) wrote the accounts it
// debits in one part of its statement and those it credits in a later one, each part in id order:
// it could hold an account it debits while waiting for one it credits with a lower id, as a
// transfer batch holding the lower one waited for the higher one. PostgreSQL broke the deadlock
// after deadlock_timeout (found by a load run of trades beside internal transfers, about 80 in two
// minutes). Every account it changes is now taken in one id-ordered pass.

let t: TestContext;
const usd = requireAsset('USD', 'sandbox');
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('a batch that opens the accounts it credits takes every account in id order', () => {
  it('a transaction holding the account it credits (the lower id) makes it wait before it takes the one it debits', async () => {
    const wallets = [await newWallet(t), await newWallet(t)];
    for (const wallet of wallets) await fundWallet(t, t.clientA.id, wallet, 1_000n);
    const accountOf = (wallet: string) => walletAccountId(t.clientA.id, wallet, 'USD');
    const [low, high] = [...wallets].sort((a, b) => (accountOf(a) < accountOf(b) ? -1 : 1)) as [string, string];
    await withOtherTransaction(t.deps.database.pool, async (other) => {
      await other.lock('ledger_accounts', t.clientA.id, accountOf(low));
      const operation: ledger.TransferOperation = {
        operation: 'transfer',
        clientId: t.clientA.id,
        now: t.clock.now(),
        asset: usd,
        legs: [{ from: { walletId: high }, to: { walletId: low }, amount: 100n }],
        history: { parentTransactionId: crypto.randomUUID(), type: 'INTERNAL_TRANSFER', traceId: 'test-trace' },
      };
      const batch = withTransaction(t.deps.db, async (tx) => {
        const write = new ledger.LedgerBatch(tx, t.clock.now());
        write.declare(operation);
        write.assumeLoaded({ openCredited: true });
        write.apply(operation);
        await write.flush();
      });
      // The batch has sent its statement and waits for the lower account meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The higher one is free: the batch holds nothing the other transaction could need next (before
      // the fix it held it, and NOWAIT failed with 55P03).
      await expect(other.tryLock('ledger_accounts', t.clientA.id, accountOf(high))).resolves.toBeUndefined();
      await other.commit();
      await batch;
      const balances = await Promise.all([low, high].map(async (wallet) => (await ledger.walletBalances(t.deps.db, t.clientA.id, wallet)).find((row) => row.asset === 'USD')?.available));
      expect(balances).toEqual([1_100n, 900n]);
    });
  }, 30_000);
});

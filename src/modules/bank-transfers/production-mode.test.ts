import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { createIndividual } from '../../../test/customers/fixtures.js';
import { balanceOf, expectLedgerClean, withdrawalBody } from '../../../test/bank/fixtures.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { findWallet } from '../customers/index.js';
import { bankTransferRuntime, virtualAccountSerialKey } from '../routes.js';
import { assignVirtualAccount } from '../virtual-accounts/index.js';
import { receiveDeposit, runDueSettlements } from './index.js';

/**
 * Production mode: no sandbox controls, no USD_TEST, and no rail connected yet, so a payment waits
 * PENDING for an outcome instead of settling by itself.
 */
let t: TestContext;
let walletId: string;
let virtualAccountNumber: string;

beforeAll(async () => {
  t = await createTestApp({ env: { OPENBAAS_MODE: 'production' } });
  const customer = await createIndividual(t);
  walletId = customer.portfolios[0].wallets[0];
  // Production has no sandbox KYC; the virtual-accounts module gives the wallet its number directly.
  virtualAccountNumber = await withTransaction(t.deps.db, async (tx) => {
    const row = await findWallet(tx, t.clientA.id, walletId);
    if (!row) throw new Error('wallet missing');
    const created = await assignVirtualAccount(tx, { clientId: t.clientA.id, traceId: 'test', now: t.clock.now() }, row, virtualAccountSerialKey(t.deps));
    if (!created) throw new Error('no virtual account');
    return created.virtualAccountNumber;
  });
});
afterAll(async () => {
  await t.close();
});

describe('production mode', () => {
  it('has no sandbox bank controls (404)', async () => {
    expect((await t.request({ method: 'POST', url: '/v1/sandbox/bank-deposits', body: {} })).status).toBe(404);
    expect((await t.request({ method: 'POST', url: '/v1/sandbox/bank-transactions/019ca945-0a00-74c1-8797-3bfde107f365/settle' })).status).toBe(404);
    expect((await t.request({ method: 'POST', url: '/v1/sandbox/bank-transactions/019ca945-0a00-74c1-8797-3bfde107f365/fail', body: {} })).status).toBe(404);
  });

  it('refuses USD_TEST', async () => {
    const response = await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(walletId, { asset: 'USD_TEST' }) });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('UNKNOWN_ASSET');
  });

  it('leaves payments PENDING until the rail reports an outcome (no rail is connected)', async () => {
    const runtime = bankTransferRuntime(t.deps);
    expect(runtime.rail.name).toBe('unconnected');
    const outcome = await withTransaction(t.deps.db, (tx) =>
      receiveDeposit(
        tx,
        { clientId: t.clientA.id, traceId: 'test', now: t.clock.now() },
        { accountNumber: virtualAccountNumber, amount: '80.00', asset: 'USD', network: 'FEDWIRE', counterparty: { name: 'Sender', accountNumber: '1234' } },
        runtime,
      ),
    );
    expect(outcome.transaction.status).toBe('PENDING');
    t.clock.advance(30 * 24 * 3600_000);
    expect(await runDueSettlements(t.deps)).toBe(0);
    expect(await balanceOf(t, walletId)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '80.00' });
    await expectLedgerClean(t);
  });
});

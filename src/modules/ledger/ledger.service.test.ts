import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { preparedTextStatement } from '../../platform/db/text-statements.js';
import { AppError } from '../../platform/http/errors.js';
import { requireAsset } from '../../platform/money/assets.js';
import * as ledger from './index.js';
import { newWallet } from '../../../test/ledger/fixtures.js';

let t: TestContext;
const usd = requireAsset('USD', 'sandbox');

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const history = (type = 'TEST') => ({ parentTransactionId: crypto.randomUUID(), type, traceId: 'test-trace' });

async function fund(clientId: string, walletId: string, amount: bigint) {
  return withTransaction(t.deps.db, (tx) =>
    ledger.postTransfer(tx, { clientId, now: t.clock.now(), asset: usd, legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { walletId }, amount }], history: history('DEPOSIT') }),
  );
}

async function balance(clientId: string, walletId: string) {
  const [row] = await ledger.walletBalances(t.deps.db, clientId, walletId);
  return row;
}

async function refusal(work: () => Promise<unknown>): Promise<AppError> {
  try {
    await work();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('transfers', () => {
  it('moves money between wallets and keeps the bank settlement account in step', async () => {
    const a = await newWallet(t);
    const b = await newWallet(t);
    await fund(t.clientA.id, a, 10_000n);
    const result = await withTransaction(t.deps.db, (tx) =>
      ledger.postTransfer(tx, { clientId: t.clientA.id, now: t.clock.now(), asset: usd, legs: [{ from: { walletId: a }, to: { walletId: b }, amount: 2_500n }], history: history() }),
    );
    expect(result.legs[0]?.debitTransactionId).toBeTruthy();
    expect((await balance(t.clientA.id, a))?.available).toBe(7_500n);
    expect((await balance(t.clientA.id, b))?.available).toBe(2_500n);
    expect(await ledger.systemAccountBalance(t.deps.db, t.clientA.id, 'BANK_SETTLEMENT', 'USD')).toBeLessThanOrEqual(-10_000n);
    expect((await ledger.verifyLedger(t.deps.db)).ok).toBe(true);
  });

  it('refuses to take AVAILABLE below zero and moves nothing', async () => {
    const a = await newWallet(t);
    const b = await newWallet(t);
    await fund(t.clientA.id, a, 1_000n);
    const error = await refusal(() =>
      withTransaction(t.deps.db, (tx) =>
        ledger.postTransfer(tx, { clientId: t.clientA.id, now: t.clock.now(), asset: usd, legs: [{ from: { walletId: a, field: 'sourceWalletId' }, to: { walletId: b }, amount: 1_001n }], history: history() }),
      ),
    );
    expect(error.code).toBe('INSUFFICIENT_FUNDS');
    expect(error.details).toEqual([{ field: 'amount', message: 'exceeds the AVAILABLE balance of sourceWalletId' }]);
    expect((await balance(t.clientA.id, a))?.available).toBe(1_000n);
    // The destination's account was never opened: a refusal leaves nothing behind.
    expect(await ledger.walletBalances(t.deps.db, t.clientA.id, b)).toEqual([]);
  });
});

describe('accounts the caller locked already (LoadOptions.locked)', () => {
  it('are taken as given instead of read again: the batch decides on the row the caller passed', async () => {
    const a = await newWallet(t);
    await fund(t.clientA.id, a, 1_000n);
    const hold = (locked?: ledger.AccountRow) =>
      withTransaction(t.deps.db, async (tx) => {
        // Locked as the card processor's lookup locks it.
        const lock = preparedTextStatement<ledger.AccountRow>((parameters) => ledger.lockWalletAccountText(parameters, t.clientA.id, a, 'USD'));
        const [row] = (await lock.execute(tx)).rows;
        if (!row) throw new Error('no account');
        return ledger.placeHold(
          tx,
          { clientId: t.clientA.id, now: t.clock.now(), wallet: { walletId: a }, asset: usd, amount: 600n, expiresAt: null, history: history('HOLD') },
          { locked: { accounts: [locked ? { ...row, ...locked, ctid: row.ctid } : row] } },
        );
      });
    // A row given with less than the table holds (1,000): the batch believes it and refuses.
    const given = { available: '100' } as ledger.AccountRow;
    expect((await refusal(() => hold(given))).code).toBe('INSUFFICIENT_FUNDS');
    expect(await balance(t.clientA.id, a)).toMatchObject({ available: 1_000n, reserved: 0n });
    // The row as it is: the hold is placed, and written through the row's location.
    await hold();
    expect(await balance(t.clientA.id, a)).toMatchObject({ available: 400n, reserved: 600n });
  });
});

import crypto from 'node:crypto';
import { sql } from 'kysely';
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

// A transaction of many ledger operations (a sandbox request seeding 40 funded customers: a deposit
// and its clearing each) drew a shard of the bank settlement account for each operation, so it
// locked several shards in a random order; two such transactions at once on PostgreSQL deadlocked,
// were retried, and one answered 500 after its attempts (found by an audit). Every operation of a
// transaction now takes the shard its first one drew.
describe('the system account shard of a transaction', () => {
  /** The settlement accounts (shards) the records under these parents were debited from. */
  async function debitedShards(parents: string[]): Promise<string[]> {
    const result = await sql<{ account: string }>`
      SELECT DISTINCT e.debit_account_id AS account FROM ledger_entries e
      JOIN wallet_transactions w ON w.client_id = e.client_id AND w.ledger_transfer_id = e.transfer_id
      WHERE e.client_id = ${t.clientA.id} AND w.parent_transaction_id = ANY(${parents}::uuid[])`.execute(t.deps.db);
    return result.rows.map((row) => row.account);
  }

  const deposit = (tx: Parameters<typeof ledger.postTransfer>[0], walletId: string, parentTransactionId: string) =>
    ledger.postTransfer(tx, {
      clientId: t.clientA.id,
      now: t.clock.now(),
      asset: usd,
      legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { walletId }, amount: 100n }],
      history: { ...history('DEPOSIT'), parentTransactionId },
    });

  it('is one for all its operations: twenty deposits in one transaction touch one shard of BANK_SETTLEMENT; another transaction draws again', async () => {
    const wallets = await Promise.all(Array.from({ length: 4 }, () => newWallet(t)));
    const parents = Array.from({ length: 20 }, () => crypto.randomUUID());
    await withTransaction(t.deps.db, async (tx) => {
      for (const [index, parent] of parents.entries()) await deposit(tx, wallets[index % wallets.length] ?? '', parent);
    });
    expect(await debitedShards(parents)).toHaveLength(1);
    // One transaction each: over 8 of them and 16 shards, at least two differ but for a 1 in 16^7 chance.
    const drawn = new Set<string>();
    for (let attempt = 0; attempt < 8; attempt++) {
      const parent = crypto.randomUUID();
      await withTransaction(t.deps.db, (tx) => deposit(tx, wallets[0] ?? '', parent));
      for (const shard of await debitedShards([parent])) drawn.add(shard);
    }
    expect(drawn.size).toBeGreaterThan(1);
  });
});

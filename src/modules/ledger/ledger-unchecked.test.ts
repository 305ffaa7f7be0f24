import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { fundWallet, newWallet } from '../../../test/ledger/fixtures.js';
import { isDatabaseAnswer, withTransaction } from '../../platform/db/transaction.js';
import { requireAsset } from '../../platform/money/assets.js';
import * as ledger from './index.js';

// A batch that reads nothing (`assumeLoaded`) refuses nothing in code: its write must leave the
// database untouched unless every wallet exists and holds enough at every step of the batch's order.

let t: TestContext;
const usd = requireAsset('USD', 'sandbox');

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

type Move = [from: string, to: string, amount: bigint];

/** Runs the moves, in order, as one unchecked batch of transfers of client A; answers the error or undefined. */
async function uncheckedBatch(moves: Move[], options: { openCredited?: boolean } = {}): Promise<unknown> {
  try {
    await withTransaction(t.deps.db, async (tx) => {
      const batch = new ledger.LedgerBatch(tx, t.clock.now());
      const operations = moves.map(
        ([from, to, amount]): ledger.TransferOperation => ({
          operation: 'transfer',
          clientId: t.clientA.id,
          now: t.clock.now(),
          asset: usd,
          legs: [{ from: { walletId: from }, to: { walletId: to }, amount }],
          history: { parentTransactionId: crypto.randomUUID(), type: 'INTERNAL_TRANSFER', traceId: 'test-trace' },
        }),
      );
      for (const operation of operations) batch.declare(operation);
      batch.assumeLoaded(options);
      for (const operation of operations) batch.apply(operation);
      await batch.flush();
    });
    return undefined;
  } catch (error) {
    return error;
  }
}

async function available(walletId: string): Promise<bigint | undefined> {
  const rows = await ledger.walletBalances(t.deps.db, t.clientA.id, walletId);
  return rows.find((row) => row.asset === 'USD')?.available;
}

/** Wallets with a USD account holding the given amounts (an account at zero was funded and emptied). */
async function walletsHolding<const T extends readonly bigint[]>(...amounts: T): Promise<{ [K in keyof T]: string }> {
  const sink = await newWallet(t);
  await fundWallet(t, t.clientA.id, sink, 1n);
  const wallets: string[] = [];
  for (const amount of amounts) {
    const wallet = await newWallet(t);
    await fundWallet(t, t.clientA.id, wallet, amount + 1n);
    expect(await uncheckedBatch([[wallet, sink, 1n]])).toBeUndefined();
    wallets.push(wallet);
  }
  return wallets as { [K in keyof T]: string };
}

function expectRefusedByTheDatabase(error: unknown) {
  expect(error).toBeDefined();
  expect(isDatabaseAnswer(error)).toBe(true);
}

describe('commits', () => {
  it('a chain in an order where every step is covered, even through a wallet that starts empty', async () => {
    const [a, b, c] = await walletsHolding(1_000n, 0n, 0n);
    expect(await uncheckedBatch([[a, b, 1_000n], [b, c, 600n], [b, a, 400n]])).toBeUndefined();
    expect([await available(a), await available(b), await available(c)]).toEqual([400n, 0n, 600n]);
    expect((await ledger.verifyLedger(t.deps.db)).ok).toBe(true);
  });
});

describe('refuses as a whole, and nothing moves', () => {
  it('when one transfer of the batch is short', async () => {
    const [a, b, c] = await walletsHolding(1_000n, 0n, 500n);
    expectRefusedByTheDatabase(await uncheckedBatch([[c, b, 100n], [a, b, 1_001n]]));
    expect([await available(a), await available(b), await available(c)]).toEqual([1_000n, 0n, 500n]);
  });

  it('when the money arrives later in the batch than it leaves (the net effect would be fine)', async () => {
    const [a, b, c] = await walletsHolding(1_000n, 0n, 0n);
    expectRefusedByTheDatabase(await uncheckedBatch([[b, c, 600n], [a, b, 1_000n]]));
    expect([await available(a), await available(b), await available(c)]).toEqual([1_000n, 0n, 0n]);
  });

  it('when two empty wallets swap the same amount (no order covers it)', async () => {
    const [a, b] = await walletsHolding(0n, 0n);
    expectRefusedByTheDatabase(await uncheckedBatch([[a, b, 100n], [b, a, 100n]]));
    expect([await available(a), await available(b)]).toEqual([0n, 0n]);
  });

  it('when a wallet has no account in the asset yet', async () => {
    const [a] = await walletsHolding(1_000n);
    const fresh = await newWallet(t);
    expectRefusedByTheDatabase(await uncheckedBatch([[a, fresh, 100n]]));
    expect(await available(a)).toBe(1_000n);
    expect(await ledger.walletBalances(t.deps.db, t.clientA.id, fresh)).toEqual([]);
  });

  it("when a wallet is another client's", async () => {
    const [a] = await walletsHolding(1_000n);
    const theirs = await newWallet(t, t.clientB);
    await fundWallet(t, t.clientB.id, theirs, 1_000n);
    expectRefusedByTheDatabase(await uncheckedBatch([[a, theirs, 100n]]));
    expectRefusedByTheDatabase(await uncheckedBatch([[theirs, a, 100n]]));
    expect(await available(a)).toBe(1_000n);
    expect((await ledger.walletBalances(t.deps.db, t.clientB.id, theirs)).find((row) => row.asset === 'USD')?.available).toBe(1_000n);
  });

  it('when a wallet is overdrawn, even for a credit', async () => {
    const [a, b] = await walletsHolding(1_000n, 0n);
    // An overdraft is only reachable through a forced card completion: set one on the row directly.
    const setB = (available: string, overdrawn: string) =>
      t.deps.db.updateTable('ledger_accounts').set({ available, overdrawn }).where('client_id', '=', t.clientA.id).where('wallet_id', '=', b).execute();
    await setB('-5', '5');
    try {
      expectRefusedByTheDatabase(await uncheckedBatch([[a, b, 100n]]));
      expect([await available(a), await available(b)]).toEqual([1_000n, -5n]);
    } finally {
      await setB('0', '0');
    }
  });
});

describe('opening the accounts it only credits (openCredited, as trades do)', () => {
  it('opens a wallet account that does not exist yet, and still debits the others by the rule', async () => {
    const [a] = await walletsHolding(1_000n);
    const fresh = await newWallet(t);
    expect(await uncheckedBatch([[a, fresh, 100n]], { openCredited: true })).toBeUndefined();
    expect([await available(a), await available(fresh)]).toEqual([900n, 100n]);
    expectRefusedByTheDatabase(await uncheckedBatch([[a, fresh, 901n]], { openCredited: true }));
    expect([await available(a), await available(fresh)]).toEqual([900n, 100n]);
    expect((await ledger.verifyLedger(t.deps.db)).ok).toBe(true);
  });

  it('credits an existing account, even an overdrawn one, and shrinks its overdraft', async () => {
    const [a, b, c] = await walletsHolding(1_000n, 0n, 0n);
    expect(await uncheckedBatch([[a, c, 10n]], { openCredited: true })).toBeUndefined();
    const setB = (available: string, overdrawn: string) =>
      t.deps.db.updateTable('ledger_accounts').set({ available, overdrawn }).where('client_id', '=', t.clientA.id).where('wallet_id', '=', b).execute();
    await setB('-5', '5');
    try {
      expect(await uncheckedBatch([[a, b, 3n]], { openCredited: true })).toBeUndefined();
      const row = await t.deps.db.selectFrom('ledger_accounts').select(['available', 'overdrawn']).where('client_id', '=', t.clientA.id).where('wallet_id', '=', b).executeTakeFirstOrThrow();
      expect(row).toEqual({ available: '-2', overdrawn: '2' });
      expect([await available(a), await available(c)]).toEqual([987n, 10n]);
    } finally {
      await setB('0', '0');
    }
  });

  it('refuses a wallet that does not exist or is another client\'s, even to credit it', async () => {
    const [a] = await walletsHolding(1_000n);
    const theirs = await newWallet(t, t.clientB);
    expectRefusedByTheDatabase(await uncheckedBatch([[a, crypto.randomUUID(), 100n]], { openCredited: true }));
    expectRefusedByTheDatabase(await uncheckedBatch([[a, theirs, 100n]], { openCredited: true }));
    expect(await available(a)).toBe(1_000n);
    expect(await ledger.walletBalances(t.deps.db, t.clientB.id, theirs)).toEqual([]);
  });
});

it('runs transfers only: a hold needs its balances read first', async () => {
  const [a] = await walletsHolding(1_000n);
  const history = { parentTransactionId: crypto.randomUUID(), type: 'T', traceId: 'test-trace' };
  await withTransaction(t.deps.db, async (tx) => {
    const batch = new ledger.LedgerBatch(tx, t.clock.now());
    batch.declare({ operation: 'releaseHold', clientId: t.clientA.id, now: t.clock.now(), holdId: crypto.randomUUID(), history });
    expect(() => batch.assumeLoaded()).toThrow(/transfers only/);
  });
  await withTransaction(t.deps.db, async (tx) => {
    const batch = new ledger.LedgerBatch(tx, t.clock.now());
    batch.assumeLoaded();
    expect(() => batch.apply({ operation: 'placeHold', clientId: t.clientA.id, now: t.clock.now(), wallet: { walletId: a }, asset: usd, amount: 1n, history })).toThrow(
      /transfers only/,
    );
  });
});

import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { withTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError } from '../../platform/http/errors.js';
import { findAsset, type Asset } from '../../platform/money/assets.js';
import * as ledger from './index.js';
import { newWallet } from '../../../test/ledger/fixtures.js';

/**
 * Model-based test of the ledger: fast-check generates a random sequence of operations, runs each
 * through the real service on the real database, applies it to a tiny in-memory model, and
 * compares every wallet balance after every step. On a failure fast-check prints the seed and the
 * shrunk sequence; replay it with `FC_SEED=<seed> FC_PATH=<path>`.
 */

let t: TestContext;
const assets: Asset[] = [];

beforeAll(async () => {
  t = await createTestApp();
  for (const code of ['USD', 'BTC']) {
    const asset = findAsset(code, 'sandbox');
    if (!asset) throw new Error(`${code} missing`);
    assets.push(asset);
  }
});
afterAll(async () => {
  await t.close();
});

const walletCount = 3;
const initialFunding = 10_000n;

interface Balance {
  available: bigint;
  reserved: bigint;
  pending: bigint;
  overdrawn: bigint;
}
interface ModelHold {
  id: string;
  wallet: number;
  asset: number;
  remaining: bigint;
  open: boolean;
}
interface ModelCredit {
  id: string;
  wallet: number;
  asset: number;
  amount: bigint;
  open: boolean;
}
interface Model {
  balances: Balance[][]; // [wallet][asset]
  holds: ModelHold[];
  credits: ModelCredit[];
}
interface Real {
  clientId: string;
  wallets: string[];
}

const zero = (): Balance => ({ available: 0n, reserved: 0n, pending: 0n, overdrawn: 0n });
const at = (model: Model, wallet: number, asset: number): Balance => {
  const balance = model.balances[wallet]?.[asset];
  if (!balance) throw new Error(`no model balance for wallet ${wallet} asset ${asset}`);
  return balance;
};
const settleOverdraft = (balance: Balance) => {
  balance.overdrawn = balance.available < 0n ? -balance.available : 0n;
};

function walletOf(real: Real, index: number): string {
  const wallet = real.wallets[index];
  if (!wallet) throw new Error(`no wallet ${index}`);
  return wallet;
}
function assetOf(index: number): Asset {
  const asset = assets[index];
  if (!asset) throw new Error(`no asset ${index}`);
  return asset;
}

let step = 0;
const now = () => new Date(t.clock.now().getTime() + step++);
const history = (type: string) => ({ parentTransactionId: crypto.randomUUID(), type, traceId: 'test-trace' });

async function run<T>(work: (tx: Tx) => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; code: string }> {
  try {
    return { ok: true, value: await withTransaction(t.deps.db, work) };
  } catch (error) {
    if (error instanceof AppError) return { ok: false, code: error.code };
    throw error;
  }
}

async function expectBalances(model: Model, real: Real): Promise<void> {
  for (let wallet = 0; wallet < walletCount; wallet++) {
    const rows = await ledger.walletBalances(t.deps.db, real.clientId, walletOf(real, wallet));
    for (let asset = 0; asset < assets.length; asset++) {
      const row = rows.find((entry) => entry.asset === assetOf(asset).code);
      const actual = row ? { available: row.available, reserved: row.reserved, pending: row.pending, overdrawn: row.overdrawn } : zero();
      expect(actual, `wallet ${wallet} ${assetOf(asset).code}`).toEqual(at(model, wallet, asset));
    }
  }
}

type Command = fc.AsyncCommand<Model, Real>;

class Deposit implements Command {
  constructor(readonly wallet: number, readonly asset: number, readonly amount: bigint) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const result = await run((tx) =>
      ledger.postTransfer(tx, { clientId: real.clientId, now: now(), asset: assetOf(this.asset), legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { walletId: walletOf(real, this.wallet) }, amount: this.amount }], history: history('DEPOSIT') }),
    );
    expect(result.ok).toBe(true);
    const balance = at(model, this.wallet, this.asset);
    balance.available += this.amount;
    settleOverdraft(balance);
    await expectBalances(model, real);
  }
  toString = () => `Deposit(w${this.wallet}, a${this.asset}, ${this.amount})`;
}

class Transfer implements Command {
  constructor(readonly from: number, readonly to: number, readonly asset: number, readonly amount: bigint) {}
  check = () => this.from !== this.to;
  async run(model: Model, real: Real) {
    const result = await run((tx) =>
      ledger.postTransfer(tx, { clientId: real.clientId, now: now(), asset: assetOf(this.asset), legs: [{ from: { walletId: walletOf(real, this.from) }, to: { walletId: walletOf(real, this.to) }, amount: this.amount }], history: history('INTERNAL_TRANSFER') }),
    );
    const source = at(model, this.from, this.asset);
    if (source.available < this.amount) {
      expect(result).toEqual({ ok: false, code: 'INSUFFICIENT_FUNDS' });
    } else {
      expect(result.ok).toBe(true);
      source.available -= this.amount;
      const destination = at(model, this.to, this.asset);
      destination.available += this.amount;
      settleOverdraft(destination);
    }
    await expectBalances(model, real);
  }
  toString = () => `Transfer(w${this.from} → w${this.to}, a${this.asset}, ${this.amount})`;
}

class PlaceHold implements Command {
  constructor(readonly wallet: number, readonly asset: number, readonly amount: bigint) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const result = await run((tx) =>
      ledger.placeHold(tx, { clientId: real.clientId, now: now(), wallet: { walletId: walletOf(real, this.wallet) }, asset: assetOf(this.asset), amount: this.amount, history: history('CARD_TRANSACTION') }),
    );
    const balance = at(model, this.wallet, this.asset);
    if (balance.available < this.amount) {
      expect(result).toEqual({ ok: false, code: 'INSUFFICIENT_FUNDS' });
    } else {
      if (!result.ok) throw new Error(`placeHold refused: ${result.code}`);
      balance.available -= this.amount;
      balance.reserved += this.amount;
      model.holds.push({ id: result.value.holdId, wallet: this.wallet, asset: this.asset, remaining: this.amount, open: true });
    }
    await expectBalances(model, real);
  }
  toString = () => `PlaceHold(w${this.wallet}, a${this.asset}, ${this.amount})`;
}

class IncrementHold implements Command {
  constructor(readonly pick: number, readonly amount: bigint) {}
  check = (model: Readonly<Model>) => model.holds.length > 0;
  async run(model: Model, real: Real) {
    const hold = model.holds[this.pick % model.holds.length];
    if (!hold) throw new Error('no hold');
    const result = await run((tx) => ledger.incrementHold(tx, { clientId: real.clientId, now: now(), holdId: hold.id, amount: this.amount, history: history('CARD_TRANSACTION') }));
    const balance = at(model, hold.wallet, hold.asset);
    if (!hold.open) expect(result).toEqual({ ok: false, code: 'CONFLICT' });
    else if (balance.available < this.amount) expect(result).toEqual({ ok: false, code: 'INSUFFICIENT_FUNDS' });
    else {
      expect(result.ok).toBe(true);
      balance.available -= this.amount;
      balance.reserved += this.amount;
      hold.remaining += this.amount;
    }
    await expectBalances(model, real);
  }
  toString = () => `IncrementHold(#${this.pick}, ${this.amount})`;
}

/** How a capture relates to what the hold still reserves: part of it, all of it, or more (over-capture). */
type CaptureSize = { kind: 'part' | 'all' | 'over'; extra: bigint };

class CaptureHold implements Command {
  constructor(
    readonly pick: number,
    readonly size: CaptureSize,
    readonly final: boolean,
    readonly force: boolean,
    readonly toWallet: number | null,
  ) {}
  check = (model: Readonly<Model>) => model.holds.length > 0;
  async run(model: Model, real: Real) {
    const hold = model.holds[this.pick % model.holds.length];
    if (!hold) throw new Error('no hold');
    // Paid to another wallet or to the card settlement account; never back to the hold's own wallet.
    const toWallet = this.toWallet === null || this.toWallet === hold.wallet ? null : this.toWallet;
    const remaining = hold.remaining > 0n ? hold.remaining : 1n;
    const amount =
      this.size.kind === 'part' ? 1n + (this.size.extra % remaining) : this.size.kind === 'all' ? remaining : remaining + this.size.extra;
    const result = await run((tx) =>
      ledger.captureHold(tx, {
        clientId: real.clientId,
        now: now(),
        holdId: hold.id,
        amount,
        to: toWallet === null ? { system: 'CARD_SETTLEMENT' } : { walletId: walletOf(real, toWallet) },
        final: this.final,
        force: this.force,
        history: history('CARD_TRANSACTION'),
      }),
    );
    const balance = at(model, hold.wallet, hold.asset);
    const fromReserved = amount < hold.remaining ? amount : hold.remaining;
    const over = amount - fromReserved;
    const covered = balance.available <= 0n ? 0n : balance.available < over ? balance.available : over;
    const shortfall = over - covered;
    if (!hold.open) expect(result).toEqual({ ok: false, code: 'CONFLICT' });
    else if (shortfall > 0n && !this.force) expect(result).toEqual({ ok: false, code: 'INSUFFICIENT_FUNDS' });
    else {
      if (!result.ok) throw new Error(`capture refused: ${result.code}`);
      expect(result.value.shortfall).toBe(shortfall);
      const release = this.final ? hold.remaining - fromReserved : 0n;
      balance.reserved -= fromReserved + release;
      balance.available += release - over;
      settleOverdraft(balance);
      hold.remaining -= fromReserved + release;
      hold.open = hold.remaining > 0n;
      if (toWallet !== null) {
        const destination = at(model, toWallet, hold.asset);
        destination.available += amount;
        settleOverdraft(destination);
      }
    }
    await expectBalances(model, real);
  }
  toString = () => `CaptureHold(#${this.pick}, ${this.size.kind}+${this.size.extra}, final=${this.final}, force=${this.force}, to=${this.toWallet ?? 'card settlement'})`;
}

class ReleaseHold implements Command {
  constructor(readonly pick: number, readonly amount: bigint | null, readonly expire: boolean) {}
  check = (model: Readonly<Model>) => model.holds.length > 0;
  async run(model: Model, real: Real) {
    const hold = model.holds[this.pick % model.holds.length];
    if (!hold) throw new Error('no hold');
    const context = { clientId: real.clientId, now: now(), holdId: hold.id, history: history('CARD_TRANSACTION') };
    const result = await run((tx) =>
      this.expire ? ledger.expireHold(tx, context) : ledger.releaseHold(tx, { ...context, ...(this.amount === null ? {} : { amount: this.amount }) }),
    );
    const release = this.expire || this.amount === null ? hold.remaining : this.amount;
    if (!hold.open || release > hold.remaining) expect(result).toEqual({ ok: false, code: 'CONFLICT' });
    else {
      expect(result.ok).toBe(true);
      const balance = at(model, hold.wallet, hold.asset);
      balance.reserved -= release;
      balance.available += release;
      settleOverdraft(balance);
      hold.remaining -= release;
      hold.open = hold.remaining > 0n;
    }
    await expectBalances(model, real);
  }
  toString = () => `${this.expire ? 'ExpireHold' : 'ReleaseHold'}(#${this.pick}${this.amount === null || this.expire ? '' : `, ${this.amount}`})`;
}

class RecordPendingCredit implements Command {
  constructor(readonly wallet: number, readonly asset: number, readonly amount: bigint) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const result = await run((tx) =>
      ledger.recordPendingCredit(tx, { clientId: real.clientId, now: now(), wallet: { walletId: walletOf(real, this.wallet) }, asset: assetOf(this.asset), amount: this.amount, source: 'BANK_SETTLEMENT', history: history('BANK_DEPOSIT') }),
    );
    if (!result.ok) throw new Error(`pending credit refused: ${result.code}`);
    at(model, this.wallet, this.asset).pending += this.amount;
    model.credits.push({ id: result.value.pendingCreditId, wallet: this.wallet, asset: this.asset, amount: this.amount, open: true });
    await expectBalances(model, real);
  }
  toString = () => `RecordPendingCredit(w${this.wallet}, a${this.asset}, ${this.amount})`;
}

class SettlePendingCredit implements Command {
  constructor(readonly pick: number, readonly clear: boolean) {}
  check = (model: Readonly<Model>) => model.credits.length > 0;
  async run(model: Model, real: Real) {
    const credit = model.credits[this.pick % model.credits.length];
    if (!credit) throw new Error('no credit');
    const input = { clientId: real.clientId, now: now(), pendingCreditId: credit.id, history: history('BANK_DEPOSIT') };
    const result = await run((tx) => (this.clear ? ledger.clearPendingCredit(tx, input) : ledger.failPendingCredit(tx, input)));
    if (!credit.open) expect(result).toEqual({ ok: false, code: 'CONFLICT' });
    else {
      expect(result.ok).toBe(true);
      const balance = at(model, credit.wallet, credit.asset);
      balance.pending -= credit.amount;
      if (this.clear) balance.available += credit.amount;
      settleOverdraft(balance);
      credit.open = false;
    }
    await expectBalances(model, real);
  }
  toString = () => `${this.clear ? 'Clear' : 'Fail'}PendingCredit(#${this.pick})`;
}

const wallet = fc.integer({ min: 0, max: walletCount - 1 });
const asset = fc.integer({ min: 0, max: 1 });
const amount = fc.bigInt({ min: 1n, max: 4_000n });
const pick = fc.nat({ max: 50 });

const commands = [
  fc.tuple(wallet, asset, amount).map(([w, a, x]) => new Deposit(w, a, x)),
  fc.tuple(wallet, wallet, asset, amount).map(([from, to, a, x]) => new Transfer(from, to, a, x)),
  fc.tuple(wallet, asset, amount).map(([w, a, x]) => new PlaceHold(w, a, x)),
  fc.tuple(pick, amount).map(([p, x]) => new IncrementHold(p, x)),
  fc
    .tuple(pick, fc.constantFrom('part' as const, 'all' as const, 'over' as const), fc.bigInt({ min: 1n, max: 25_000n }), fc.boolean(), fc.boolean(), fc.option(wallet))
    .map(([p, kind, extra, final, force, to]) => new CaptureHold(p, { kind, extra }, final, force, to)),
  fc.tuple(pick, fc.option(amount), fc.boolean()).map(([p, x, expire]) => new ReleaseHold(p, x, expire)),
  fc.tuple(wallet, asset, amount).map(([w, a, x]) => new RecordPendingCredit(w, a, x)),
  fc.tuple(pick, fc.boolean()).map(([p, clear]) => new SettlePendingCredit(p, clear)),
];

it('agrees with an in-memory model after every step, and ledger verify stays clean', async () => {
  const seed = process.env.FC_SEED === undefined ? Date.now() ^ (Math.random() * 0x100000000) : Number(process.env.FC_SEED);
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 30, size: 'large' }), async (sequence) => {
      const real: Real = { clientId: t.clientA.id, wallets: [] };
      for (let index = 0; index < walletCount; index++) real.wallets.push(await newWallet(t));
      const model: Model = { balances: Array.from({ length: walletCount }, () => assets.map(zero)), holds: [], credits: [] };
      // Every wallet starts funded, so that most operations have money to work with.
      for (let walletIndex = 0; walletIndex < walletCount; walletIndex++) {
        for (let assetIndex = 0; assetIndex < assets.length; assetIndex++) await new Deposit(walletIndex, assetIndex, initialFunding).run(model, real);
      }
      await fc.asyncModelRun(() => ({ model, real }), sequence);
      const report = await ledger.verifyLedger(t.deps.db);
      expect(report.checks.filter((check) => check.violationCount > 0)).toEqual([]);
    }),
    { seed, numRuns: Number(process.env.FC_RUNS ?? 30), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) },
  );
}, 600_000);

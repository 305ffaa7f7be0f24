/* eslint-disable @typescript-eslint/no-explicit-any */
import { appendFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { balanceOf, expectLedgerClean, linkedWallet } from '../../../test/bank/fixtures.js';
import { authorize, onParent, send } from '../../../test/cards/card-network.js';
import { creditCard, lineOf, ltvEventsOf, openLine, setPrice, type OpenLine } from '../../../test/credit/fixtures.js';
import { systemAccountBalance } from '../ledger/index.js';

/**
 * A model-based test of credit lines (contract §12.10 as implemented): random sequences of price
 * moves, card purchases (completed at once, or left open as holds and completed later), refunds
 * (beyond the principal too: the excess is paid into the collateral wallet) and their reversals,
 * USD moved out of the collateral wallet, repayments, interest days, collateral locks and releases
 * run against the real app over HTTP; a small model
 * with its own exact arithmetic (bigint, nothing imported from ltv.ts) predicts every LTV event
 * (type, order, LTV and threshold, and what a liquidation sold and repaid) and the line's figures,
 * and both are compared after every step. Each run uses a fresh client (its own prices, clock and
 * one line), so runs do not see each other.
 *
 * On a failure the seed is printed; replay with FC_SEED=<seed> (FC_RUNS changes the run count).
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

// ---- the model's arithmetic (independent of src/modules/credit/ltv.ts) ---------------------------

const satPerBtc = 100_000_000n;
/** LTV ≥ θ (θ in ten-thousandths) ⟺ debt × 10^4 × 10^8 ≥ θ × collateral × price, debt and price in cents, collateral in satoshi. */
const ltvScale = 10_000n * satPerBtc;
const thresholds = [6000n, 6500n, 7000n, 7500n, 8000n, 8333n];
const eventNames = ['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED', 'LTV_COLLATERAL_NEEDED', 'LTV_URGENT_COLLATERAL_NEEDED', 'LTV_LIQUIDATION_WARNING'];
const openingE4 = 5000n;
const penaltyE4 = 200n;
const dailyLimitCents = 1_000_000n;

function decimal(value: bigint, places: number): string {
  const negative = value < 0n;
  const magnitude = negative ? -value : value;
  const unit = 10n ** BigInt(places);
  return `${negative ? '-' : ''}${magnitude / unit}.${(magnitude % unit).toString().padStart(places, '0')}`;
}
const usd = (cents: bigint) => decimal(cents, 2);
const btc = (satoshi: bigint) => decimal(satoshi, 8);
const priceText = (cents: bigint) => decimal(cents, 2);

/** "0.6512" (rounded down), "0.0000" without debt, null with debt and no collateral value. */
function ltvText(debt: bigint, collateral: bigint, price: bigint): string | null {
  if (debt === 0n) return '0.0000';
  const value = collateral * price;
  if (value === 0n) return null;
  return decimal((debt * ltvScale) / value, 4);
}

/** debt/(collateral × price) ≥ θ, with no debt never reaching anything. */
function reaches(debt: bigint, collateral: bigint, price: bigint, theta: bigint): boolean {
  return debt > 0n && debt * ltvScale >= theta * collateral * price;
}

interface ExpectedEvent {
  type: string;
  ltv: string | null;
  thresholdLtv: string;
  sale?: { collateralSold: string; penaltyAmount: string; proceeds: string; interestRepaid: string; principalRepaid: string; surplus: string };
}

interface Model {
  principal: bigint;
  interest: bigint;
  carry: bigint;
  holdsTotal: bigint;
  collateral: bigint;
  price: bigint;
  mask: number;
  status: string;
  /** Debt was left when a liquidation sold all the collateral: RESTRICTED until repaid with collateral covering the limit again. */
  residual: boolean;
  /** Released (or sold out) below what covers the limit at the opening LTV: RESTRICTED until covered again. */
  needsCover?: boolean;
  aprE4: bigint;
  limit: bigint;
  walletUsd: bigint;
  walletBtc: bigint;
  /** What refunds paid into the collateral wallet beyond the principal and no refund reversal took back yet. */
  excessPaidOut: bigint;
  /** Refunds credited (0200, processing code 20), oldest first: their lifecycle, and what of each no reversal took back yet. */
  refunds: { parentId: string; leftCents: bigint }[];
  /** Open card authorizations: parent id → cents held. */
  holds: Map<string, bigint>;
  approvedToday: bigint;
  day: number;
  events: ExpectedEvent[];
}

const debtOf = (m: Model) => m.principal + m.interest + m.holdsTotal;

/** What taking `taken` satoshi yields: penalty rounded up, proceeds rounded down, interest repaid first. */
function saleOf(m: Model, taken: bigint) {
  const penalty = (taken * penaltyE4 + 9_999n) / 10_000n;
  const sold = taken - penalty;
  const proceeds = (sold * m.price) / satPerBtc;
  const interestRepaid = proceeds < m.interest ? proceeds : m.interest;
  const principalRepaid = proceeds - interestRepaid < m.principal ? proceeds - interestRepaid : m.principal;
  return { taken, penalty, sold, proceeds, interestRepaid, principalRepaid, surplus: proceeds - interestRepaid - principalRepaid };
}

/** Whether a sale of `taken` is enough: all collateral, or everything owed repaid, or the LTV after it at most the opening LTV. */
function saleEnough(m: Model, sale: ReturnType<typeof saleOf>): boolean {
  if (sale.taken >= m.collateral) return true;
  if (sale.interestRepaid + sale.principalRepaid >= m.principal + m.interest) return true;
  const debtAfter = debtOf(m) - sale.interestRepaid - sale.principalRepaid;
  return debtAfter * ltvScale <= openingE4 * (m.collateral - sale.taken) * m.price;
}

/**
 * The least satoshi a liquidation may take. Below the real-number bounds (the LTV target needs
 * taken ≥ (D·10^12 − 0.5e4·C·p) / (0.48e4·p), repaying all needs taken ≥ (P+I)·10^12 / (0.98e4·p))
 * nothing can be enough, because rounding only lowers the proceeds; from there one unit at a time.
 */
function leastTaken(m: Model): bigint {
  const p = m.price;
  const toTarget = (debtOf(m) * ltvScale - openingE4 * m.collateral * p) / ((10_000n - openingE4 - penaltyE4) * p);
  const toRepayAll = ((m.principal + m.interest) * ltvScale) / ((10_000n - penaltyE4) * p);
  let taken = [toTarget, toRepayAll, m.collateral].reduce((a, b) => (a < b ? a : b)) - 2n;
  if (taken < 1n) taken = 1n;
  for (let steps = 0; !saleEnough(m, saleOf(m, taken)); steps++) {
    if (steps > 5_000_000) throw new Error('model: the liquidation search did not end');
    taken += 1n;
  }
  return taken;
}

/**
 * How the model picks the amount a liquidation takes: the least that is enough, as contract §12.10
 * says (strict, the default). CREDIT_TOLERANT_LIQUIDATION=1 instead accepts the app's choice when
 * it is enough, not below the least and at most `overshootAllowance` above it, and carries on with
 * it (to look past a liquidation amount bug at the rest of the model).
 */
const strictLiquidation = process.env.CREDIT_TOLERANT_LIQUIDATION !== '1';
const overshootAllowance = 2_000n;

/** The LTV bits, events, status and liquidation after a change, as the model sees them (`takenBy` picks each liquidation's amount). */
function recompute(m: Model, takenBy: (least: bigint) => bigint): void {
  const debt = debtOf(m);
  let next = 0;
  thresholds.forEach((theta, level) => {
    const bit = 1 << level;
    const armed = (m.mask & bit) !== 0;
    const reached = reaches(debt, m.collateral, m.price, theta);
    const stillAbove = armed && debt > 0n && !(debt * ltvScale < (theta - 100n) * m.collateral * m.price);
    if (reached || stillAbove) next |= bit;
  });
  const ltv = ltvText(debt, m.collateral, m.price);
  for (let level = 0; level < 5; level++) {
    const bit = 1 << level;
    if ((next & bit) !== 0 && (m.mask & bit) === 0) count(eventNames[level] ?? '?');
    if ((next & bit) !== 0 && (m.mask & bit) === 0) m.events.push({ type: eventNames[level] ?? '?', ltv, thresholdLtv: decimal(thresholds[level] ?? 0n, 4) });
  }
  m.mask = next;
  const coversLimit = m.collateral > 0n && m.collateral * m.price * openingE4 >= m.limit * ltvScale;
  if (m.residual && m.principal + m.interest === 0n && coversLimit) m.residual = false;
  if (m.needsCover === true && coversLimit) m.needsCover = false;
  if (m.status === 'ACTIVE' || m.status === 'RESTRICTED') m.status = (next & 2) !== 0 || m.collateral === 0n || m.residual || m.needsCover === true ? 'RESTRICTED' : 'ACTIVE';
  // A sale repays principal and interest: a line owing only open card holds is not sold.
  if (m.collateral > 0n && m.principal + m.interest > 0n && reaches(debt, m.collateral, m.price, thresholds[5] ?? 0n)) {
    const least = leastTaken(m);
    count(m.collateral <= least ? 'LTV_LIQUIDATED (all collateral)' : 'LTV_LIQUIDATED');
    const taken = takenBy(least);
    const sale = saleOf(m, taken);
    m.events.push({
      type: 'LTV_LIQUIDATED',
      ltv,
      thresholdLtv: '0.8333',
      sale: {
        collateralSold: btc(sale.sold),
        penaltyAmount: btc(sale.penalty),
        proceeds: usd(sale.proceeds),
        interestRepaid: usd(sale.interestRepaid),
        principalRepaid: usd(sale.principalRepaid),
        surplus: usd(sale.surplus),
      },
    });
    if (m.collateral === taken) m.needsCover = true;
    m.collateral -= taken;
    m.interest -= sale.interestRepaid;
    m.principal -= sale.principalRepaid;
    if (m.collateral === 0n && m.principal + m.interest > 0n) m.residual = true;
    m.walletUsd += sale.surplus;
    recompute(m, takenBy);
  }
}

/** What the runs exercised (printed at the end, to see that the generator reaches every path). */
const tally: Record<string, number> = {};
const count = (what: string) => (tally[what] = (tally[what] ?? 0) + 1);

// ---- steps --------------------------------------------------------------------------------------

type Completion = 'same' | 'less' | 'more';
type Step =
  | { kind: 'price'; cents: number }
  | { kind: 'purchase'; cents: number; completion: Completion }
  | { kind: 'hold'; cents: number }
  | { kind: 'completeHold'; pick: number; completion: Completion }
  | { kind: 'repay'; percent: number; over: boolean }
  | { kind: 'refund'; cents: number }
  | { kind: 'reverseRefund'; pick: number; percent: number }
  | { kind: 'moveOut'; percent: number }
  | { kind: 'day' }
  | { kind: 'lock'; satoshi: number }
  | { kind: 'release'; percent: number };

/**
 * A purchase's or hold's amount: never one of the sandbox's magic amounts (990.00-990.99 decline
 * with their own code, contract §12.5), which the model does not predict (a CI run drew 990.14).
 */
const purchaseCents = fc.integer({ min: 100, max: 400_000 }).map((cents) => (cents >= 99_000 && cents <= 99_099 ? cents + 100 : cents));
const completion = fc.constantFrom<Completion>('same', 'same', 'less', 'more');
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('price' as const), cents: fc.integer({ min: 1_200_000, max: 6_000_000 }) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('purchase' as const), cents: purchaseCents, completion }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('hold' as const), cents: purchaseCents }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('completeHold' as const), pick: fc.nat(), completion }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('repay' as const), percent: fc.integer({ min: 1, max: 100 }), over: fc.integer({ min: 0, max: 7 }).map((n) => n === 0) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('refund' as const), cents: purchaseCents }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('reverseRefund' as const), pick: fc.nat(), percent: fc.integer({ min: 1, max: 100 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('moveOut' as const), percent: fc.integer({ min: 1, max: 100 }) }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'day' as const }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('lock' as const), satoshi: fc.integer({ min: 1, max: 30_000_000 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('release' as const), percent: fc.integer({ min: 1, max: 100 }) }), weight: 1 },
);

interface Real {
  client: TestClient;
  line: OpenLine;
  cardId: string;
  /** Another wallet of the client, where `moveOut` sends USD. */
  elsewhere: string;
  /** LTV events of the line read so far, and the LTV_LIQUIDATED ones among them the model has not used yet. */
  seen: number;
  liquidations: any[];
}

/** After each call that may liquidate: collects the LTV_LIQUIDATED events it wrote (their amounts are what the tolerant model accepts). */
async function observe(real: Real): Promise<void> {
  if (strictLiquidation) return;
  const events = await ltvEventsOf(t, real.line.lineId, real.client);
  real.liquidations.push(...events.slice(real.seen).filter((event) => event.type === 'LTV_LIQUIDATED'));
  real.seen = events.length;
}

/** The satoshi the model's liquidation takes: the least enough (strict), or the app's if it is enough and within the allowance. */
function takenOf(real: Real, least: bigint, label: string): bigint {
  if (strictLiquidation) return least;
  const event = real.liquidations.shift();
  if (!event) return least;
  const satoshi = (text: unknown) => BigInt(String(text).replace('.', ''));
  const taken = satoshi(event.data.collateralSold) + satoshi(event.data.penaltyAmount);
  expect(taken >= least && taken - least <= overshootAllowance, `${label}: a liquidation took ${taken} satoshi; the least enough is ${least}`).toBe(true);
  return taken;
}

function completedCents(held: bigint, how: Completion): bigint {
  if (how === 'less') return held / 2n > 0n ? held / 2n : 1n;
  if (how === 'more') return held + held / 4n + 1n;
  return held;
}

/** Amounts in major units as the card network simulator takes them (a number). */
const major = (cents: bigint) => Number(cents) / 100;

async function call(real: Real, method: 'POST' | 'PUT', url: string, body: unknown) {
  const response = await t.request({ method, url, key: real.client.key, body });
  await observe(real);
  return response;
}

function expectRefused(response: { status: number; body: any }, code: string): void {
  count(`refused ${code}`);
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body.code).toBe(code);
}

/**
 * An authorization of `cents`, as the model expects it decided (limits, then available credit, then
 * the line's status, then the LTV the purchase would leave: at the purchase-restricted threshold or
 * beyond, 57).
 */
async function authorizeModelled(m: Model, real: Real, cents: bigint): Promise<{ parentId: string; approved: boolean }> {
  const result = await authorize(t, real.cardId, { amount: major(cents) }, real.client);
  await observe(real);
  let expected = '00';
  if (m.approvedToday + cents > dailyLimitCents) expected = '61';
  else if (m.limit - debtOf(m) < cents) expected = '51';
  else if (m.status !== 'ACTIVE') expected = '57';
  else if (reaches(debtOf(m) + cents, m.collateral, m.price, thresholds[1] ?? 0n)) {
    expected = '57';
    count('authorization 57 (the LTV it would leave)');
  }
  count(`authorization ${expected}`);
  expect(result.responseCode, `authorization of ${usd(cents)}: ${JSON.stringify(result)}`).toBe(expected);
  if (expected === '57') expect(result.record.declineReason).toBe('LTV_PURCHASE_RESTRICTED');
  return { parentId: result.parentCardTransactionId, approved: expected === '00' };
}

async function applyStep(m: Model, real: Real, current: Step, takenBy: (least: bigint) => bigint): Promise<void> {
  const { line } = real;
  switch (current.kind) {
    case 'price': {
      const cents = BigInt(current.cents);
      await setPrice(t, 'BTC-USD', priceText(cents), real.client);
      await observe(real);
      m.price = cents;
      recompute(m, takenBy);
      return;
    }
    case 'purchase':
    case 'hold': {
      const cents = BigInt(current.cents);
      const { parentId, approved } = await authorizeModelled(m, real, cents);
      if (!approved) return;
      m.approvedToday += cents;
      m.holdsTotal += cents;
      recompute(m, takenBy);
      if (current.kind === 'hold') {
        m.holds.set(parentId, cents);
        return;
      }
      const amount = completedCents(cents, current.completion);
      await onParent(t, parentId, 'completions', { amount: major(amount) }, real.client);
      await observe(real);
      m.holdsTotal -= cents;
      m.principal += amount;
      recompute(m, takenBy);
      return;
    }
    case 'completeHold': {
      const open = [...m.holds.keys()];
      const parentId = open[current.pick % Math.max(open.length, 1)];
      if (parentId === undefined) return;
      const held = m.holds.get(parentId) ?? 0n;
      const amount = completedCents(held, current.completion);
      await onParent(t, parentId, 'completions', { amount: major(amount) }, real.client);
      await observe(real);
      m.holds.delete(parentId);
      m.holdsTotal -= held;
      m.principal += amount;
      recompute(m, takenBy);
      return;
    }
    case 'repay': {
      const owed = m.principal + m.interest;
      const amount = current.over || owed === 0n ? owed + 1n : (owed * BigInt(current.percent) + 99n) / 100n;
      const response = await call(real, 'POST', `/v1/credit-lines/${line.lineId}/payments`, { walletId: line.wallet.walletId, amount: usd(amount) });
      if (amount > owed) return expectRefused(response, 'AMOUNT_EXCEEDS_OUTSTANDING');
      if (amount > m.walletUsd) return expectRefused(response, 'INSUFFICIENT_FUNDS');
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      const interestPaid = amount < m.interest ? amount : m.interest;
      expect(response.body.data.payment).toMatchObject({ interestPaid: usd(interestPaid), principalPaid: usd(amount - interestPaid) });
      m.interest -= interestPaid;
      m.principal -= amount - interestPaid;
      m.walletUsd -= amount;
      recompute(m, takenBy);
      return;
    }
    case 'refund': {
      // A refund credited at once (0200, processing code 20): it repays principal; the excess goes to the collateral wallet.
      const cents = BigInt(current.cents);
      const result = await send(t, `/v1/sandbox/cards/${real.cardId}/financial`, { amount: major(cents), processingCode: '200000' }, real.client);
      await observe(real);
      expect(result.record).toMatchObject({ type: 'REFUND', status: 'COMPLETED' });
      const repaid = cents < m.principal ? cents : m.principal;
      count(repaid < cents ? 'refund beyond the principal' : 'refund');
      m.principal -= repaid;
      m.walletUsd += cents - repaid;
      m.excessPaidOut += cents - repaid;
      m.refunds.push({ parentId: result.parentCardTransactionId, leftCents: cents });
      recompute(m, takenBy);
      return;
    }
    case 'reverseRefund': {
      // The sandbox reversal of a refund's lifecycle: what is left of it, or the amount given when less. It takes back
      // from the collateral wallet first what refunds paid into it (as far as the wallet has it), and lends the rest.
      const refund = m.refunds[current.pick % Math.max(m.refunds.length, 1)];
      if (refund === undefined) return;
      const asked = current.percent === 100 ? undefined : (refund.leftCents * BigInt(current.percent) + 99n) / 100n;
      const result = await onParent(t, refund.parentId, 'reversals', asked === undefined || asked === 0n ? {} : { amount: major(asked) }, real.client);
      await observe(real);
      const taken = asked === undefined || asked === 0n || asked > refund.leftCents ? refund.leftCents : asked;
      expect(result.record).toMatchObject({ type: 'REVERSAL_ADVICE', amount: major(taken) });
      if (taken === 0n) return;
      const settled = taken < m.excessPaidOut ? taken : m.excessPaidOut;
      const fromWallet = settled < m.walletUsd ? settled : m.walletUsd;
      count(fromWallet === taken ? 'refund reversed from the wallet' : fromWallet > 0n ? 'refund reversed from the wallet and lent' : 'refund reversed and lent');
      refund.leftCents -= taken;
      m.excessPaidOut -= settled;
      m.walletUsd -= fromWallet;
      m.principal += taken - fromWallet;
      recompute(m, takenBy);
      return;
    }
    case 'moveOut': {
      const amount = (m.walletUsd * BigInt(current.percent)) / 100n;
      if (amount === 0n) return;
      const response = await call(real, 'POST', '/v1/internal-transfer', { sourceWalletId: line.wallet.walletId, destinationWalletId: real.elsewhere, amount: usd(amount), asset: 'USD' });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      m.walletUsd -= amount;
      return;
    }
    case 'day': {
      // Holds expire after 7 days; the model keeps within 6 so that none does.
      if (m.day >= 6) return;
      const response = await call(real, 'POST', '/v1/sandbox/clock/advance', { seconds: 86_400 });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      m.day += 1;
      m.approvedToday = 0n;
      if (m.aprE4 > 0n) {
        const total = m.carry + m.principal * m.aprE4;
        m.interest += total / 3_650_000n;
        m.carry = total % 3_650_000n;
        recompute(m, takenBy);
      }
      return;
    }
    case 'lock': {
      const amount = BigInt(current.satoshi);
      const response = await call(real, 'POST', `/v1/credit-lines/${line.lineId}/collateral`, { amount: btc(amount) });
      if (amount > m.walletBtc) return expectRefused(response, 'INSUFFICIENT_FUNDS');
      // A lock that leaves a line owing principal or interest at or above the liquidation threshold is refused (it would be sold at once).
      const liquidationE4 = thresholds[thresholds.length - 1] ?? 0n;
      if (m.principal + m.interest > 0n && debtOf(m) * ltvScale >= liquidationE4 * (m.collateral + amount) * m.price) return expectRefused(response, 'LTV_TOO_HIGH');
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      m.walletBtc -= amount;
      m.collateral += amount;
      recompute(m, takenBy);
      return;
    }
    case 'release': {
      const amount = m.collateral === 0n ? 1n : (m.collateral * BigInt(current.percent) + 99n) / 100n;
      const response = await call(real, 'POST', `/v1/credit-lines/${line.lineId}/collateral/release`, { amount: btc(amount) });
      if (amount > m.collateral) return expectRefused(response, 'INSUFFICIENT_FUNDS');
      const debt = debtOf(m);
      if (debt > 0n && debt * ltvScale > openingE4 * (m.collateral - amount) * m.price) return expectRefused(response, 'LTV_TOO_HIGH');
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      m.collateral -= amount;
      m.walletBtc += amount;
      m.needsCover = true;
      recompute(m, takenBy);
      return;
    }
  }
}

/** The line, its events, the wallet and the CREDIT_LENDING account agree with the model. */
async function compare(m: Model, real: Real, label: string): Promise<void> {
  const events = await ltvEventsOf(t, real.line.lineId, real.client);
  const actualEvents = events.map((event) => {
    const data = event.data;
    const base: ExpectedEvent = { type: event.type, ltv: data.ltv, thresholdLtv: data.thresholdLtv };
    if (event.type === 'LTV_LIQUIDATED') {
      base.sale = {
        collateralSold: data.collateralSold,
        penaltyAmount: data.penaltyAmount,
        proceeds: data.proceeds,
        interestRepaid: data.interestRepaid,
        principalRepaid: data.principalRepaid,
        surplus: data.surplus,
      };
    }
    return base;
  });
  expect(actualEvents, `${label}: LTV events`).toEqual(m.events);
  const view = await lineOf(t, real.line.lineId, real.client);
  expect(
    {
      status: view.status,
      principal: view.outstanding.principal,
      interest: view.outstanding.interest,
      pendingHolds: view.outstanding.pendingHolds,
      total: view.outstanding.total,
      availableCredit: view.availableCredit,
      collateral: view.collateral.amount,
      price: view.collateral.price,
      ltv: view.ltv,
    },
    `${label}: the line`,
  ).toEqual({
    status: m.status,
    principal: usd(m.principal),
    interest: usd(m.interest),
    pendingHolds: usd(m.holdsTotal),
    total: usd(debtOf(m)),
    availableCredit: usd(m.limit - debtOf(m)),
    collateral: btc(m.collateral),
    price: priceText(m.price),
    ltv: ltvText(debtOf(m), m.collateral, m.price),
  });
  const walletUsd = await balanceOf(t, real.line.wallet.walletId, 'USD', real.client);
  const walletBtc = await balanceOf(t, real.line.wallet.walletId, 'BTC', real.client);
  expect({ usd: walletUsd.AVAILABLE, btc: walletBtc.AVAILABLE, btcReserved: walletBtc.RESERVED }, `${label}: the wallet`).toEqual({
    usd: usd(m.walletUsd),
    btc: btc(m.walletBtc),
    btcReserved: btc(m.collateral),
  });
  // What the client lent out and has not had back is exactly the principal of its (one) line.
  expect(-(await systemAccountBalance(t.deps.db, real.client.id, 'CREDIT_LENDING', 'USD')), `${label}: CREDIT_LENDING`).toBe(m.principal);
}

function describeStep(s: Step): string {
  return JSON.stringify(s);
}

describe('model', () => {
  it('random sequences of prices, purchases, holds, refunds and their reversals, USD moved out, repayments, interest days, locks and releases agree with the model after every step', async () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2_147_483_647);
    const aprs = ['0', '0.2000', '1'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...aprs),
        fc.integer({ min: 4_000_000, max: 8_000_000 }),
        fc.array(step, { minLength: 5, maxLength: 12 }),
        async (apr, startCents, steps) => {
          const client = await t.newClient('credit model');
          const start = BigInt(startCents);
          await setPrice(t, 'BTC-USD', priceText(start), client);
          // 0.25 BTC locked: at 40,000 USD and up it covers a 5,000 USD limit at the opening LTV.
          const line = await openLine(t, { client, collateral: 100_000_000n, usd: 5_000_000n, creditLimit: '5000.00', apr, lock: '0.25000000' });
          const cardId = await creditCard(t, line, client);
          const elsewhere = (await linkedWallet(t, client)).walletId;
          const real: Real = { client, line, cardId, elsewhere, seen: 0, liquidations: [] };
          const m: Model = {
            principal: 0n,
            interest: 0n,
            carry: 0n,
            holdsTotal: 0n,
            collateral: 25_000_000n,
            price: start,
            mask: 0,
            status: 'ACTIVE',
            residual: false,
            aprE4: BigInt(Math.round(Number(apr) * 10_000)),
            limit: 500_000n,
            walletUsd: 5_000_000n,
            walletBtc: 75_000_000n,
            excessPaidOut: 0n,
            refunds: [],
            holds: new Map(),
            approvedToday: 0n,
            day: 0,
            events: [],
          };
          await compare(m, real, 'opened');
          for (const [index, current] of steps.entries()) {
            const label = `step ${index} ${describeStep(current)}`;
            if (process.env.CREDIT_TRACE) appendFileSync(process.env.CREDIT_TRACE, `${label} model=${JSON.stringify({ P: String(m.principal), I: String(m.interest), H: String(m.holdsTotal), C: String(m.collateral), p: String(m.price), mask: m.mask })}\n`);
            await applyStep(m, real, current, (least) => takenOf(real, least, label));
            await compare(m, real, label);
          }
          await expectLedgerClean(t);
        },
      ),
      {
        numRuns: Number(process.env.FC_RUNS ?? 20),
        seed,
        // Each run is a few hundred requests: shrinking only when asked (FC_SHRINK=1), or a failure would take minutes to report.
        endOnFailure: process.env.FC_SHRINK !== '1',
        reporter: (details) => {
          if (details.failed) throw new Error(`credit model test failed; replay with FC_SEED=${details.seed}: ${fc.defaultReportMessage(details) ?? ''}\n${String(details.errorInstance)}`);
        },
      },
    );
    console.log(`credit model (seed ${seed}) exercised:`, JSON.stringify(tally));
  }, 300_000);
});

describe('liquidation sells the least collateral', () => {
  it('9,000.00 owed on 1 BTC, the price drops to 10,000.00 (LTV 0.90): 0.83333368 BTC taken, the least that brings the LTV to 0.50', async () => {
    const client = await t.newClient('least liquidation');
    const line = await openLine(t, { client, creditLimit: '15000.00' });
    const cardId = await creditCard(t, line, client);
    for (const amount of [5000, 4000]) {
      const auth = await authorize(t, cardId, { amount }, client);
      expect(auth.responseCode).toBe('00');
      await onParent(t, auth.parentCardTransactionId, 'completions', { amount }, client);
    }
    await setPrice(t, 'BTC-USD', '10000.00', client);
    // Independently: taking x satoshi leaves 900,000 − floor((x − ceil(0.02x)) × 10,000.00 / 10^8) cents owed on 10^8 − x satoshi;
    // x = 83,333,368 is the first x for which that is at most half the collateral value (83,333,367 leaves 0.50000003).
    const model: Model = {
      principal: 900_000n, interest: 0n, carry: 0n, holdsTotal: 0n, collateral: 100_000_000n, price: 1_000_000n, mask: 0, status: 'ACTIVE', residual: false,
      aprE4: 0n, limit: 1_500_000n, walletUsd: 0n, walletBtc: 0n, excessPaidOut: 0n, refunds: [], holds: new Map(), approvedToday: 0n, day: 0, events: [],
    };
    expect(leastTaken(model)).toBe(83_333_368n);
    expect(saleEnough(model, saleOf(model, 83_333_367n))).toBe(false);
    const events = await ltvEventsOf(t, line.lineId, client);
    const liquidated = events.find((event) => event.type === 'LTV_LIQUIDATED');
    expect(liquidated?.data).toMatchObject({ collateralSold: '0.81666700', penaltyAmount: '0.01666668', proceeds: '8166.67', interestRepaid: '0.00', principalRepaid: '8166.67', surplus: '0.00' });
    expect((await lineOf(t, line.lineId, client)).collateral.amount).toBe('0.16666632');
  });
});

describe('a liquidation when the line owes only card holds', () => {
  it('a price drop that takes a line owing only a pending hold past the liquidation threshold sells nothing: the line is restricted', async () => {
    const line = await openLine(t, { creditLimit: '15000.00' });
    const cardId = await creditCard(t, line);
    const auth = await authorize(t, cardId, { amount: 5000 });
    expect(auth.responseCode).toBe('00');
    // 5,000.00 held on 1 BTC; at 5,000.00 the LTV is 1.0000 with principal and interest 0.
    await setPrice(t, 'BTC-USD', '5000.00');
    const view = await lineOf(t, line.lineId);
    expect(view).toMatchObject({ status: 'RESTRICTED', ltv: '1.0000', ltvLevel: 'LIQUIDATION', collateral: { amount: '1.00000000' } });
    expect(view.outstanding).toMatchObject({ principal: '0.00', interest: '0.00', pendingHolds: '5000.00' });
    expect((await ltvEventsOf(t, line.lineId)).map((event) => event.type)).toEqual([
      'LTV_THRESHOLD_WARNING',
      'LTV_PURCHASE_RESTRICTED',
      'LTV_COLLATERAL_NEEDED',
      'LTV_URGENT_COLLATERAL_NEEDED',
      'LTV_LIQUIDATION_WARNING',
    ]);
    // The hold completes: now there is principal to repay, and the completion's recompute sells.
    await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 5000 });
    const events = await ltvEventsOf(t, line.lineId);
    expect(events.at(-1)?.type).toBe('LTV_LIQUIDATED');
    expect(Number((await lineOf(t, line.lineId)).ltv)).toBeLessThanOrEqual(0.5);
    await expectLedgerClean(t);
  });
});

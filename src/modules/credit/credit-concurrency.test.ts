import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { balanceOf, expectLedgerClean } from '../../../test/bank/fixtures.js';
import { authorize, balances, fundedCard, onParent } from '../../../test/cards/card-network.js';
import { creditCard, lineOf, ltvEventsOf, openLine, repay, setPrice } from '../../../test/credit/fixtures.js';
import { systemAccountBalance } from '../ledger/index.js';

/**
 * Credit lines under concurrent requests and side by side with debit cards: each crossing recorded
 * once, liquidations that keep the ledger balanced, one card processor for both card types, and no
 * overdraw of the available credit. Each test works with its own client (its own prices and clock).
 */

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const putPrice = (client: TestClient, price: string) => t.request({ method: 'PUT', url: '/v1/sandbox/prices/BTC-USD', key: client.key, body: { price } });

/** A fresh client with a line of `creditLimit` on 1 BTC and a credit card, `spent` USD already completed on it. */
async function spentLine(spent: number[], creditLimit = '15000.00') {
  const client = await t.newClient('credit concurrency');
  const line = await openLine(t, { client, creditLimit, usd: 1_000_000n });
  const cardId = await creditCard(t, line, client);
  for (const amount of spent) {
    const auth = await authorize(t, cardId, { amount }, client);
    expect(auth.responseCode).toBe('00');
    await onParent(t, auth.parentCardTransactionId, 'completions', { amount }, client);
  }
  return { client, line, cardId };
}

const typesOf = async (lineId: string, client: TestClient) => (await ltvEventsOf(t, lineId, client)).map((event) => event.type);

describe('two concurrent price changes record each crossing exactly once', () => {
  it('two PUTs of the same price that both cross 0.60 and 0.65: one LTV_THRESHOLD_WARNING and one LTV_PURCHASE_RESTRICTED', async () => {
    const { client, line } = await spentLine([5000, 4000]);
    // 9,000.00 on 1 BTC: 13,500.00 is LTV 0.6666.
    const responses = await Promise.all([putPrice(client, '13500.00'), putPrice(client, '13500.00')]);
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    expect(await typesOf(line.lineId, client)).toEqual(['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED']);
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ status: 'RESTRICTED', ltv: '0.6666', ltvLevel: 'PURCHASE_RESTRICTED' });
  });

  it('two different prices that both cross 0.60 (0.6206 and 0.6428): the warning once, with the LTV of whichever committed first', async () => {
    const { client, line } = await spentLine([5000, 4000]);
    const responses = await Promise.all([putPrice(client, '14500.00'), putPrice(client, '14000.00')]);
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    const events = await ltvEventsOf(t, line.lineId, client);
    expect(events.map((event) => event.type)).toEqual(['LTV_THRESHOLD_WARNING']);
    expect(['0.6206', '0.6428']).toContain(events[0].data.ltv);
    expect(events[0].data.thresholdLtv).toBe('0.6000');
  });

  it('a price drop and a purchase together that each reach 0.70: every level below once, in order', async () => {
    const { client, line, cardId } = await spentLine([5000, 4000]);
    await setPrice(t, 'BTC-USD', '15500.00', client); // 0.5806: nothing yet
    // 900.00 keeps the day's approvals (9,900.00) under the program's 10,000.00 a day.
    const [price, auth] = await Promise.all([putPrice(client, '12800.00'), authorize(t, cardId, { amount: 900 }, client)]);
    expect(price.status).toBe(200);
    // Whichever went first, the line ends at or above 0.70 with each level recorded once.
    const types = await typesOf(line.lineId, client);
    expect(types.slice(0, 3)).toEqual(['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED', 'LTV_COLLATERAL_NEEDED']);
    expect(new Set(types).size).toBe(types.length);
    // The purchase either went first (approved: 9,900.00 / 15,500.00 = 0.6387, then / 12,800.00 = 0.7734) or after (57).
    if (auth.responseCode === '00') expect(types).toEqual(['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED', 'LTV_COLLATERAL_NEEDED', 'LTV_URGENT_COLLATERAL_NEEDED']);
    else {
      expect(auth.responseCode).toBe('57');
      expect(types).toEqual(['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED', 'LTV_COLLATERAL_NEEDED']);
    }
    await expectLedgerClean(t);
  });

  it('ten concurrent PUTs alternating two prices around 0.60 never record the warning twice without re-arming below 0.59', async () => {
    const { client, line } = await spentLine([5000, 4000]);
    // 14,900.00 → 0.6040 (at or above 0.60); 14,800.00 → 0.6081; neither falls below 0.59, so the level never re-arms.
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => putPrice(client, i % 2 === 0 ? '14900.00' : '14800.00')));
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(await typesOf(line.lineId, client)).toEqual(['LTV_THRESHOLD_WARNING']);
  });
});

describe('a liquidation keeps the ledger balanced', () => {
  it('9,000.00 owed, price to 10,000.00: the sale repays principal, CREDIT_LENDING owes exactly the principal left, ledger verify is clean', async () => {
    const { client, line } = await spentLine([5000, 4000]);
    expect(await systemAccountBalance(t.deps.db, client.id, 'CREDIT_LENDING', 'USD')).toBe(-900_000n);
    await setPrice(t, 'BTC-USD', '10000.00', client);
    const events = await ltvEventsOf(t, line.lineId, client);
    const liquidated = events.find((event) => event.type === 'LTV_LIQUIDATED');
    expect(liquidated?.data).toMatchObject({ proceeds: '8166.67', interestRepaid: '0.00', principalRepaid: '8166.67', surplus: '0.00', penaltyAmount: '0.01666668' });
    const view = await lineOf(t, line.lineId, client);
    expect(view.outstanding).toMatchObject({ principal: '833.33', interest: '0.00', pendingHolds: '0.00' });
    expect(view).toMatchObject({ status: 'ACTIVE', ltvLevel: 'HEALTHY' });
    expect(await systemAccountBalance(t.deps.db, client.id, 'CREDIT_LENDING', 'USD')).toBe(-83_333n);
    // The penalty went to the client's FEES account in BTC; the collateral wallet's reserve lost what was taken.
    expect(await systemAccountBalance(t.deps.db, client.id, 'FEES', 'BTC')).toBe(1_666_668n);
    const btc = await balanceOf(t, line.wallet.walletId, 'BTC', client);
    expect(btc.RESERVED).toBe(view.collateral.amount);
    await repay(t, line, '833.33', client);
    expect(await systemAccountBalance(t.deps.db, client.id, 'CREDIT_LENDING', 'USD')).toBe(0n);
    await expectLedgerClean(t);
  });

  it('a sale of all the collateral with debt left (price to 1,000.00): surplus 0, the rest stays owed, the invariant holds', async () => {
    const { client, line } = await spentLine([5000, 4000]);
    await setPrice(t, 'BTC-USD', '1000.00', client);
    const liquidated = (await ltvEventsOf(t, line.lineId, client)).find((event) => event.type === 'LTV_LIQUIDATED');
    // 1 BTC: penalty 0.02, 0.98 BTC sold at 1,000.00 = 980.00.
    expect(liquidated?.data).toMatchObject({ collateralSold: '0.98000000', penaltyAmount: '0.02000000', proceeds: '980.00', principalRepaid: '980.00', surplus: '0.00' });
    const view = await lineOf(t, line.lineId, client);
    expect(view).toMatchObject({ status: 'RESTRICTED', ltv: null, collateral: { amount: '0.00000000' }, outstanding: { principal: '8020.00' } });
    expect(await systemAccountBalance(t.deps.db, client.id, 'CREDIT_LENDING', 'USD')).toBe(-802_000n);
    await expectLedgerClean(t);
  });

  it('concurrent liquidations of many lines of one client by one price change: every line once, CREDIT_LENDING = −Σ principal', async () => {
    const client = await t.newClient('credit many lines');
    const lines: string[] = [];
    for (let i = 0; i < 4; i++) {
      const line = await openLine(t, { client, creditLimit: '15000.00' });
      const cardId = await creditCard(t, line, client);
      const auth = await authorize(t, cardId, { amount: 2000 + 1000 * i }, client);
      await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 2000 + 1000 * i }, client);
      lines.push(line.lineId);
    }
    // At 4,000.00 the lines (2,000 … 5,000 owed on 1 BTC) are at LTV 0.50, 0.75, 1.00, 1.25: the last two liquidate, once.
    const responses = await Promise.all([putPrice(client, '4000.00'), putPrice(client, '4000.00')]);
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    let principal = 0n;
    for (const [i, lineId] of lines.entries()) {
      const types = await typesOf(lineId, client);
      expect(types.filter((type) => type === 'LTV_LIQUIDATED')).toHaveLength(i >= 2 ? 1 : 0);
      const view = await lineOf(t, lineId, client);
      principal += BigInt(String(view.outstanding.principal).replace('.', ''));
    }
    expect(await systemAccountBalance(t.deps.db, client.id, 'CREDIT_LENDING', 'USD')).toBe(-principal);
    await expectLedgerClean(t);
  });
});

describe('credit and debit cards run through one processor', () => {
  it('side by side: each authorizes, completes and reverses with its own money (wallet for debit, line for credit)', async () => {
    const client = await t.newClient('credit and debit');
    const debit = await fundedCard(t, '1000.00', client);
    const line = await openLine(t, { client, creditLimit: '2000.00' });
    const creditCardId = await creditCard(t, line, client);
    const [debitAuth, creditAuth] = await Promise.all([authorize(t, debit.cardId, { amount: 300 }, client), authorize(t, creditCardId, { amount: 700 }, client)]);
    expect([debitAuth.responseCode, creditAuth.responseCode]).toEqual(['00', '00']);
    expect(await balances(t, debit.walletId, client)).toMatchObject({ AVAILABLE: '700.00', RESERVED: '300.00' });
    expect((await lineOf(t, line.lineId, client)).outstanding).toMatchObject({ principal: '0.00', pendingHolds: '700.00' });
    // The credit card's wallet does not move: a credit hold is not a wallet reserve.
    expect(await balanceOf(t, line.wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '0.00', RESERVED: '0.00' });
    await Promise.all([onParent(t, debitAuth.parentCardTransactionId, 'completions', { amount: 250 }, client), onParent(t, creditAuth.parentCardTransactionId, 'completions', { amount: 650 }, client)]);
    expect(await balances(t, debit.walletId, client)).toMatchObject({ AVAILABLE: '750.00', RESERVED: '0.00' });
    expect((await lineOf(t, line.lineId, client)).outstanding).toMatchObject({ principal: '650.00', pendingHolds: '0.00', total: '650.00' });
    expect(await systemAccountBalance(t.deps.db, client.id, 'CREDIT_LENDING', 'USD')).toBe(-65_000n);
    const [debitSecond, creditSecond] = await Promise.all([authorize(t, debit.cardId, { amount: 100 }, client), authorize(t, creditCardId, { amount: 200 }, client)]);
    await Promise.all([onParent(t, debitSecond.parentCardTransactionId, 'reversals', {}, client), onParent(t, creditSecond.parentCardTransactionId, 'reversals', {}, client)]);
    expect(await balances(t, debit.walletId, client)).toMatchObject({ AVAILABLE: '750.00', RESERVED: '0.00' });
    expect((await lineOf(t, line.lineId, client)).outstanding).toMatchObject({ principal: '650.00', pendingHolds: '0.00', total: '650.00' });
    // A decline on one type says nothing about the other: the credit card above its available credit (51), the debit card still approved.
    const [debitThird, creditThird] = await Promise.all([authorize(t, debit.cardId, { amount: 700 }, client), authorize(t, creditCardId, { amount: 1400 }, client)]);
    expect([debitThird.responseCode, creditThird.responseCode]).toEqual(['00', '51']);
    expect(await systemAccountBalance(t.deps.db, client.id, 'CREDIT_LENDING', 'USD')).toBe(-65_000n);
    await expectLedgerClean(t);
  });
});

describe('concurrent authorizations on one credit card never draw more than the available credit', () => {
  it('30 concurrent authorizations of 100.00 on a line with 1,000.00 available: exactly 10 approved, 20 declined 51', async () => {
    const client = await t.newClient('credit race');
    const line = await openLine(t, { client, creditLimit: '1000.00' });
    const cardId = await creditCard(t, line, client);
    const results = await Promise.all(Array.from({ length: 30 }, () => authorize(t, cardId, { amount: 100 }, client)));
    expect(results.filter((result) => result.responseCode === '00')).toHaveLength(10);
    expect(results.filter((result) => result.responseCode === '51')).toHaveLength(20);
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ availableCredit: '0.00', outstanding: { pendingHolds: '1000.00', total: '1000.00' } });
  });

  it('concurrent authorizations of mixed amounts after a completion: the approved sum never exceeds what was available', async () => {
    const { client, line, cardId } = await spentLine([600], '1000.00');
    const amounts = [50, 120, 75, 200, 33, 90, 150, 60, 10, 400];
    const results = await Promise.all(amounts.map((amount) => authorize(t, cardId, { amount }, client)));
    const approved = amounts.filter((_, i) => results[i].responseCode === '00').reduce((sum, amount) => sum + amount, 0);
    expect(approved).toBeLessThanOrEqual(400);
    expect(results.every((result) => result.responseCode === '00' || result.responseCode === '51')).toBe(true);
    const view = await lineOf(t, line.lineId, client);
    expect(view.outstanding.pendingHolds).toBe(`${approved}.00`);
    // Nothing declined could have fitted: each declined amount is above what was left at the end.
    const left = 400 - approved;
    for (const [i, amount] of amounts.entries()) if (results[i].responseCode === '51') expect(amount).toBeGreaterThan(left);
  });
});

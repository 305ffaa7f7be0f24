import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { expectLedgerClean } from '../../../test/bank/fixtures.js';
import { authorize, onParent } from '../../../test/cards/card-network.js';
import { creditCard, lineOf, ltvEventsOf, openLine, repay, setPrice } from '../../../test/credit/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('smoke', () => {
  it('opens a line, spends on a credit card, walks the price down through every level to a liquidation', async () => {
    const line = await openLine(t, { usd: 500_000n });
    const opened = await lineOf(t, line.lineId);
    expect(opened).toMatchObject({ status: 'ACTIVE', ltv: '0.0000', ltvLevel: 'HEALTHY', collateral: { amount: '1.00000000', price: '60000.00', value: '60000.00' } });
    const cardId = await creditCard(t, line);
    const auth = await authorize(t, cardId, { amount: 5000 });
    expect(auth.responseCode).toBe('00');
    expect((await lineOf(t, line.lineId)).outstanding).toMatchObject({ pendingHolds: '5000.00', total: '5000.00' });
    await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 5000 });
    const second = await authorize(t, cardId, { amount: 4000 });
    await onParent(t, second.parentCardTransactionId, 'completions', { amount: 4000 });
    expect((await lineOf(t, line.lineId)).outstanding).toMatchObject({ principal: '9000.00', pendingHolds: '0.00' });
    await setPrice(t, 'BTC-USD', '14000.00');
    expect((await ltvEventsOf(t, line.lineId)).map((e) => e.type)).toEqual(['LTV_THRESHOLD_WARNING']);
    await setPrice(t, 'BTC-USD', '13500.00');
    const events = await ltvEventsOf(t, line.lineId);
    expect(events.map((e) => e.type)).toEqual(['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED']);
    const declined = await authorize(t, cardId, { amount: 1 });
    expect(declined).toMatchObject({ responseCode: '57' });
    await setPrice(t, 'BTC-USD', '10000.00');
    const after = await ltvEventsOf(t, line.lineId);
    expect(after.map((e) => e.type)).toEqual(['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED', 'LTV_COLLATERAL_NEEDED', 'LTV_URGENT_COLLATERAL_NEEDED', 'LTV_LIQUIDATION_WARNING', 'LTV_LIQUIDATED']);
    const liquidated = await lineOf(t, line.lineId);
    console.log(JSON.stringify(liquidated, null, 1), JSON.stringify(after.at(-1).data, null, 1));
    expect(liquidated.ltv <= '0.5000').toBe(true);
    await repay(t, line, '100.00');
    await expectLedgerClean(t);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { expectLedgerClean } from '../../../test/bank/fixtures.js';
import { authorize, onParent } from '../../../test/cards/card-network.js';
import { creditCard, lineOf, openLine, setPrice } from '../../../test/credit/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('credit lines in the sandbox state tools', () => {
  it('a snapshot brings a line, its card and its figures back; a reset removes them and the ledger stays clean', async () => {
    const line = await openLine(t);
    const cardId = await creditCard(t, line);
    const spent = await authorize(t, cardId, { amount: 4000 });
    await onParent(t, spent.parentCardTransactionId, 'completions', { amount: 4000 });
    const before = await lineOf(t, line.lineId);
    expect(before.outstanding.principal).toBe('4000.00');

    const snapshot = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: t.clientA.key, body: { name: 'with a credit line' } });
    expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(201);
    await setPrice(t, 'BTC-USD', '4500.00'); // 4000 / 4500 = 0.8889: liquidated
    expect((await lineOf(t, line.lineId)).collateral.amount).not.toBe('1.00000000');

    const restored = await t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${snapshot.body.data.id as string}/restore`, key: t.clientA.key, body: {} });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    const after = await lineOf(t, line.lineId);
    expect({ ...after, collateral: { ...after.collateral, price: null, value: null }, updatedAt: null, lastLtvEventAt: null }).toEqual({
      ...before,
      collateral: { ...before.collateral, price: null, value: null },
      updatedAt: null,
      lastLtvEventAt: null,
    });
    await expectLedgerClean(t);

    const reset = await t.request({ method: 'POST', url: '/v1/sandbox/reset', key: t.clientA.key, body: { confirm: 'RESET' } });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect((await t.request({ url: `/v1/credit-lines/${line.lineId}`, key: t.clientA.key })).status).toBe(404);
    expect((await t.request({ url: `/v1/cards/${cardId}`, key: t.clientA.key })).status).toBe(404);
    await expectLedgerClean(t);
  });
});

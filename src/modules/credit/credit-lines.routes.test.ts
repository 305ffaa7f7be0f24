/* eslint-disable @typescript-eslint/no-explicit-any */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext, type TestResponse } from '../../../test/harness.js';
import { balanceOf, expectLedgerClean, linkedWallet } from '../../../test/bank/fixtures.js';
import { authorize, cardEventsOf, onParent, send } from '../../../test/cards/card-network.js';
import { cardPrograms } from '../../../test/cards/fixtures.js';
import { createIndividual } from '../../../test/customers/fixtures.js';
import { fundWallet } from '../../../test/ledger/fixtures.js';
import { accrueOneDay } from './ltv.js';
import { advanceClock, creditCard, lineOf, ltvEventsOf, openLine, repay, setPrice, spend, type OpenLine } from '../../../test/credit/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const defaultThresholds = {
  opening: '0.5000',
  warning: '0.6000',
  purchaseRestricted: '0.6500',
  collateralNeeded: '0.7000',
  urgentCollateralNeeded: '0.7500',
  liquidationWarning: '0.8000',
  liquidation: '0.8333',
};

function expectError(response: TestResponse, status: number, code: string, field?: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.code).toBe(code);
  if (field !== undefined) expect(response.body.details?.map((detail: { field: string }) => detail.field)).toContain(field);
}

function post(url: string, body: unknown, client: TestClient = t.clientA): Promise<TestResponse> {
  return t.request({ method: 'POST', url, key: client.key, body });
}

function lineBody(customerId: string, walletId: string, overrides: Record<string, unknown> = {}) {
  return { customerId, collateralWalletId: walletId, collateralAsset: 'BTC', currency: 'USD', creditLimit: '15000.00', ...overrides };
}

/** The decline reason recorded on the authorization of a card transaction. */
async function declineReasonOf(parentCardTransactionId: string, client: TestClient): Promise<string | null> {
  const response = await t.request({ url: `/v1/cards/transactions/${parentCardTransactionId}`, key: client.key });
  expect(response.status).toBe(200);
  return response.body.data.declineReason;
}

/** The client's events of one type, oldest first. */
async function eventsOfType(type: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: `/v1/events?type=${type}&limit=200`, key: client.key });
  expect(response.status).toBe(200);
  return (response.body.data as any[]).reverse();
}

describe('end to end', () => {
  it('opens a line, spends on a credit card, walks the price down through every level to a liquidation, then repays', async () => {
    // A client of its own: the price changes below are per client.
    const client = await t.newClient('end to end');
    const line = await openLine(t, { usd: 500_000n, client });
    expect(await lineOf(t, line.lineId, client)).toMatchObject({
      status: 'ACTIVE',
      ltv: '0.0000',
      ltvLevel: 'HEALTHY',
      collateral: { asset: 'BTC', amount: '1.00000000', price: '60000.00', value: '60000.00' },
    });
    const cardId = await creditCard(t, line, client);
    const auth = await authorize(t, cardId, { amount: 5000 }, client);
    expect(auth.responseCode).toBe('00');
    expect((await lineOf(t, line.lineId, client)).outstanding).toMatchObject({ pendingHolds: '5000.00', total: '5000.00' });
    await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 5000 }, client);
    await spend(t, cardId, 4000, client);
    expect((await lineOf(t, line.lineId, client)).outstanding).toMatchObject({ principal: '9000.00', pendingHolds: '0.00', total: '9000.00' });

    await setPrice(t, 'BTC-USD', '14000.00', client); // 9000 / 14000 = 0.6428
    expect((await ltvEventsOf(t, line.lineId, client)).map((event) => event.type)).toEqual(['LTV_THRESHOLD_WARNING']);
    await setPrice(t, 'BTC-USD', '13500.00', client); // 0.6666
    expect((await ltvEventsOf(t, line.lineId, client)).map((event) => event.type)).toEqual(['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED']);
    expect(await authorize(t, cardId, { amount: 1 }, client)).toMatchObject({ responseCode: '57' });

    await setPrice(t, 'BTC-USD', '10000.00', client); // 0.90: every level at once, and the sale
    const events = await ltvEventsOf(t, line.lineId, client);
    expect(events.map((event) => event.type)).toEqual([
      'LTV_THRESHOLD_WARNING',
      'LTV_PURCHASE_RESTRICTED',
      'LTV_COLLATERAL_NEEDED',
      'LTV_URGENT_COLLATERAL_NEEDED',
      'LTV_LIQUIDATION_WARNING',
      'LTV_LIQUIDATED',
    ]);
    const liquidated = events.at(-1);
    expect(liquidated.data).toMatchObject({ creditLineId: line.lineId, ltv: '0.9000', thresholdLtv: '0.8333', collateralValue: '10000.00', outstanding: '9000.00', price: '10000.00' });
    // 0.8333 BTC taken (2 % of it the penalty), 8166.67 fetched, all of it repaying principal.
    expect(liquidated.data.principalRepaid).toBe(liquidated.data.proceeds);
    const after = await lineOf(t, line.lineId, client);
    expect(Number(after.ltv)).toBeLessThanOrEqual(0.5);
    expect(after.outstanding.principal).toBe((9000 - Number(liquidated.data.proceeds)).toFixed(2));
    expect(after.ltvLevel).toBe('HEALTHY');
    expect(after.status).toBe('ACTIVE');

    const paid = await repay(t, line, '100.00', client);
    expect(paid.payment).toEqual({ parentTransactionId: expect.any(String), interestPaid: '0.00', principalPaid: '100.00' });
    await expectLedgerClean(t);
  });
});

describe('POST /v1/credit-lines', () => {
  describe('201 created', () => {
    it('answers the whole line, PENDING_COLLATERAL, with the client\'s ladder and no LTV', async () => {
      const wallet = await linkedWallet(t);
      const response = await post('/v1/credit-lines', lineBody(wallet.customerId, wallet.walletId, { apr: '0.1250' }));
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body.data).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        customerId: wallet.customerId,
        collateralWalletId: wallet.walletId,
        collateralAsset: 'BTC',
        currency: 'USD',
        creditLimit: '15000.00',
        apr: '0.1250',
        status: 'PENDING_COLLATERAL',
        collateral: { asset: 'BTC', amount: '0.00000000', price: '60000.00', value: '0.00' },
        outstanding: { principal: '0.00', interest: '0.00', pendingHolds: '0.00', total: '0.00' },
        availableCredit: '15000.00',
        refundExcessPaidOut: '0.00',
        ltv: '0.0000',
        ltvLevel: 'HEALTHY',
        thresholds: defaultThresholds,
        liquidationPenaltyRate: '0.0200',
        lastLtvEventAt: null,
        createdAt: t.clock.now().toISOString(),
        updatedAt: t.clock.now().toISOString(),
      });
      expect(await lineOf(t, response.body.data.id)).toEqual(response.body.data);
    });

    it('apr defaults to 0 and an ETH line is valued at the ETH price', async () => {
      const wallet = await linkedWallet(t);
      const response = await post('/v1/credit-lines', lineBody(wallet.customerId, wallet.walletId, { collateralAsset: 'ETH', creditLimit: '100' }));
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body.data).toMatchObject({ apr: '0.0000', collateralAsset: 'ETH', creditLimit: '100.00', collateral: { asset: 'ETH', value: '0.00' } });
    });
  });

  describe('400 validation', () => {
    let wallet: Awaited<ReturnType<typeof linkedWallet>>;
    beforeAll(async () => {
      wallet = await linkedWallet(t);
    });
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['creditLimit as a JSON number', { creditLimit: 15000 }, 'VALIDATION_ERROR', 'creditLimit'],
      ['creditLimit with three decimals', { creditLimit: '100.001' }, 'INVALID_AMOUNT', 'creditLimit'],
      ['creditLimit not a decimal', { creditLimit: '1e4' }, 'INVALID_AMOUNT', 'creditLimit'],
      ['creditLimit zero', { creditLimit: '0.00' }, 'INVALID_AMOUNT', 'creditLimit'],
      ['apr above 1', { apr: '1.5' }, 'VALIDATION_ERROR', 'apr'],
      ['apr with five decimals', { apr: '0.12345' }, 'VALIDATION_ERROR', 'apr'],
      ['apr negative', { apr: '-0.1' }, 'VALIDATION_ERROR', 'apr'],
      ['an unknown field', { overdraft: true }, 'VALIDATION_ERROR', 'overdraft'],
      ['collateralAsset USDC', { collateralAsset: 'USDC' }, 'VALIDATION_ERROR', 'collateralAsset'],
      ['currency EUR', { currency: 'EUR' }, 'VALIDATION_ERROR', 'currency'],
    ];
    for (const [name, overrides, code, field] of cases) {
      it(`${name}: 400 ${code} naming ${field}, nothing stored`, async () => {
        const response = await post('/v1/credit-lines', lineBody(wallet.customerId, wallet.walletId, overrides));
        expectError(response, 400, code, field);
        const list = await t.request({ url: `/v1/credit-lines?customerId=${wallet.customerId}` });
        expect(list.body.data).toEqual([]);
      });
    }

    it('a missing customerId names it', async () => {
      const { customerId: _omit, ...body } = lineBody(wallet.customerId, wallet.walletId);
      expectError(await post('/v1/credit-lines', body), 400, 'VALIDATION_ERROR', 'customerId');
    });
  });

  describe('404', () => {
    it('an unknown customer names customerId', async () => {
      const wallet = await linkedWallet(t);
      expectError(await post('/v1/credit-lines', lineBody(crypto.randomUUID(), wallet.walletId)), 404, 'NOT_FOUND', 'customerId');
    });

    it('a wallet of another customer names collateralWalletId', async () => {
      const mine = await linkedWallet(t);
      const theirs = await linkedWallet(t);
      expectError(await post('/v1/credit-lines', lineBody(mine.customerId, theirs.walletId)), 404, 'NOT_FOUND', 'collateralWalletId');
    });
  });

  describe('409', () => {
    it('KYC_NOT_APPROVED for a customer not yet approved', async () => {
      const customer = await createIndividual(t);
      const wallets = await t.request({ url: `/v1/wallets?customerId=${customer.id as string}` });
      const response = await post('/v1/credit-lines', lineBody(customer.id, wallets.body.data[0].id));
      expectError(response, 409, 'KYC_NOT_APPROVED');
    });
  });
});

describe('GET /v1/credit-lines and /v1/credit-lines/:id', () => {
  it('filters by customerId and status, newest first, and pages', async () => {
    const client = await t.newClient('lists');
    const first = await openLine(t, { client, lock: null });
    const second = await openLine(t, { client });
    const third = await openLine(t, { client });

    const all = await t.request({ url: '/v1/credit-lines', key: client.key });
    expect(all.status).toBe(200);
    expect(all.body.data.map((line: any) => line.id)).toEqual([third.lineId, second.lineId, first.lineId]);
    expect(all.body.pagination).toMatchObject({ totalResults: 3, hasMoreResults: false });

    const byCustomer = await t.request({ url: `/v1/credit-lines?customerId=${second.wallet.customerId}`, key: client.key });
    expect(byCustomer.body.data.map((line: any) => line.id)).toEqual([second.lineId]);
    const unknownCustomer = await t.request({ url: `/v1/credit-lines?customerId=${crypto.randomUUID()}`, key: client.key });
    expect(unknownCustomer.status).toBe(404);
    expect(unknownCustomer.body).toMatchObject({ code: 'NOT_FOUND', details: [{ field: 'customerId' }] });

    const pending = await t.request({ url: '/v1/credit-lines?status=PENDING_COLLATERAL', key: client.key });
    expect(pending.body.data.map((line: any) => line.id)).toEqual([first.lineId]);
    const active = await t.request({ url: '/v1/credit-lines?status=ACTIVE', key: client.key });
    expect(active.body.data.map((line: any) => line.id)).toEqual([third.lineId, second.lineId]);
    expect(active.body.data[0]).toMatchObject({ status: 'ACTIVE', collateral: { amount: '1.00000000', value: '60000.00' } });

    const page1 = await t.request({ url: '/v1/credit-lines?limit=2', key: client.key });
    expect(page1.body.data.map((line: any) => line.id)).toEqual([third.lineId, second.lineId]);
    expect(page1.body.pagination).toMatchObject({ totalResults: 3, hasMoreResults: true });
    const page2 = await t.request({ url: `/v1/credit-lines?limit=2&startAfterId=${page1.body.pagination.nextStartAfterId as string}`, key: client.key });
    expect(page2.body.data.map((line: any) => line.id)).toEqual([first.lineId]);
    expect(page2.body.pagination.hasMoreResults).toBe(false);
  });

  it('400 for an unknown status and an unknown query parameter', async () => {
    expectError(await t.request({ url: '/v1/credit-lines?status=OPEN' }), 400, 'VALIDATION_ERROR', 'status');
    expectError(await t.request({ url: '/v1/credit-lines?asset=BTC' }), 400, 'VALIDATION_ERROR', 'asset');
  });

  it('GET one: 200 with the line, 404 for an unknown id', async () => {
    const line = await openLine(t);
    const response = await t.request({ url: `/v1/credit-lines/${line.lineId}` });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: line.lineId, customerId: line.wallet.customerId, status: 'ACTIVE', availableCredit: '15000.00' });
    expectError(await t.request({ url: `/v1/credit-lines/${crypto.randomUUID()}` }), 404, 'NOT_FOUND');
  });
});

describe('POST /v1/credit-lines/:id/collateral', () => {
  describe('200 locked', () => {
    it('activates exactly when value × 0.50 reaches the limit, and stays PENDING one satoshi short', async () => {
      const line = await openLine(t, { lock: null });
      const short = await post(`/v1/credit-lines/${line.lineId}/collateral`, { amount: '0.49999999' });
      expect(short.status, JSON.stringify(short.body)).toBe(200);
      expect(short.body.data).toMatchObject({ status: 'PENDING_COLLATERAL', collateral: { amount: '0.49999999', value: '29999.99' } });
      // 0.5 BTC × 60,000.00 × 0.50 = 15,000.00, the limit.
      const exact = await post(`/v1/credit-lines/${line.lineId}/collateral`, { amount: '0.00000001' });
      expect(exact.status).toBe(200);
      expect(exact.body.data).toMatchObject({ status: 'ACTIVE', collateral: { amount: '0.50000000', value: '30000.00' }, ltv: '0.0000' });
      expect(await balanceOf(t, line.wallet.walletId, 'BTC')).toMatchObject({ AVAILABLE: '0.50000000', RESERVED: '0.50000000' });
      const records = await t.request({ url: `/v1/transactions?walletId=${line.wallet.walletId}&type=COLLATERAL_LOCK_SUCCESS` });
      expect(records.body.data).toHaveLength(2);
      await expectLedgerClean(t);
    });
  });

  describe('400 validation', () => {
    it('an amount with nine decimals for BTC names amount', async () => {
      const line = await openLine(t, { lock: null });
      expectError(await post(`/v1/credit-lines/${line.lineId}/collateral`, { amount: '0.000000001' }), 400, 'INVALID_AMOUNT', 'amount');
      expectError(await post(`/v1/credit-lines/${line.lineId}/collateral`, { amount: 1 }), 400, 'VALIDATION_ERROR', 'amount');
    });
  });

  describe('404', () => {
    it('an unknown line', async () => {
      expectError(await post(`/v1/credit-lines/${crypto.randomUUID()}/collateral`, { amount: '0.1' }), 404, 'NOT_FOUND');
    });
  });

  describe('422 INSUFFICIENT_FUNDS', () => {
    it('more than the wallet holds: nothing locked', async () => {
      const line = await openLine(t, { lock: '0.5', collateral: 60_000_000n });
      expectError(await post(`/v1/credit-lines/${line.lineId}/collateral`, { amount: '0.10000001' }), 422, 'INSUFFICIENT_FUNDS');
      expect((await lineOf(t, line.lineId)).collateral.amount).toBe('0.50000000');
      expect(await balanceOf(t, line.wallet.walletId, 'BTC')).toMatchObject({ AVAILABLE: '0.10000000', RESERVED: '0.50000000' });
      await expectLedgerClean(t);
    });
  });
});

describe('POST /v1/credit-lines/:id/collateral/release', () => {
  describe('200 released', () => {
    it('gives collateral back to AVAILABLE, down to exactly the opening LTV; the line no longer covered lends nothing more (RESTRICTED)', async () => {
      const client = await t.newClient('release');
      const line = await openLine(t, { client });
      const cardId = await creditCard(t, line, client);
      await spend(t, cardId, 5000, client);
      await setPrice(t, 'BTC-USD', '50000.00', client);
      // 5,000.00 owed: 0.2 BTC at 50,000.00 is exactly 0.50.
      const response = await post(`/v1/credit-lines/${line.lineId}/collateral/release`, { amount: '0.8' }, client);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      // 10,000.00 of collateral at 0.50 covers 5,000.00, not the 15,000.00 limit.
      expect(response.body.data).toMatchObject({ status: 'RESTRICTED', ltv: '0.5000', collateral: { amount: '0.20000000', value: '10000.00' } });
      expect((await authorize(t, cardId, { amount: 1 }, client)).responseCode).toBe('57');
      expect(await balanceOf(t, line.wallet.walletId, 'BTC', client)).toMatchObject({ AVAILABLE: '0.80000000', RESERVED: '0.20000000' });
      const records = await t.request({ url: `/v1/transactions?walletId=${line.wallet.walletId}&type=COLLATERAL_RELEASE`, key: client.key });
      expect(records.body.data).toHaveLength(1);
      await expectLedgerClean(t);
    });

    it('what stays locked still covers the limit at the opening LTV: the line stays ACTIVE', async () => {
      const client = await t.newClient('release covered');
      const line = await openLine(t, { client });
      // 1 BTC at 60,000.00; 0.5 BTC × 60,000.00 × 0.50 = 15,000.00, the limit exactly.
      const response = await post(`/v1/credit-lines/${line.lineId}/collateral/release`, { amount: '0.5' }, client);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.data).toMatchObject({ status: 'ACTIVE', collateral: { amount: '0.50000000' } });
    });

    it('at no debt down to one satoshi: RESTRICTED (nothing lent against it) until collateral or the price covers the limit again', async () => {
      const client = await t.newClient('release to a satoshi');
      const line = await openLine(t, { client });
      const cardId = await creditCard(t, line, client);
      const response = await post(`/v1/credit-lines/${line.lineId}/collateral/release`, { amount: '0.99999999' }, client);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.data).toMatchObject({ status: 'RESTRICTED', collateral: { amount: '0.00000001' } });
      const declined = await authorize(t, cardId, { amount: 5000 }, client);
      expect(declined.responseCode).toBe('57');
      expect(await declineReasonOf(declined.parentCardTransactionId, client)).toBe('LTV_PURCHASE_RESTRICTED');
      // Locked back up to 0.49999999 BTC: still short of the limit by a satoshi's worth.
      expect((await post(`/v1/credit-lines/${line.lineId}/collateral`, { amount: '0.49999998' }, client)).body.data.status).toBe('RESTRICTED');
      expect((await post(`/v1/credit-lines/${line.lineId}/collateral`, { amount: '0.00000001' }, client)).body.data.status).toBe('ACTIVE');
      expect((await authorize(t, cardId, { amount: 5000 }, client)).responseCode).toBe('00');

      // Released again below the cover, then a price rise covers it.
      const other = await openLine(t, { client });
      expect((await post(`/v1/credit-lines/${other.lineId}/collateral/release`, { amount: '0.75' }, client)).body.data.status).toBe('RESTRICTED');
      await setPrice(t, 'BTC-USD', '120000.00', client);
      expect(await lineOf(t, other.lineId, client)).toMatchObject({ status: 'ACTIVE', collateral: { amount: '0.25000000' } });
      await expectLedgerClean(t);
    });
  });

  describe('422', () => {
    it('INSUFFICIENT_FUNDS beyond what is locked (and on a line with nothing locked)', async () => {
      const line = await openLine(t, { lock: '0.5' });
      expectError(await post(`/v1/credit-lines/${line.lineId}/collateral/release`, { amount: '0.50000001' }), 422, 'INSUFFICIENT_FUNDS', 'amount');
      const empty = await openLine(t, { lock: null });
      expectError(await post(`/v1/credit-lines/${empty.lineId}/collateral/release`, { amount: '0.00000001' }), 422, 'INSUFFICIENT_FUNDS', 'amount');
      expect((await lineOf(t, line.lineId)).collateral.amount).toBe('0.50000000');
    });

    it('LTV_TOO_HIGH one satoshi past the opening LTV: nothing released', async () => {
      const client = await t.newClient('release refused');
      const line = await openLine(t, { client });
      const cardId = await creditCard(t, line, client);
      await spend(t, cardId, 5000, client);
      await setPrice(t, 'BTC-USD', '50000.00', client);
      const response = await post(`/v1/credit-lines/${line.lineId}/collateral/release`, { amount: '0.80000001' }, client);
      expectError(response, 422, 'LTV_TOO_HIGH', 'amount');
      // The LTV after, 0.50000002…, is written rounded up: rounded down it read "0.5000, above the opening LTV 0.5000".
      expect(response.body.message).toBe('Releasing 0.80000001 BTC would take the LTV to 0.5001, above the opening LTV 0.5000.');
      expect(await balanceOf(t, line.wallet.walletId, 'BTC', client)).toMatchObject({ AVAILABLE: '0.00000000', RESERVED: '1.00000000' });
      await expectLedgerClean(t);
    });

    it('a restriction cannot be released out of, but locking more lifts it, re-arms the levels and returns ACTIVE', async () => {
      const client = await t.newClient('restriction');
      const line = await openLine(t, { client, collateral: 200_000_000n });
      const cardId = await creditCard(t, line, client);
      await spend(t, cardId, 5000, client);
      await spend(t, cardId, 4000, client);
      await setPrice(t, 'BTC-USD', '13500.00', client); // 9,000 / 13,500 = 0.6666
      expect(await lineOf(t, line.lineId, client)).toMatchObject({ status: 'RESTRICTED', ltvLevel: 'PURCHASE_RESTRICTED', ltv: '0.6666' });
      const declined = await authorize(t, cardId, { amount: 1 }, client);
      expect(declined.responseCode).toBe('57');
      expect(await declineReasonOf(declined.parentCardTransactionId, client)).toBe('LTV_PURCHASE_RESTRICTED');

      expectError(await post(`/v1/credit-lines/${line.lineId}/collateral/release`, { amount: '0.00000001' }, client), 422, 'LTV_TOO_HIGH', 'amount');
      expect((await lineOf(t, line.lineId, client)).status).toBe('RESTRICTED');

      const locked = await post(`/v1/credit-lines/${line.lineId}/collateral`, { amount: '1' }, client);
      expect(locked.status, JSON.stringify(locked.body)).toBe(200);
      expect(locked.body.data).toMatchObject({ status: 'ACTIVE', ltvLevel: 'HEALTHY', ltv: '0.3333', collateral: { amount: '2.00000000', value: '27000.00' } });
      expect(await authorize(t, cardId, { amount: 1 }, client)).toMatchObject({ responseCode: '00' });

      // Re-armed: a fall to 7,000.00 (9,001 / 14,000 = 0.6429) fires the warning a second time.
      await setPrice(t, 'BTC-USD', '7000.00', client);
      const events = await ltvEventsOf(t, line.lineId, client);
      expect(events.map((event) => event.type)).toEqual(['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED', 'LTV_THRESHOLD_WARNING']);
      expect(await lineOf(t, line.lineId, client)).toMatchObject({ status: 'ACTIVE', ltvLevel: 'THRESHOLD_WARNING' });
      await expectLedgerClean(t);
    });
  });
});

/** A line of a fresh client (its own clock) with `principal` USD spent on its card. */
/** The client's interest timers (of either kind), oldest first. */
async function interestTimersOf(client: TestClient): Promise<{ kind: string; subjectId: string; dueAt: string }[]> {
  const rows = await t.deps.db.selectFrom('timers').select(['kind', 'subject_id', 'due_at']).where('client_id', '=', client.id).where('kind', 'like', 'credit%').orderBy('due_at').execute();
  return rows.map((row) => ({ kind: row.kind, subjectId: row.subject_id, dueAt: new Date(row.due_at).toISOString() }));
}

/** A new client's line (with its options) owing `principal`, spent with the line's credit card. */
async function owingLine(principal: number, options: { apr?: string; usd?: bigint; creditLimit?: string } = {}): Promise<{ client: TestClient; line: OpenLine; cardId: string }> {
  const client = await t.newClient('owing');
  const line = await openLine(t, { client, ...options });
  const cardId = await creditCard(t, line, client);
  if (principal > 0) await spend(t, cardId, principal, client);
  return { client, line, cardId };
}

describe('POST /v1/credit-lines/:id/payments', () => {
  describe('201 applied', () => {
    it('pays interest first, then principal, from the wallet, under one parent transaction', async () => {
      const { client, line } = await owingLine(1000, { apr: '0.3650', usd: 100_000n });
      await advanceClock(t, 86_400, client);
      expect((await lineOf(t, line.lineId, client)).outstanding).toMatchObject({ principal: '1000.00', interest: '1.00', total: '1001.00' });

      const response = await post(`/v1/credit-lines/${line.lineId}/payments`, { walletId: line.wallet.walletId, amount: '1.50' }, client);
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      const data = response.body.data;
      expect(data.payment).toEqual({ parentTransactionId: expect.any(String), interestPaid: '1.00', principalPaid: '0.50' });
      expect(data.outstanding).toEqual({ principal: '999.50', interest: '0.00', pendingHolds: '0.00', total: '999.50' });
      expect(data.availableCredit).toBe('14000.50');
      expect(await balanceOf(t, line.wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '998.50' });

      const records = await t.request({ url: `/v1/transactions?parentTransactionId=${data.payment.parentTransactionId as string}`, key: client.key });
      expect(records.status).toBe(200);
      expect(records.body.data.map((record: any) => [record.amount, record.purpose, record.walletId, record.asset]).sort()).toEqual([
        ['0.50', 'CREDIT_LINE_PAYMENT', line.wallet.walletId, 'USD'],
        ['1.00', 'CREDIT_LINE_PAYMENT', line.wallet.walletId, 'USD'],
      ]);

      await expectLedgerClean(t);
    });

    it('less than the interest pays interest only', async () => {
      const { client, line } = await owingLine(1000, { apr: '0.3650', usd: 100_000n });
      await advanceClock(t, 86_400, client);
      const interestOnly = await repay(t, line, '0.40', client);
      expect(interestOnly.payment).toMatchObject({ interestPaid: '0.40', principalPaid: '0.00' });
      expect(interestOnly.outstanding).toMatchObject({ principal: '1000.00', interest: '0.60', total: '1000.60' });
      const both = await repay(t, line, '1.10', client);
      expect(both.payment).toMatchObject({ interestPaid: '0.60', principalPaid: '0.50' });
      expect(both.outstanding).toMatchObject({ principal: '999.50', interest: '0.00' });
      await expectLedgerClean(t);
    });
  });

  describe('404', () => {
    it('a wallet of another customer names walletId', async () => {
      const { client, line } = await owingLine(50);
      const other = await linkedWallet(t, client);
      await fundWallet(t, client.id, other.walletId, 10_000n, 'USD');
      expectError(await post(`/v1/credit-lines/${line.lineId}/payments`, { walletId: other.walletId, amount: '10.00' }, client), 404, 'NOT_FOUND', 'walletId');
      expect((await lineOf(t, line.lineId, client)).outstanding.principal).toBe('50.00');
    });

    it('a line that does not exist answers 404 before the amount is read (a bad amount too)', async () => {
      const response = await post('/v1/credit-lines/0190f1f2-0000-7000-8000-000000000000/payments', { walletId: '0190f1f2-0000-7000-8000-000000000001', amount: '1.001' });
      expect(response.status, JSON.stringify(response.body)).toBe(404);
    });
  });

  describe('422', () => {
    it('AMOUNT_EXCEEDS_OUTSTANDING one cent above principal + interest (open holds are not owed)', async () => {
      const { client, line, cardId } = await owingLine(50, { usd: 100_000n });
      await authorize(t, cardId, { amount: 20 }, client);
      expectError(await post(`/v1/credit-lines/${line.lineId}/payments`, { walletId: line.wallet.walletId, amount: '50.01' }, client), 422, 'AMOUNT_EXCEEDS_OUTSTANDING', 'amount');
      const exact = await repay(t, line, '50.00', client);
      expect(exact.outstanding).toMatchObject({ principal: '0.00', pendingHolds: '20.00' });
      expectError(await post(`/v1/credit-lines/${line.lineId}/payments`, { walletId: line.wallet.walletId, amount: '0.01' }, client), 422, 'AMOUNT_EXCEEDS_OUTSTANDING', 'amount');
      await expectLedgerClean(t);
    });

    it('INSUFFICIENT_FUNDS when the wallet has less USD: nothing moves', async () => {
      const { client, line } = await owingLine(50, { usd: 1_000n });
      expectError(await post(`/v1/credit-lines/${line.lineId}/payments`, { walletId: line.wallet.walletId, amount: '10.01' }, client), 422, 'INSUFFICIENT_FUNDS');
      expect((await lineOf(t, line.lineId, client)).outstanding.principal).toBe('50.00');
      expect(await balanceOf(t, line.wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '10.00' });
      await expectLedgerClean(t);
    });
  });

  describe('400 validation', () => {
    it('an amount with three decimals names amount', async () => {
      const { client, line } = await owingLine(0);
      expectError(await post(`/v1/credit-lines/${line.lineId}/payments`, { walletId: line.wallet.walletId, amount: '1.001' }, client), 400, 'INVALID_AMOUNT', 'amount');
    });
  });
});

describe('interest accrual', () => {
  it('apr 0.3650 on 1,000.00 is exactly 1.00 a day, once the clock passes UTC midnight', async () => {
    const { client, line } = await owingLine(1000, { apr: '0.3650' });
    // The clock starts at 12:00 UTC: eleven hours is not yet midnight.
    await advanceClock(t, 11 * 3600, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('0.00');
    await advanceClock(t, 13 * 3600, client);
    expect((await lineOf(t, line.lineId, client)).outstanding).toMatchObject({ principal: '1000.00', interest: '1.00', total: '1001.00' });
    await advanceClock(t, 3 * 86_400, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('4.00');
    await expectLedgerClean(t);
  });

  it('carries fractions of a cent: 5.00 at 0.3650 accrues half a cent a day', async () => {
    const { client, line } = await owingLine(5, { apr: '0.3650' });
    await advanceClock(t, 86_400, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('0.00');
    await advanceClock(t, 86_400, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('0.01');
    await advanceClock(t, 5 * 86_400, client);
    // Seven days: 3.5 cents, 3 of them accrued.
    expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('0.03');
  });

  it('a second midnight in a later advance accrues a second day (the timer re-arms itself)', async () => {
    const { client, line } = await owingLine(1000, { apr: '0.3650' });
    await advanceClock(t, 86_400, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('1.00');
    expect(await interestTimersOf(client)).toEqual([{ kind: 'credit.interest', subjectId: client.id, dueAt: '2026-03-03T00:00:00.000Z' }]);
    await advanceClock(t, 86_400, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('2.00');
  });

  it('a line at apr 0 accrues nothing', async () => {
    const { client, line } = await owingLine(1000);
    await advanceClock(t, 3 * 86_400, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('0.00');
    expect(await interestTimersOf(client)).toEqual([]);
  });

  it('one timer per client: its lines (BTC and ETH collateral, other rates) accrue together at each midnight; one at apr 0 does not', async () => {
    const client = await t.newClient('interest-lines');
    const lines: OpenLine[] = [];
    for (const [principal, apr, asset] of [
      [1000, '0.3650', 'BTC'],
      [500, '0.7300', 'BTC'],
      [2000, '0.1825', 'ETH'],
    ] as const) {
      const line = await openLine(t, { client, apr, asset, ...(asset === 'ETH' ? { collateral: 20n * 10n ** 18n, lock: '20', creditLimit: '5000.00' } : {}) });
      await spend(t, await creditCard(t, line, client), principal, client);
      lines.push(line);
    }
    const free = await openLine(t, { client });
    await spend(t, await creditCard(t, free, client), 100, client);
    expect(await interestTimersOf(client)).toEqual([{ kind: 'credit.interest', subjectId: client.id, dueAt: '2026-03-02T00:00:00.000Z' }]);
    await advanceClock(t, 2 * 86_400, client);
    for (const line of lines) expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('2.00');
    expect((await lineOf(t, free.lineId, client)).outstanding.interest).toBe('0.00');
    expect(await interestTimersOf(client)).toEqual([{ kind: 'credit.interest', subjectId: client.id, dueAt: '2026-03-04T00:00:00.000Z' }]);
    await expectLedgerClean(t);
  });

  it('a run that comes late (the worker after a pause) accrues the days missed at once, to the cent and the carry of the daily rule', async () => {
    const { client, line } = await owingLine(1234.57, { apr: '0.1999' });
    await advanceClock(t, 86_400, client);
    const { creditInterestTimer } = await import('./index.js');
    const { withTransaction } = await import('../../platform/db/transaction.js');
    // Eleven days after the first midnight, by the client's clock: ten more midnights in one run.
    const now = new Date(Date.parse('2026-03-02T00:00:00.000Z') + 10 * 86_400_000 + 3_600_000);
    await withTransaction(t.deps.db, (tx) => creditInterestTimer.run(tx, { clientId: client.id, traceId: 'late-interest', now }, client.id));
    let expected = { interest: 0n, carry: 0n };
    for (let day = 0; day < 11; day++) {
      const next = accrueOneDay(123_457n, 1999, expected.carry);
      expected = { interest: expected.interest + next.interest, carry: next.carry };
    }
    const row = await t.deps.db.selectFrom('credit_lines').select(['interest', 'interest_carry', 'interest_accrued_until']).where('id', '=', line.lineId).executeTakeFirstOrThrow();
    expect({ interest: BigInt(row.interest), carry: BigInt(row.interest_carry), until: new Date(row.interest_accrued_until).toISOString() }).toEqual({ ...expected, until: '2026-03-12T00:00:00.000Z' });
    // 1,234.57 × 0.1999 / 365 is 0.6761… a day.
    expect(expected.interest).toBe(743n);
  });

  it('a line\'s own timer, scheduled before timers were per client, runs its client\'s accrual and sets the client\'s timer', async () => {
    const { client, line } = await owingLine(1000, { apr: '0.3650' });
    await t.deps.db.deleteFrom('timers').where('client_id', '=', client.id).where('kind', '=', 'credit.interest').execute();
    await t.deps.db
      .insertInto('timers')
      .values({ client_id: client.id, kind: 'credit-line.interest', subject_id: line.lineId, due_at: new Date('2026-03-02T00:00:00.000Z'), created_at: new Date('2026-03-01T12:00:00.000Z') })
      .execute();
    await advanceClock(t, 86_400, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.interest).toBe('1.00');
    expect(await interestTimersOf(client)).toEqual([{ kind: 'credit.interest', subjectId: client.id, dueAt: '2026-03-03T00:00:00.000Z' }]);
  });
});

describe('credit settings', () => {
  const ladder = { opening: '0.4000', warning: '0.5500', purchaseRestricted: '0.6000', collateralNeeded: '0.6500', urgentCollateralNeeded: '0.7000', liquidationWarning: '0.7500', liquidation: '0.8000' };

  it('GET answers the defaults; PATCH 200 changes them for new lines while old ones keep their own', async () => {
    const client = await t.newClient('settings');
    const current = await t.request({ url: '/v1/credit-settings', key: client.key });
    expect(current.status).toBe(200);
    expect(current.body.data).toEqual({ thresholds: defaultThresholds, liquidationPenaltyRate: '0.0200' });
    const old = await openLine(t, { client, lock: null });

    const response = await t.request({ method: 'PATCH', url: '/v1/sandbox/credit-settings', key: client.key, body: { thresholds: ladder, liquidationPenaltyRate: '0.0300' } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toEqual({ thresholds: ladder, liquidationPenaltyRate: '0.0300' });
    expect((await t.request({ url: '/v1/credit-settings', key: client.key })).body.data).toEqual(response.body.data);
    // The penalty alone keeps the ladder.
    const penaltyOnly = await t.request({ method: 'PATCH', url: '/v1/sandbox/credit-settings', key: client.key, body: { liquidationPenaltyRate: '0.0250' } });
    expect(penaltyOnly.body.data).toEqual({ thresholds: ladder, liquidationPenaltyRate: '0.0250' });

    const fresh = await openLine(t, { client, lock: null });
    expect(await lineOf(t, fresh.lineId, client)).toMatchObject({ thresholds: ladder, liquidationPenaltyRate: '0.0250' });
    expect(await lineOf(t, old.lineId, client)).toMatchObject({ thresholds: defaultThresholds, liquidationPenaltyRate: '0.0200' });
    // Client A's settings did not move.
    expect((await t.request({ url: '/v1/credit-settings' })).body.data.thresholds).toEqual(defaultThresholds);
  });

  describe('400 validation', () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['thresholds not ascending', { thresholds: { ...ladder, collateralNeeded: '0.6000' } }, 'thresholds.collateralNeeded'],
      ['the first threshold within 0.01 of the opening', { thresholds: { ...ladder, warning: '0.4100' } }, 'thresholds.warning'],
      ['an opening of 0', { thresholds: { ...ladder, opening: '0' } }, 'thresholds.opening'],
      ['opening + penalty of 1', { thresholds: { ...ladder, opening: '0.5000' }, liquidationPenaltyRate: '0.5000' }, 'liquidationPenaltyRate'],
      ['an opening that takes opening + the stored penalty to 1', { thresholds: { opening: '0.9800', warning: '0.9910', purchaseRestricted: '0.9920', collateralNeeded: '0.9930', urgentCollateralNeeded: '0.9940', liquidationWarning: '0.9950', liquidation: '0.9960' } }, 'thresholds.opening'],
      ['penalty alone taking opening + penalty past 1', { liquidationPenaltyRate: '0.5000' }, 'liquidationPenaltyRate'],
      ['a penalty taking the liquidation threshold + penalty to 1 (every liquidation would sell everything)', { liquidationPenaltyRate: '0.4500' }, 'liquidationPenaltyRate'],
      ['a liquidation threshold that takes it + the stored penalty to 1', { thresholds: { ...ladder, liquidation: '0.9800' } }, 'thresholds.liquidation'],
      ['a rate with five decimals', { liquidationPenaltyRate: '0.02000' }, 'liquidationPenaltyRate'],
      ['a missing threshold', { thresholds: { opening: '0.5000' } }, 'thresholds.warning'],
    ];
    for (const [name, body, field] of cases) {
      it(`${name}: names ${field} and changes nothing`, async () => {
        const client = await t.newClient('settings refused');
        const response = await t.request({ method: 'PATCH', url: '/v1/sandbox/credit-settings', key: client.key, body });
        expectError(response, 400, 'VALIDATION_ERROR', field);
        expect((await t.request({ url: '/v1/credit-settings', key: client.key })).body.data).toEqual({ thresholds: defaultThresholds, liquidationPenaltyRate: '0.0200' });
      });
    }
  });
});

describe('POST /v1/cards/credit', () => {
  async function cardBody(line: OpenLine, overrides: Record<string, unknown> = {}, client: TestClient = t.clientA) {
    const programs = await cardPrograms(t, client);
    return { customerId: line.wallet.customerId, cardProgramId: programs['Crypto-backed Credit'].id, isVirtual: true, isPrimary: false, collateralWalletId: line.wallet.walletId, creditLineId: line.lineId, ...overrides };
  }

  describe('201 created', () => {
    it('the card spends from the line: walletId is the collateral wallet, the record names the line', async () => {
      const line = await openLine(t);
      const response = await post('/v1/cards/credit', await cardBody(line));
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body.data).toEqual({ id: expect.any(String), referenceNumber: expect.any(String), status: 'ACTIVE', walletId: line.wallet.walletId });
      const card = await t.request({ url: `/v1/cards/${response.body.data.id as string}` });
      expect(card.body.data).toMatchObject({ cardType: 'CREDIT', creditLineId: line.lineId, collateralWalletId: line.wallet.walletId, walletId: line.wallet.walletId, customerId: line.wallet.customerId });
    });
  });

  describe('404', () => {
    it('a credit line of another customer names creditLineId', async () => {
      const mine = await openLine(t);
      const theirs = await openLine(t);
      expectError(await post('/v1/cards/credit', await cardBody(mine, { creditLineId: theirs.lineId })), 404, 'NOT_FOUND', 'creditLineId');
    });

    it('an unknown card program names cardProgramId, an unknown customer customerId', async () => {
      const line = await openLine(t);
      expectError(await post('/v1/cards/credit', await cardBody(line, { cardProgramId: crypto.randomUUID() })), 404, 'NOT_FOUND', 'cardProgramId');
      expectError(await post('/v1/cards/credit', await cardBody(line, { customerId: crypto.randomUUID() })), 404, 'NOT_FOUND', 'customerId');
    });
  });

  describe('409', () => {
    it('KYC_NOT_APPROVED for a customer not yet approved', async () => {
      const line = await openLine(t);
      const customer = await createIndividual(t);
      expectError(await post('/v1/cards/credit', await cardBody(line, { customerId: customer.id })), 409, 'KYC_NOT_APPROVED');
    });
  });

  describe('422', () => {
    it('CARD_PROGRAM_MISMATCH with a debit program names cardProgramId', async () => {
      const line = await openLine(t);
      const programs = await cardPrograms(t);
      expectError(await post('/v1/cards/credit', await cardBody(line, { cardProgramId: programs['Standard Debit'].id })), 422, 'CARD_PROGRAM_MISMATCH', 'cardProgramId');
    });

    it('CREDIT_LINE_NOT_ACTIVE for a line waiting for collateral names creditLineId', async () => {
      const line = await openLine(t, { lock: null });
      expectError(await post('/v1/cards/credit', await cardBody(line)), 422, 'CREDIT_LINE_NOT_ACTIVE', 'creditLineId');
    });

    it('COLLATERAL_WALLET_MISMATCH when collateralWalletId is not the line\'s', async () => {
      const line = await openLine(t);
      const other = await openLine(t);
      expectError(await post('/v1/cards/credit', await cardBody(line, { collateralWalletId: other.wallet.walletId })), 422, 'COLLATERAL_WALLET_MISMATCH', 'collateralWalletId');
    });
  });
});

describe('credit card authorizations', () => {
  it('51 beyond the available credit, 00 up to it', async () => {
    const { client, line, cardId } = await owingLine(400, { creditLimit: '1000.00' });
    const short = await authorize(t, cardId, { amount: 600.01 }, client);
    expect(short.responseCode).toBe('51');
    expect(await declineReasonOf(short.parentCardTransactionId, client)).toBe('INSUFFICIENT_FUNDS');
    expect((await lineOf(t, line.lineId, client)).outstanding.pendingHolds).toBe('0.00');
    expect(await authorize(t, cardId, { amount: 600 }, client)).toMatchObject({ responseCode: '00' });
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ availableCredit: '0.00', outstanding: { principal: '400.00', pendingHolds: '600.00', total: '1000.00' } });
    await expectLedgerClean(t);
  });

  it('an advice (0120) above the available credit is recorded and announced at the advised amount, with heldAmount saying what the line holds', async () => {
    const { client, line, cardId } = await owingLine(400, { creditLimit: '1000.00' });
    const auth = await authorize(t, cardId, { amount: 100 }, client);
    const advice = await onParent(t, auth.parentCardTransactionId, 'advices', { amount: 900 }, client);
    expect(advice.record).toMatchObject({ amount: 900, heldAmount: 600 });
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ availableCredit: '0.00', outstanding: { principal: '400.00', pendingHolds: '600.00' } });
    const events = await cardEventsOf(t, auth.parentCardTransactionId, client);
    expect(events.map((event) => [event.type, event.data.amount, event.data.heldAmount])).toEqual([
      ['CARD_TRANSACTION_PENDING', 100, 100],
      ['CARD_TRANSACTION_PENDING', 900, 600],
    ]);
    await expectLedgerClean(t);
  });

  it('a hold counts in pendingHolds and in the LTV (alone it fires the warning); its reversal releases it', async () => {
    const client = await t.newClient('hold ltv');
    const line = await openLine(t, { client });
    const cardId = await creditCard(t, line, client);
    await setPrice(t, 'BTC-USD', '8000.00', client);
    const auth = await authorize(t, cardId, { amount: 4800 }, client);
    expect(auth.responseCode).toBe('00');
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ ltv: '0.6000', ltvLevel: 'THRESHOLD_WARNING', status: 'ACTIVE', outstanding: { principal: '0.00', pendingHolds: '4800.00', total: '4800.00' } });
    const events = await ltvEventsOf(t, line.lineId, client);
    expect(events.map((event) => event.type)).toEqual(['LTV_THRESHOLD_WARNING']);

    await onParent(t, auth.parentCardTransactionId, 'reversals', {}, client);
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ ltv: '0.0000', ltvLevel: 'HEALTHY', availableCredit: '15000.00', outstanding: { pendingHolds: '0.00', total: '0.00' } });
    await expectLedgerClean(t);
  });

  it('57 LTV_PURCHASE_RESTRICTED for a purchase that would take an ACTIVE line to the purchase-restricted LTV, whatever the available credit', async () => {
    const client = await t.newClient('auth 57 after');
    const line = await openLine(t, { client });
    const cardId = await creditCard(t, line, client);
    // The collateral (1 BTC) is worth 6,000.00 now; the available credit is still the limit.
    await setPrice(t, 'BTC-USD', '6000.00', client);
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ status: 'ACTIVE', availableCredit: '15000.00' });
    // 3,900 / 6,000 = 0.65: refused, nothing held.
    const declined = await authorize(t, cardId, { amount: 3900 }, client);
    expect(declined.responseCode).toBe('57');
    expect(await declineReasonOf(declined.parentCardTransactionId, client)).toBe('LTV_PURCHASE_RESTRICTED');
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ status: 'ACTIVE', ltv: '0.0000', outstanding: { total: '0.00' } });
    // A cent less leaves 0.6499: approved.
    expect((await authorize(t, cardId, { amount: 3899.99 }, client)).responseCode).toBe('00');
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ status: 'ACTIVE', ltv: '0.6499', outstanding: { pendingHolds: '3899.99' } });
    await expectLedgerClean(t);
  });

  it('57 LTV_PURCHASE_RESTRICTED while RESTRICTED; a refund reduces the principal', async () => {
    const client = await t.newClient('auth 57');
    const line = await openLine(t, { client });
    const cardId = await creditCard(t, line, client);
    const parent = await spend(t, cardId, 1000, client);
    await setPrice(t, 'BTC-USD', '1500.00', client); // 1,000 / 1,500 = 0.6666
    expect((await lineOf(t, line.lineId, client)).status).toBe('RESTRICTED');
    const declined = await authorize(t, cardId, { amount: 1 }, client);
    expect(declined.responseCode).toBe('57');
    expect(await declineReasonOf(declined.parentCardTransactionId, client)).toBe('LTV_PURCHASE_RESTRICTED');
    expect((await lineOf(t, line.lineId, client)).outstanding.pendingHolds).toBe('0.00');

    await onParent(t, parent, 'refunds', { amount: 400 }, client);
    // 600 / 1,500 = 0.40: the restriction lifts with the refund.
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ status: 'ACTIVE', ltv: '0.4000', ltvLevel: 'HEALTHY', outstanding: { principal: '600.00', total: '600.00' } });
    expect(await authorize(t, cardId, { amount: 1 }, client)).toMatchObject({ responseCode: '00' });
    await expectLedgerClean(t);
  });
});

describe('credit card refunds', () => {
  it('a refund authorization takes no credit and gives none back until the refund clears; a refund reversed is owed again', async () => {
    const client = await t.newClient('refunds');
    const line = await openLine(t, { client, creditLimit: '2000.00' });
    const cardId = await creditCard(t, line, client);
    await spend(t, cardId, 1000, client);
    const announced = await authorize(t, cardId, { amount: 300, processingCode: '200000' }, client);
    expect(announced.record).toMatchObject({ type: 'REFUND', status: 'PENDING', amount: 300, heldAmount: 0 });
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ availableCredit: '1000.00', outstanding: { principal: '1000.00', pendingHolds: '0.00' } });
    await onParent(t, announced.parentCardTransactionId, 'refunds', { amount: 300 }, client);
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ availableCredit: '1300.00', outstanding: { principal: '700.00', pendingHolds: '0.00' } });

    const refund = await send(t, `/v1/sandbox/cards/${cardId}/financial`, { amount: 200, processingCode: '200000' }, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.principal).toBe('500.00');
    const reversal = await onParent(t, refund.parentCardTransactionId, 'reversals', {}, client);
    expect(reversal.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 200 });
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ availableCredit: '1300.00', outstanding: { principal: '700.00' } });
    await expectLedgerClean(t);
  });

  it('a refund beyond the principal pays the excess into the collateral wallet; reversing it takes that back from the wallet first (what the wallet still has), then lends the rest', async () => {
    const client = await t.newClient('refund excess reversed');
    const line = await openLine(t, { client, creditLimit: '2000.00' });
    const cardId = await creditCard(t, line, client);
    const elsewhere = await linkedWallet(t, client);
    await spend(t, cardId, 100, client);
    const refund = await send(t, `/v1/sandbox/cards/${cardId}/financial`, { amount: 300, processingCode: '200000' }, client);
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ outstanding: { principal: '0.00' }, refundExcessPaidOut: '200.00' });
    expect((await balanceOf(t, line.wallet.walletId, 'USD', client)).AVAILABLE).toBe('200.00');

    // Half of it reversed: the wallet gives back 150 of the 200 it was paid; nothing is lent.
    const first = await onParent(t, refund.parentCardTransactionId, 'reversals', { amount: 150 }, client);
    expect(first.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 150 });
    expect((await balanceOf(t, line.wallet.walletId, 'USD', client)).AVAILABLE).toBe('50.00');
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ outstanding: { principal: '0.00' }, refundExcessPaidOut: '50.00' });

    // The customer moves 30 of the 50 out; the rest of the refund reversed: 20 from the wallet, 130 lent.
    const moved = await post('/v1/internal-transfer', { sourceWalletId: line.wallet.walletId, destinationWalletId: elsewhere.walletId, amount: '30.00', asset: 'USD' }, client);
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    const second = await onParent(t, refund.parentCardTransactionId, 'reversals', {}, client);
    expect(second.record).toMatchObject({ type: 'REVERSAL_ADVICE', operation: 'DEBIT', amount: 150 });
    expect((await balanceOf(t, line.wallet.walletId, 'USD', client)).AVAILABLE).toBe('0.00');
    // 100 spent, and the 30 of the refund the customer kept: owed again.
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ availableCredit: '1870.00', outstanding: { principal: '130.00' }, refundExcessPaidOut: '0.00' });
    await expectLedgerClean(t);
  });

  it('a purchase and its refund both reversed: the line owes nothing and the wallet keeps nothing of them', async () => {
    const client = await t.newClient('purchase and refund reversed');
    const line = await openLine(t, { client, creditLimit: '2000.00', usd: 5_000n });
    const cardId = await creditCard(t, line, client);
    const purchase = await send(t, `/v1/sandbox/cards/${cardId}/financial`, { amount: 100 }, client);
    const refund = await send(t, `/v1/sandbox/cards/${cardId}/financial`, { amount: 100, processingCode: '200000' }, client);
    expect((await lineOf(t, line.lineId, client)).outstanding.principal).toBe('0.00');
    // The purchase reversed on a line that owes nothing: its 100 goes to the wallet (50.00 of the customer's own before).
    await onParent(t, purchase.parentCardTransactionId, 'reversals', {}, client);
    expect((await balanceOf(t, line.wallet.walletId, 'USD', client)).AVAILABLE).toBe('150.00');
    // The refund reversed takes it back from there: the customer's own 50.00 stay, nothing is lent.
    await onParent(t, refund.parentCardTransactionId, 'reversals', {}, client);
    expect((await balanceOf(t, line.wallet.walletId, 'USD', client)).AVAILABLE).toBe('50.00');
    expect(await lineOf(t, line.lineId, client)).toMatchObject({ availableCredit: '2000.00', outstanding: { principal: '0.00', total: '0.00' } });
    await expectLedgerClean(t);
  });

  it('a refund that only repaid principal, reversed, is owed again: the customer\'s own USD in the collateral wallet is never taken', async () => {
    const client = await t.newClient('refund within principal reversed');
    const line = await openLine(t, { client, creditLimit: '2000.00', usd: 5_000n });
    const cardId = await creditCard(t, line, client);
    await spend(t, cardId, 100, client);
    const refund = await send(t, `/v1/sandbox/cards/${cardId}/financial`, { amount: 60, processingCode: '200000' }, client);
    await onParent(t, refund.parentCardTransactionId, 'reversals', {}, client);
    expect((await balanceOf(t, line.wallet.walletId, 'USD', client)).AVAILABLE).toBe('50.00');
    expect((await lineOf(t, line.lineId, client)).outstanding.principal).toBe('100.00');
    await expectLedgerClean(t);
  });
});

describe('LTV events', () => {
  it('carry creditLineId, ltv, thresholdLtv, collateralValue, outstanding, currency, customerId and traceId, and are listed in GET /v1/events', async () => {
    const client = await t.newClient('events');
    const line = await openLine(t, { client });
    const cardId = await creditCard(t, line, client);
    await spend(t, cardId, 4000, client);
    const before = new Date(t.clock.now().getTime()).toISOString();
    // 4,000 / 5,700 = 0.7017: the warning, the restriction and collateral-needed in one change, lowest first.
    const price = await t.request({ method: 'PUT', url: '/v1/sandbox/prices/BTC-USD', key: client.key, body: { price: '5700.00' } });
    expect(price.status).toBe(200);
    const types = ['LTV_THRESHOLD_WARNING', 'LTV_PURCHASE_RESTRICTED', 'LTV_COLLATERAL_NEEDED'];
    const thresholds = ['0.6000', '0.6500', '0.7000'];
    const events = await ltvEventsOf(t, line.lineId, client);
    expect(events.map((event) => event.type)).toEqual(types);
    events.forEach((event, i) => {
      expect(event.data).toMatchObject({
        creditLineId: line.lineId,
        customerId: line.wallet.customerId,
        ltv: '0.7017',
        thresholdLtv: thresholds[i],
        collateralValue: '5700.00',
        outstanding: '4000.00',
        currency: 'USD',
        traceId: expect.any(String),
      });
      expect(event.data.traceId.length).toBeGreaterThan(0);
    });
    for (const type of types) {
      const listed = await eventsOfType(type, client);
      expect(listed.map((event) => event.id)).toContain(events[types.indexOf(type)].id);
    }
    const after = await lineOf(t, line.lineId, client);
    expect(after).toMatchObject({ ltvLevel: 'COLLATERAL_NEEDED', status: 'RESTRICTED' });
    expect(after.lastLtvEventAt >= before).toBe(true);
    // Nothing fires twice: the same price again, or a small rise within the band, adds no event.
    await setPrice(t, 'BTC-USD', '5750.00', client);
    expect(await ltvEventsOf(t, line.lineId, client)).toHaveLength(3);
    await expectLedgerClean(t);
  });

  it('come in the order of the line\'s changes: one fired by a card message dated ahead of the clock is listed before one a later price change fires', async () => {
    const client = await t.newClient('event order');
    const line = await openLine(t, { client });
    await setPrice(t, 'BTC-USD', '10000.00', client);
    const cardId = await creditCard(t, line, client);
    const auth = await authorize(t, cardId, { amount: 1000 }, client);
    // The completion follows its lifecycle's change, so it is dated 1 ms after the clock (the
    // tests' clock stands still): 6,100 / 10,000 fires the warning then.
    const completion = await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 6100 }, client);
    expect(completion.responseCode).toBe('00');
    // Far enough below the threshold to re-arm it, then back above it at the clock's moment.
    await setPrice(t, 'BTC-USD', '12000.00', client);
    await setPrice(t, 'BTC-USD', '9800.00', client);
    const events = await ltvEventsOf(t, line.lineId, client);
    // Until 2026-12-06 the second was dated at the clock, before the first, and listed before it.
    expect(events.map((event) => [event.type, event.data.ltv])).toEqual([
      ['LTV_THRESHOLD_WARNING', '0.6100'],
      ['LTV_THRESHOLD_WARNING', '0.6224'],
    ]);
    expect(Date.parse(events[1].createdAt)).toBeGreaterThan(Date.parse(events[0].createdAt));
    expect((await lineOf(t, line.lineId, client)).lastLtvEventAt).toBe(events[1].createdAt);
    await expectLedgerClean(t);
  });
});

describe('when all the collateral is gone (sold or released)', () => {
  // An app of its own: a ledger inconsistency left here must not fail the ledger checks of the other tests.
  let x: TestContext;
  beforeAll(async () => {
    x = await createTestApp();
  });
  afterAll(async () => {
    await x.close();
  });

  /** A line owing 9,000.00 whose whole collateral (1 BTC) is sold at 5,000.00 (LTV 1.80): 0.98 BTC fetches 4,900.00, 4,100.00 stays owed. */
  async function exhausted(name: string) {
    const client = await x.newClient(name);
    const line = await openLine(x, { client, collateral: 200_000_000n, usd: 1_000_000n });
    const cardId = await creditCard(x, line, client);
    await spend(x, cardId, 5000, client);
    await spend(x, cardId, 4000, client);
    await setPrice(x, 'BTC-USD', '5000.00', client);
    return { client, line, cardId };
  }

  it('sells everything and keeps the rest of the debt on a RESTRICTED line', async () => {
    const { client, line, cardId } = await exhausted('exhausted');
    const events = await ltvEventsOf(x, line.lineId, client);
    expect(events).toHaveLength(6);
    expect(events.at(-1).data).toMatchObject({ ltv: '1.8000', collateralSold: '0.98000000', penaltyAmount: '0.02000000', proceeds: '4900.00', principalRepaid: '4900.00', surplus: '0.00' });
    expect(await lineOf(x, line.lineId, client)).toMatchObject({ status: 'RESTRICTED', ltv: null, ltvLevel: 'LIQUIDATION', collateral: { amount: '0.00000000' }, outstanding: { principal: '4100.00', total: '4100.00' } });
    expect(await balanceOf(x, line.wallet.walletId, 'BTC', client)).toMatchObject({ AVAILABLE: '1.00000000', RESERVED: '0.00000000' });
    expect((await authorize(x, cardId, { amount: 1 }, client)).responseCode).toBe('57');
    // Repaying everything with no collateral left keeps the line RESTRICTED.
    expect(await repay(x, line, '4100.00', client)).toMatchObject({ status: 'RESTRICTED', outstanding: { total: '0.00' } });
  });

  it('a lock that would leave the LTV at or above the liquidation threshold is refused (it would be sold at once), naming what is enough', async () => {
    const { client, line } = await exhausted('exhausted lock');
    const post = (amount: string) => x.request({ method: 'POST', url: `/v1/credit-lines/${line.lineId}/collateral`, key: client.key, body: { amount } });
    // 4,100.00 owed at 5,000.00 a BTC: below the threshold 0.8333 from 4,100 / (0.8333 × 5,000) = 0.984039361… BTC.
    const refused = await post('0.98403936');
    expectError(refused, 422, 'LTV_TOO_HIGH', 'amount');
    expect(refused.body.message).toBe(
      'Locking 0.98403936 BTC would leave the LTV at 0.8334, at or above the liquidation threshold 0.8333: it would be sold at once, less the penalty. Lock at least 0.98403937 BTC, or repay first.',
    );
    expect(await balanceOf(x, line.wallet.walletId, 'BTC', client)).toMatchObject({ AVAILABLE: '1.00000000', RESERVED: '0.00000000' });
    expect(await ltvEventsOf(x, line.lineId, client)).toHaveLength(6);
    const locked = await post('0.98403937');
    expect(locked.status, JSON.stringify(locked.body)).toBe(200);
    expect(locked.body.data).toMatchObject({ collateral: { amount: '0.98403937' }, outstanding: { total: '4100.00' }, ltv: '0.8332' });
    expect(await ltvEventsOf(x, line.lineId, client)).toHaveLength(6);
    await expectLedgerClean(x);
  });

  it('leaves the ledger consistent (the line\'s collateral hold matches its collateral)', async () => {
    await exhausted('exhausted ledger');
    await expectLedgerClean(x);
  });

  it('releasing all the collateral of a line that owes nothing, then locking again, works and keeps the ledger consistent', async () => {
    const client = await x.newClient('release all');
    const line = await openLine(x, { client });
    const released = await x.request({ method: 'POST', url: `/v1/credit-lines/${line.lineId}/collateral/release`, key: client.key, body: { amount: '1' } });
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    expect(released.body.data.collateral.amount).toBe('0.00000000');
    expect(await balanceOf(x, line.wallet.walletId, 'BTC', client)).toMatchObject({ AVAILABLE: '1.00000000', RESERVED: '0.00000000' });
    const relocked = await x.request({ method: 'POST', url: `/v1/credit-lines/${line.lineId}/collateral`, key: client.key, body: { amount: '1' } });
    expect(relocked.status, JSON.stringify(relocked.body)).toBe(200);
    expect(relocked.body.data).toMatchObject({ status: 'ACTIVE', collateral: { amount: '1.00000000' } });
    await expectLedgerClean(x);
  });

  it('after all of it was released, a lock that does not cover the limit at the opening LTV leaves the line RESTRICTED', async () => {
    const client = await x.newClient('release all, lock a satoshi');
    const line = await openLine(x, { client });
    await x.request({ method: 'POST', url: `/v1/credit-lines/${line.lineId}/collateral/release`, key: client.key, body: { amount: '1' } });
    const relocked = await x.request({ method: 'POST', url: `/v1/credit-lines/${line.lineId}/collateral`, key: client.key, body: { amount: '0.00000001' } });
    expect(relocked.body.data).toMatchObject({ status: 'RESTRICTED', collateral: { amount: '0.00000001' } });
    // No card can be issued on it either (a card needs an ACTIVE line).
    const programs = await cardPrograms(x, client);
    const card = await x.request({
      method: 'POST',
      url: '/v1/cards/credit',
      key: client.key,
      body: { customerId: line.wallet.customerId, cardProgramId: programs['Crypto-backed Credit'].id, isVirtual: true, isPrimary: false, collateralWalletId: line.wallet.walletId, creditLineId: line.lineId },
    });
    expect(card.status, JSON.stringify(card.body)).toBe(422);
    expect(card.body.code).toBe('CREDIT_LINE_NOT_ACTIVE');
  });

  it('accepts new collateral, which alone does not lift the restriction; repaying everything then does (contract §12.10)', async () => {
    const { client, line } = await exhausted('exhausted then relocked');
    await setPrice(x, 'BTC-USD', '60000.00', client);
    const locked = await x.request({ method: 'POST', url: `/v1/credit-lines/${line.lineId}/collateral`, key: client.key, body: { amount: '1' } });
    expect(locked.status, JSON.stringify(locked.body)).toBe(200);
    expect(locked.body.data).toMatchObject({ ltv: '0.0683', collateral: { amount: '1.00000000' } });
    expect(locked.body.data.status).toBe('RESTRICTED');
    expect(await repay(x, line, '4100.00', client)).toMatchObject({ status: 'ACTIVE', outstanding: { total: '0.00' } });
  });
});

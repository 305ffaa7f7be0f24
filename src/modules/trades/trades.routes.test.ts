import crypto from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext, type TestResponse } from '../../../test/harness.js';
import { createIndividual } from '../../../test/customers/fixtures.js';
import { availableOf, fundWallet } from '../../../test/ledger/fixtures.js';
import { fund, linkedWallet, withdrawalBody } from '../../../test/bank/fixtures.js';
import { buildApp } from '../../app.js';
import { loadConfig } from '../../platform/config.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { planOf, scansOf } from '../../../test/plans.js';
import { systemAccountBalance, verifyLedger } from '../ledger/index.js';
import { assetPairIdOf } from './asset-pairs.js';
import { insertQuotesStatement, quoteResultsStatement } from './trade-batches.js';
import { DatabasePriceProvider } from './price-feeds.js';
import { parsePrice, PriceChangedHooks, type PriceChange } from './prices.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

interface Holder {
  customerId: string;
  walletId: string;
}

/** A new customer of `client` with its primary wallet, funded with the given amounts (minor units). */
async function holder(client: TestClient = t.clientA, funds: Record<string, bigint> = {}): Promise<Holder> {
  const customer = await createIndividual(t, client);
  const wallets = await t.request({ url: `/v1/wallets?customerId=${customer.id}`, key: client.key });
  const walletId = wallets.body.data[0].id as string;
  for (const [asset, amount] of Object.entries(funds)) await fundWallet(t, client.id, walletId, amount, asset);
  return { customerId: customer.id, walletId };
}

function quoteBody(customerId: string, overrides: Record<string, unknown> = {}) {
  return { customerId, fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.5', feeAssetId: 'USD', side: 'sell', direction: 'direct', ...overrides };
}

async function quote(body: Record<string, unknown>, client: TestClient = t.clientA, context: TestContext = t): Promise<TestResponse> {
  return context.request({ method: 'POST', url: '/v1/trades/quotes', key: client.key, body });
}

async function execute(quoteId: string, walletId: string, options: { client?: TestClient; idempotencyKey?: string } = {}): Promise<TestResponse> {
  return t.request({
    method: 'POST',
    url: `/v1/trades/quotes/${quoteId}/execute`,
    key: (options.client ?? t.clientA).key,
    body: { walletId },
    ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
  });
}

/** A quote that must be given (201), returning its data. */
async function quoted(body: Record<string, unknown>, client: TestClient = t.clientA): Promise<any> {
  const response = await quote(body, client);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data;
}

async function balances(walletId: string, client: TestClient = t.clientA): Promise<Record<string, string>> {
  const response = await t.request({ url: `/v1/wallets/${walletId}/balance`, key: client.key });
  return Object.fromEntries(response.body.data.AVAILABLE.map((entry: { asset: string; amount: string }) => [entry.asset, entry.amount]));
}

async function history(parentTransactionId: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: `/v1/transactions?parentTransactionId=${parentTransactionId}`, key: client.key });
  expect(response.status).toBe(200);
  return response.body.data;
}

async function eventsOf(type: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: `/v1/events?type=${type}&limit=200`, key: client.key });
  return response.body.data;
}

function expectError(response: TestResponse, status: number, code: string, field?: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.code).toBe(code);
  if (field !== undefined) expect(response.body.details?.map((detail: { field: string }) => detail.field)).toContain(field);
}

describe('GET /v1/trades/asset-pairs', () => {
  it('200: the seven seeded pairs, with the catalogue\'s ids and limits', async () => {
    const response = await t.request({ url: '/v1/trades/asset-pairs' });
    expect(response.status).toBe(200);
    expect(response.body.data.map((pair: any) => pair.symbol)).toEqual(['BTC-USD', 'ETH-USD', 'USDC-USD', 'USDT-USD', 'BTC-USDC', 'ETH-USDC', 'USDT-USDC']);
    expect(response.body.data[0]).toEqual({
      id: assetPairIdOf('BTC-USD'),
      symbol: 'BTC-USD',
      baseAsset: 'BTC',
      quoteAsset: 'USD',
      minAmount: '0.00000100',
      maxAmount: '100.00000000',
      tradable: true,
      feeRate: '0.001',
    });
  });
});

describe('201: quote then execute', () => {
  // The worked examples of docs/trades.md, each executed, with the balances and records checked.
  const cases = [
    {
      name: 'direct BTC → USD, fee in BTC',
      funds: { BTC: 100_000_000n },
      body: { fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.5', feeAssetId: 'BTC', side: 'sell', direction: 'direct' },
      quote: { pricePerUnit: '60000.00', feeAmount: '0.00050000', totalPrice: '0.50000000', totalToReceive: '29970.00' },
      after: { BTC: '0.50000000', USD: '29970.00' },
      records: [
        ['DEBIT', 'BTC', '0.49950000', 'USER_TRADE'],
        ['DEBIT', 'BTC', '0.00050000', 'TRADE_FEE_SETTLEMENT'],
        ['CREDIT', 'USD', '29970.00', 'USER_TRADE'],
      ],
      fees: { BTC: 50_000n },
    },
    {
      name: 'direct BTC → USD, fee in USD',
      funds: { BTC: 100_000_000n },
      body: { fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.5', feeAssetId: 'USD', side: 'sell', direction: 'direct' },
      quote: { pricePerUnit: '60000.00', feeAmount: '30.00', totalPrice: '0.50000000', totalToReceive: '29970.00' },
      after: { BTC: '0.50000000', USD: '29970.00' },
      records: [
        ['DEBIT', 'BTC', '0.50000000', 'USER_TRADE'],
        ['CREDIT', 'USD', '30000.00', 'USER_TRADE'],
        ['DEBIT', 'USD', '30.00', 'TRADE_FEE_SETTLEMENT'],
      ],
      fees: { USD: 3000n },
    },
    {
      name: 'reverse USD → BTC, fee in USD',
      funds: { USD: 200_000n },
      body: { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', feeAssetId: 'USD', side: 'buy', direction: 'reverse' },
      quote: { pricePerUnit: '60000.00', feeAmount: '1.00', totalPrice: '1000.00', totalToReceive: '0.01665000' },
      after: { BTC: '0.01665000', USD: '1000.00' },
      records: [
        ['DEBIT', 'USD', '999.00', 'USER_TRADE'],
        ['DEBIT', 'USD', '1.00', 'TRADE_FEE_SETTLEMENT'],
        ['CREDIT', 'BTC', '0.01665000', 'USER_TRADE'],
      ],
      fees: { USD: 100n },
    },
    {
      name: 'reverse USD → BTC, fee in BTC',
      funds: { USD: 200_000n },
      body: { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', feeAssetId: 'BTC', side: 'buy', direction: 'reverse' },
      quote: { pricePerUnit: '60000.00', feeAmount: '0.00001667', totalPrice: '1000.00', totalToReceive: '0.01664999' },
      after: { BTC: '0.01664999', USD: '1000.00' },
      records: [
        ['DEBIT', 'USD', '1000.00', 'USER_TRADE'],
        ['CREDIT', 'BTC', '0.01666666', 'USER_TRADE'],
        ['DEBIT', 'BTC', '0.00001667', 'TRADE_FEE_SETTLEMENT'],
      ],
      fees: { BTC: 1667n },
    },
  ] as const;

  for (const entry of cases) {
    it(`${entry.name}: moves exactly the quoted amounts under one parent, with ASSET_TRADE_SUCCESSFUL`, async () => {
      const client = await t.newClient(entry.name);
      const { customerId, walletId } = await holder(client, entry.funds);
      const given = await quoted({ customerId, ...entry.body }, client);
      expect(given).toMatchObject({ ...entry.quote, fee: '0.001', status: 'OPEN', customerId });
      expect(given.expiresAt).toBe(new Date(t.clock.now().getTime() + 300_000).toISOString());
      expect(given.disclaimer).toContain('5 minutes');

      const response = await execute(given.quoteId, walletId, { client });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      const execution = response.body.data;
      expect(execution).toMatchObject({
        quoteId: given.quoteId,
        success: true,
        status: 'COMPLETED',
        walletId,
        txType: 'TRADE',
        filledPrice: entry.quote.pricePerUnit,
        totalSourceAmount: entry.quote.totalPrice,
        totalTargetAmount: entry.quote.totalToReceive,
        totalFeeAmount: entry.quote.feeAmount,
        error: null,
      });
      expect(await balances(walletId, client)).toEqual(entry.after);

      const records = await history(execution.parentTransactionId, client);
      expect(records.map((record) => [record.operation, record.asset, record.amount, record.purpose]).sort()).toEqual([...entry.records].map((record) => [...record]).sort());
      expect(records.every((record) => record.type === 'TRADE' && record.status === 'COMPLETED' && record.walletId === walletId)).toBe(true);
      const ids = new Set(records.map((record) => record.id));
      expect(ids).toEqual(new Set([execution.sourceAssetTransferId, execution.targetAssetTransferId, execution.feeTransferId]));
      // The wallet's own history shows the trade's records under the parent.
      const walletHistory = await t.request({ url: `/v1/transactions?walletId=${walletId}&type=TRADE`, key: client.key });
      expect(walletHistory.body.data.every((record: any) => record.parentTransactionId === execution.parentTransactionId)).toBe(true);
      expect(walletHistory.body.data).toHaveLength(3);

      for (const [asset, amount] of Object.entries(entry.fees)) expect(await systemAccountBalance(t.deps.db, client.id, 'FEES', asset)).toBe(amount);
      const events = await eventsOf('ASSET_TRADE_SUCCESSFUL', client);
      expect(events).toHaveLength(1);
      expect(events[0].data).toMatchObject({ transactionId: execution.parentTransactionId, quoteId: given.quoteId, walletId, customerId });
      // Every field the event carries is in the catalogue integrators generate their types from.
      const catalogue = await t.request({ url: '/v1/events/types', key: client.key });
      const schema = (catalogue.body.data as any[]).find((type) => type.type === 'ASSET_TRADE_SUCCESSFUL').payloadSchema;
      expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(events[0].data).sort());

      const detail = await t.request({ url: `/v1/trades/quotes/${given.quoteId}`, key: client.key });
      expect(detail.status).toBe(200);
      expect(detail.body.data).toMatchObject({ ...entry.quote, status: 'EXECUTED' });
      expect(detail.body.data.execution).toEqual(execution);
    });
  }

  it('a crossed pair (BTC → USDC) prices through USD and credits USDC', async () => {
    const { customerId, walletId } = await holder(t.clientA, { BTC: 100_000_000n });
    const given = await quoted(quoteBody(customerId, { toAssetId: 'USDC', fromAmount: '1', feeAssetId: 'USDC' }));
    expect(given).toMatchObject({ pairSymbol: 'BTC-USDC', pricePerUnit: '60000.00', feeAmount: '60.000000', totalToReceive: '59940.000000' });
    expect((await execute(given.quoteId, walletId)).status).toBe(201);
    expect(await balances(walletId)).toEqual({ BTC: '0.00000000', USDC: '59940.000000' });
  });

  it('accepts asset ids for fromAssetId, toAssetId and feeAssetId', async () => {
    const { customerId } = await holder();
    // The ids GET /v1/assets shows are the ids quotes accept.
    const assets = await t.request({ url: '/v1/assets', key: t.clientA.key });
    expect(assets.status).toBe(200);
    const idOf = (code: string): string => (assets.body.data as { id: string; code: string }[]).find((asset) => asset.code === code)?.id ?? 'missing';
    const { assetIdOf } = await import('./asset-pairs.js');
    expect(idOf('BTC')).toBe(assetIdOf('BTC'));
    const given = await quoted(quoteBody(customerId, { fromAssetId: idOf('BTC'), toAssetId: idOf('USD'), feeAssetId: idOf('USD') }));
    expect(given).toMatchObject({ fromAsset: 'BTC', toAsset: 'USD', totalToReceive: '29970.00' });
  });

  it('an Idempotency-Key replay of an execution returns the first response and moves nothing more', async () => {
    const { customerId, walletId } = await holder(t.clientA, { USD: 100_000n });
    const given = await quoted(quoteBody(customerId, { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '100.00', side: 'buy', direction: 'reverse' }));
    const idempotencyKey = `trade-${crypto.randomUUID()}`;
    const first = await execute(given.quoteId, walletId, { idempotencyKey });
    const second = await execute(given.quoteId, walletId, { idempotencyKey });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await balances(walletId)).toEqual({ USD: '900.00', BTC: '0.00166500' });
  });

  it('the quote TTL and the spread come from the configuration', async () => {
    const configured = await createTestApp({ env: { OPENBAAS_QUOTE_TTL_SECONDS: '60', OPENBAAS_TRADE_SPREAD_BPS: '25' } });
    try {
      const customer = await createIndividual(configured, configured.clientA);
      const sell = await quote(quoteBody(customer.id), configured.clientA, configured);
      expect(sell.status).toBe(201);
      expect(sell.body.data).toMatchObject({ pricePerUnit: '59850.00', feeAmount: '29.93', totalToReceive: '29895.07' });
      expect(sell.body.data.expiresAt).toBe(new Date(configured.clock.now().getTime() + 60_000).toISOString());
      expect(sell.body.data.disclaimer).toContain('1 minute,');
      const buy = await quote(quoteBody(customer.id, { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', side: 'buy', direction: 'reverse' }), configured.clientA, configured);
      expect(buy.body.data).toMatchObject({ pricePerUnit: '60150.00', feeAmount: '1.00', totalToReceive: '0.01660847' });
    } finally {
      await configured.close();
    }
  });

  it('OPENBAAS_QUOTE_TTL_SECONDS and OPENBAAS_TRADE_SPREAD_BPS are refused outside their bounds', () => {
    expect(loadConfig({}).quoteTtlSeconds).toBe(300);
    expect(loadConfig({}).tradeSpreadBps).toBe(0);
    expect(() => loadConfig({ OPENBAAS_QUOTE_TTL_SECONDS: '4' })).toThrow(/from 5 to 900/);
    expect(() => loadConfig({ OPENBAAS_QUOTE_TTL_SECONDS: '901' })).toThrow(/from 5 to 900/);
    expect(() => loadConfig({ OPENBAAS_TRADE_SPREAD_BPS: '5001' })).toThrow(/from 0 to 5000/);
  });
});

describe('201 success false: the sandbox liquidity failure', () => {
  it('0.00000999 BTC is quoted, then refused by the liquidity provider: nothing moves, parent FAILED, ASSET_TRADE_FAIL', async () => {
    const client = await t.newClient('liquidity');
    const { customerId, walletId } = await holder(client, { BTC: 1000n });
    const given = await quoted(quoteBody(customerId, { fromAmount: '0.00000999' }), client);
    expect(given.totalToReceive).toBe('0.58');
    const response = await execute(given.quoteId, walletId, { client });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({
      success: false,
      status: 'FAILED',
      filledPrice: null,
      totalSourceAmount: null,
      sourceAssetTransferId: null,
      targetAssetTransferId: null,
      feeTransferId: null,
      error: { code: 'LIQUIDITY_UNAVAILABLE' },
    });
    expect(await balances(walletId, client)).toEqual({ BTC: '0.00001000' });
    expect(await history(response.body.data.parentTransactionId, client)).toEqual([]);
    const events = await eventsOf('ASSET_TRADE_FAIL', client);
    expect(events.map((event) => event.data.transactionId)).toEqual([response.body.data.parentTransactionId]);
    expect(await eventsOf('ASSET_TRADE_SUCCESSFUL', client)).toEqual([]);
    const detail = await t.request({ url: `/v1/trades/quotes/${given.quoteId}`, key: client.key });
    expect(detail.body.data.status).toBe('FAILED');
    expect(detail.body.data.execution).toEqual(response.body.data);
  });

  it('9.99 USD buying BTC fails the same way; the balance is checked first', async () => {
    const poor = await holder(t.clientA, { USD: 500n });
    const given = await quoted(quoteBody(poor.customerId, { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '9.99', side: 'buy', direction: 'reverse' }));
    expect(given.totalToReceive).toBe('0.00016633');
    expectError(await execute(given.quoteId, poor.walletId), 422, 'INSUFFICIENT_FUNDS', 'walletId');
    await fundWallet(t, t.clientA.id, poor.walletId, 500n, 'USD');
    const response = await execute(given.quoteId, poor.walletId);
    expect(response.body.data).toMatchObject({ success: false, error: { code: 'LIQUIDITY_UNAVAILABLE' } });
    expect(await balances(poor.walletId)).toEqual({ USD: '10.00' });
  });
});

describe('400', () => {
  it('refuses a JSON number for fromAmount, unknown fields, and a bad direction or side value', async () => {
    const { customerId } = await holder();
    expectError(await quote(quoteBody(customerId, { fromAmount: 0.5 })), 400, 'VALIDATION_ERROR');
    expectError(await quote({ ...quoteBody(customerId), extra: true }), 400, 'VALIDATION_ERROR');
    expectError(await quote(quoteBody(customerId, { direction: 'sideways' })), 400, 'VALIDATION_ERROR');
  });

  it('follows the documented rules: unknown asset, fee asset, amount, direction, side', async () => {
    const { customerId } = await holder();
    expectError(await quote(quoteBody(customerId, { fromAssetId: 'DOGE' })), 400, 'UNKNOWN_ASSET', 'fromAssetId');
    expectError(await quote(quoteBody(customerId, { feeAssetId: 'ETH' })), 400, 'VALIDATION_ERROR', 'feeAssetId');
    expectError(await quote(quoteBody(customerId, { fromAmount: '0.000000001' })), 400, 'INVALID_AMOUNT', 'fromAmount');
    expectError(await quote(quoteBody(customerId, { fromAmount: '-1' })), 400, 'INVALID_AMOUNT', 'fromAmount');
    expectError(await quote(quoteBody(customerId, { direction: 'reverse', side: 'buy' })), 400, 'DIRECTION_MISMATCH', 'direction');
    expectError(await quote(quoteBody(customerId, { side: 'buy' })), 400, 'SIDE_MISMATCH', 'side');
  });

  it('the request\'s own rules answer before the customer is looked up', async () => {
    expectError(await quote(quoteBody(crypto.randomUUID(), { fromAssetId: 'DOGE' })), 400, 'UNKNOWN_ASSET');
  });
});

describe('404', () => {
  it('an unknown customer, another client\'s customer and a malformed id answer alike', async () => {
    const other = await holder(t.clientB);
    for (const customerId of [crypto.randomUUID(), other.customerId, 'not-an-id']) {
      expectError(await quote(quoteBody(customerId)), 404, 'NOT_FOUND', 'customerId');
    }
  });

  it('an unknown customer answers 404 before the amount\'s range is checked (the range rule comes after the customer\'s)', async () => {
    const other = await holder(t.clientB);
    for (const customerId of [crypto.randomUUID(), other.customerId]) {
      expectError(await quote(quoteBody(customerId, { fromAmount: '0.00000099' })), 404, 'NOT_FOUND', 'customerId');
    }
  });

  it('an unknown quote, another client\'s quote, and a wallet not of the quote\'s customer', async () => {
    const mine = await holder(t.clientA, { BTC: 100_000_000n });
    const stranger = await holder(t.clientA, { BTC: 100_000_000n });
    const given = await quoted(quoteBody(mine.customerId));
    expectError(await execute(crypto.randomUUID(), mine.walletId), 404, 'NOT_FOUND');
    expectError(await execute(given.quoteId, stranger.walletId), 404, 'NOT_FOUND', 'walletId');
    expectError(await execute(given.quoteId, crypto.randomUUID()), 404, 'NOT_FOUND', 'walletId');
    expectError(await execute(given.quoteId, mine.walletId, { client: t.clientB }), 404, 'NOT_FOUND');
    expect((await t.request({ url: `/v1/trades/quotes/${given.quoteId}`, key: t.clientB.key })).status).toBe(404);
    // Still open and executable by its owner.
    expect((await execute(given.quoteId, mine.walletId)).status).toBe(201);
  });
});

describe('409', () => {
  it('QUOTE_ALREADY_EXECUTED for a second execution, with or without a new Idempotency-Key', async () => {
    const { customerId, walletId } = await holder(t.clientA, { BTC: 200_000_000n });
    const given = await quoted(quoteBody(customerId));
    expect((await execute(given.quoteId, walletId)).status).toBe(201);
    expectError(await execute(given.quoteId, walletId), 409, 'QUOTE_ALREADY_EXECUTED');
    expectError(await execute(given.quoteId, walletId, { idempotencyKey: crypto.randomUUID() }), 409, 'QUOTE_ALREADY_EXECUTED');
    expect(await balances(walletId)).toEqual({ BTC: '1.50000000', USD: '29970.00' });
  });

  it('a quote refused by the liquidity provider cannot be executed again either', async () => {
    const { customerId, walletId } = await holder(t.clientA, { BTC: 1000n });
    const given = await quoted(quoteBody(customerId, { fromAmount: '0.00000999' }));
    expect((await execute(given.quoteId, walletId)).body.data.success).toBe(false);
    expectError(await execute(given.quoteId, walletId), 409, 'QUOTE_ALREADY_EXECUTED');
  });
});

describe('422', () => {
  it('PAIR_NOT_TRADABLE and AMOUNT_OUT_OF_RANGE', async () => {
    const { customerId } = await holder();
    expectError(await quote(quoteBody(customerId, { toAssetId: 'ETH', feeAssetId: 'BTC' })), 422, 'PAIR_NOT_TRADABLE');
    expectError(await quote(quoteBody(customerId, { fromAmount: '0.00000099' })), 422, 'AMOUNT_OUT_OF_RANGE', 'fromAmount');
    expectError(await quote(quoteBody(customerId, { fromAmount: '100.00000001' })), 422, 'AMOUNT_OUT_OF_RANGE', 'fromAmount');
  });

  it('QUOTE_EXPIRED once the client\'s sandbox clock reaches expiresAt, and not a second before', async () => {
    const client = await t.newClient('expiry');
    const early = await holder(client, { BTC: 100_000_000n });
    const late = await holder(client, { BTC: 100_000_000n });
    const first = await quoted(quoteBody(early.customerId), client);
    const second = await quoted(quoteBody(late.customerId), client);
    const advance = (seconds: number) => t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds } });
    const statusOf = async (quoteId: string) => (await t.request({ url: `/v1/trades/quotes/${quoteId}`, key: client.key })).body.data.status;
    expect((await advance(299)).status).toBe(200);
    expect(await statusOf(second.quoteId)).toBe('OPEN');
    expect((await execute(first.quoteId, early.walletId, { client })).status).toBe(201);
    expect((await advance(1)).status).toBe(200);
    // Read once its time is up: EXPIRED (an executed one keeps EXECUTED).
    expect(await statusOf(second.quoteId)).toBe('EXPIRED');
    expect(await statusOf(first.quoteId)).toBe('EXECUTED');
    expectError(await execute(second.quoteId, late.walletId, { client }), 422, 'QUOTE_EXPIRED');
    expect(await balances(late.walletId, client)).toEqual({ BTC: '1.00000000' });
    // Another client's clock did not move: its quotes keep their own time.
    const other = await holder(t.clientA, { BTC: 100_000_000n });
    const fresh = await quoted(quoteBody(other.customerId));
    expect(fresh.expiresAt).toBe(new Date(t.clock.now().getTime() + 300_000).toISOString());
  });

  it('INSUFFICIENT_FUNDS leaves the quote open and the wallet untouched', async () => {
    const { customerId, walletId } = await holder(t.clientA, { BTC: 10_000_000n });
    const given = await quoted(quoteBody(customerId));
    expectError(await execute(given.quoteId, walletId), 422, 'INSUFFICIENT_FUNDS', 'walletId');
    expect(await balances(walletId)).toEqual({ BTC: '0.10000000' });
    expect((await t.request({ url: `/v1/trades/quotes/${given.quoteId}` })).body.data.status).toBe('OPEN');
    await fundWallet(t, t.clientA.id, walletId, 40_000_000n, 'BTC');
    expect((await execute(given.quoteId, walletId)).status).toBe(201);
    expect(await balances(walletId)).toEqual({ BTC: '0.00000000', USD: '29970.00' });
  });
});

describe('concurrency', () => {
  it('ten executions of one quote at once move the money once', async () => {
    const { customerId, walletId } = await holder(t.clientA, { BTC: 500_000_000n });
    const given = await quoted(quoteBody(customerId));
    const responses = await Promise.all(Array.from({ length: 10 }, () => execute(given.quoteId, walletId)));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    expect(await balances(walletId)).toEqual({ BTC: '4.50000000', USD: '29970.00' });
  });

  it('ten executions of one quote with ten Idempotency-Keys at once: one trade, nine 409', async () => {
    const { customerId, walletId } = await holder(t.clientA, { BTC: 500_000_000n });
    const given = await quoted(quoteBody(customerId));
    const responses = await Promise.all(Array.from({ length: 10 }, () => execute(given.quoteId, walletId, { idempotencyKey: crypto.randomUUID() })));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(1);
    expect(responses.filter((response) => response.status === 409)).toHaveLength(9);
    expect(await balances(walletId)).toEqual({ BTC: '4.50000000', USD: '29970.00' });
  });

  it('a trade racing an internal transfer of the same money never overdraws the wallet', async () => {
    for (let round = 0; round < 5; round++) {
      const { customerId, walletId } = await holder(t.clientA, { USD: 100_000n });
      const elsewhere = await holder();
      const given = await quoted(quoteBody(customerId, { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', side: 'buy', direction: 'reverse' }));
      const [trade, transfer] = await Promise.all([
        execute(given.quoteId, walletId),
        t.request({ method: 'POST', url: '/v1/internal-transfer', body: { sourceWalletId: walletId, destinationWalletId: elsewhere.walletId, amount: '1000.00', asset: 'USD' } }),
      ]);
      const succeeded = [trade, transfer].filter((response) => response.status === 201);
      expect(succeeded, JSON.stringify([trade.body, transfer.body])).toHaveLength(1);
      const refused = [trade, transfer].find((response) => response.status !== 201);
      expectError(refused as TestResponse, 422, 'INSUFFICIENT_FUNDS');
      expect(await availableOf(t, walletId)).toBe('0.00');
    }
  });

  it('a trade racing a bank withdrawal of the same money never overdraws the wallet', async () => {
    for (let round = 0; round < 3; round++) {
      const wallet = await linkedWallet(t);
      await fund(t, wallet, '1000.00');
      const given = await quoted(quoteBody(wallet.customerId, { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', side: 'buy', direction: 'reverse' }));
      const [trade, withdrawal] = await Promise.all([
        execute(given.quoteId, wallet.walletId, { idempotencyKey: crypto.randomUUID() }),
        t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount: '1000.00' }) }),
      ]);
      const succeeded = [trade, withdrawal].filter((response) => response.status === 201);
      expect(succeeded, JSON.stringify([trade.body, withdrawal.body])).toHaveLength(1);
      const refused = [trade, withdrawal].find((response) => response.status !== 201);
      expectError(refused as TestResponse, 422, 'INSUFFICIENT_FUNDS');
      expect(await availableOf(t, wallet.walletId)).toBe('0.00');
    }
  });

  it('trades racing each other from one wallet never spend more than it holds', async () => {
    const { customerId, walletId } = await holder(t.clientA, { USD: 250_000n });
    const quotes = await Promise.all(
      Array.from({ length: 5 }, () => quoted(quoteBody(customerId, { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', side: 'buy', direction: 'reverse' }))),
    );
    const responses = await Promise.all(quotes.map((given) => execute(given.quoteId, walletId)));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(2);
    expect(responses.filter((response) => response.status === 422 && response.body.code === 'INSUFFICIENT_FUNDS')).toHaveLength(3);
    expect(await balances(walletId)).toEqual({ USD: '500.00', BTC: '0.03330000' });
  });
});

describe('sandbox prices', () => {
  it('GET lists the four seeded prices; PUT changes the next quote of this client only', async () => {
    const client = await t.newClient('prices');
    const listed = await t.request({ url: '/v1/sandbox/prices', key: client.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((entry: any) => [entry.symbol, entry.price])).toEqual([
      ['BTC-USD', '60000.00'],
      ['ETH-USD', '3000.00'],
      ['USDC-USD', '1.00'],
      ['USDT-USD', '1.00'],
    ]);
    const { customerId } = await holder(client);
    const put = await t.request({ method: 'PUT', url: '/v1/sandbox/prices/BTC-USD', key: client.key, body: { price: '50000.5' } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data).toEqual({ symbol: 'BTC-USD', price: '50000.50', updatedAt: t.clock.now().toISOString() });
    expect((await quoted(quoteBody(customerId, { feeAssetId: 'BTC' }), client)).pricePerUnit).toBe('50000.50');
    // A USDC price moves the crossed pair: 50000.50 / 0.9999, rounded down when selling BTC.
    expect((await t.request({ method: 'PUT', url: '/v1/sandbox/prices/USDC-USD', key: client.key, body: { price: '0.9999' } })).status).toBe(200);
    expect((await quoted(quoteBody(customerId, { toAssetId: 'USDC', feeAssetId: 'USDC' }), client)).pricePerUnit).toBe('50005.50');
    const after = await t.request({ url: '/v1/sandbox/prices', key: client.key });
    expect(after.body.data.find((entry: any) => entry.symbol === 'USDC-USD').price).toBe('0.9999');
    // Client A's prices did not move.
    const mine = await holder();
    expect((await quoted(quoteBody(mine.customerId))).pricePerUnit).toBe('60000.00');
  });

  it('400 for a JSON number, a zero or a ninth decimal; 404 for an unknown symbol', async () => {
    expectError(await t.request({ method: 'PUT', url: '/v1/sandbox/prices/BTC-USD', body: { price: 60000 } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request({ method: 'PUT', url: '/v1/sandbox/prices/BTC-USD', body: { price: '0' } }), 400, 'INVALID_AMOUNT', 'price');
    const ninth = await t.request({ method: 'PUT', url: '/v1/sandbox/prices/BTC-USD', body: { price: '1.000000001' } });
    expectError(ninth, 400, 'INVALID_AMOUNT', 'price');
    // The rule is the price's, not its quote asset's (USD has 2 decimals).
    expect(ninth.body.details).toEqual([{ field: 'price', message: 'a price allows at most 8 decimal places' }]);
    expectError(await t.request({ method: 'PUT', url: '/v1/sandbox/prices/BTC-EUR', body: { price: '1.00' } }), 404, 'NOT_FOUND', 'symbol');
  });

  it('setPrice runs the price-changed hooks in its transaction: a failing hook rolls the price back', async () => {
    const client = await t.newClient('hooks');
    const hooks = new PriceChangedHooks();
    const seen: PriceChange[] = [];
    let fail = false;
    hooks.register('test', async (tx, change) => {
      // The hook sees the new price inside the same transaction.
      const row = await tx.selectFrom('sandbox_prices').select('price').where('client_id', '=', change.clientId).where('symbol', '=', change.symbol).executeTakeFirst();
      expect(parsePrice(String(row?.price))).toEqual(change.price);
      seen.push(change);
      if (fail) throw new Error('hook failed');
    });
    const provider = new DatabasePriceProvider(t.deps.db, hooks);
    const set = (price: string) =>
      withTransaction(t.deps.db, (tx) => provider.setPrice(tx, { clientId: client.id, symbol: 'ETH-USD', price: parsePrice(price), at: t.clock.now(), traceId: 'test' }));
    await set('3100.00');
    expect(seen.map((change) => [change.previousPrice, change.price])).toEqual([[parsePrice('3000.00'), parsePrice('3100.00')]]);
    fail = true;
    await expect(set('3200.00')).rejects.toThrow('hook failed');
    const listed = await provider.listPrices(client.id);
    expect(listed.find((entry) => entry.symbol === 'ETH-USD')?.price).toEqual(parsePrice('3100.00'));
  });

  it('a sandbox reset brings every price back to its seeded value', async () => {
    const client = await t.newClient('reset prices');
    expect((await t.request({ method: 'PUT', url: '/v1/sandbox/prices/ETH-USD', key: client.key, body: { price: '2500.00' } })).status).toBe(200);
    const reset = await t.request({ method: 'POST', url: '/v1/sandbox/reset', key: client.key, body: { confirm: 'RESET' } });
    expect(reset.status, JSON.stringify(reset.body)).toBeLessThan(300);
    const listed = await t.request({ url: '/v1/sandbox/prices', key: client.key });
    expect(listed.body.data.find((entry: any) => entry.symbol === 'ETH-USD').price).toBe('3000.00');
  });
});

describe('production mode', () => {
  it('lists the pairs, answers 503 PRICE_FEED_UNAVAILABLE for a quote, and has no price controls', async () => {
    const production = await createTestApp({ env: { OPENBAAS_MODE: 'production' } });
    try {
      expect((await production.request({ url: '/v1/trades/asset-pairs' })).status).toBe(200);
      const customer = await createIndividual(production, production.clientA);
      expectError(await quote(quoteBody(customer.id), production.clientA, production), 503, 'PRICE_FEED_UNAVAILABLE');
      // An unknown customer is told so before the price feed's answer.
      expectError(await quote(quoteBody(crypto.randomUUID()), production.clientA, production), 404, 'NOT_FOUND', 'customerId');
      // Arriving together (one batch): each gets its own answer, and a 503 is not kept under its Idempotency-Key.
      const key = `quote-${crypto.randomUUID()}`;
      const [down, missing] = await Promise.all([
        production.request({ method: 'POST', url: '/v1/trades/quotes', key: production.clientA.key, body: quoteBody(customer.id), headers: { 'idempotency-key': key } }),
        quote(quoteBody(crypto.randomUUID()), production.clientA, production),
      ]);
      expectError(down, 503, 'PRICE_FEED_UNAVAILABLE');
      expectError(missing, 404, 'NOT_FOUND', 'customerId');
      const kept = await production.deps.db.selectFrom('idempotency_keys').select('key').where('client_id', '=', production.clientA.id).where('key', '=', key).execute();
      expect(kept).toEqual([]);
      // The request's own rules still answer first.
      expectError(await quote(quoteBody(customer.id, { fromAssetId: 'USD_TEST' }), production.clientA, production), 400, 'UNKNOWN_ASSET');
      expect((await production.request({ url: '/v1/sandbox/prices' })).status).toBe(404);
    } finally {
      await production.close();
    }
  });
});

describe('batched writes (trade-batches.ts)', () => {
  // Quotes and executions have a batcher each, counted under their own route labels.
  const quoteRoute = '/v1/trades/quotes';
  const executeRoute = '/v1/trades/quotes/:quoteId/execute';

  /** Batched writes of one route done one way with one result, from /metrics. */
  async function batches(route: string, path: 'unchecked' | 'checked', result: 'committed' | 'retried'): Promise<number> {
    const response = await t.request({ url: '/metrics', key: null });
    const line = String(response.body)
      .split('\n')
      .find((entry) => entry.startsWith(`openbaas_write_batches_total{route="${route}",path="${path}",result="${result}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  async function counts(route: string) {
    return { unchecked: await batches(route, 'unchecked', 'committed'), retried: await batches(route, 'unchecked', 'retried'), checked: await batches(route, 'checked', 'committed') };
  }

  const buyBtc = (customerId: string, fromAmount = '10.00') => quoteBody(customerId, { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount, side: 'buy', direction: 'reverse' });

  it('a quote and its execution, each alone, commit in one round trip without reading first, opening the wallet\'s BTC account', async () => {
    const { customerId, walletId } = await holder(t.clientA, { USD: 10_000n });
    const quotesBefore = await counts(quoteRoute);
    const executionsBefore = await counts(executeRoute);
    const given = await quoted(buyBtc(customerId));
    expect(await counts(quoteRoute)).toEqual({ ...quotesBefore, unchecked: quotesBefore.unchecked + 1 });
    const response = await execute(given.quoteId, walletId, { idempotencyKey: crypto.randomUUID() });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data.success).toBe(true);
    expect(await counts(executeRoute)).toEqual({ ...executionsBefore, unchecked: executionsBefore.unchecked + 1 });
    expect(await counts(quoteRoute)).toEqual({ ...quotesBefore, unchecked: quotesBefore.unchecked + 1 });
    expect(await balances(walletId)).toEqual({ USD: '90.00', BTC: given.totalToReceive });
  });

  it('twenty trades at once: each answered with its own quote and moving only its own money', async () => {
    const holders = await Promise.all(Array.from({ length: 20 }, () => holder(t.clientA, { USD: 10_000n })));
    const quotes = await Promise.all(holders.map((entry) => quote(buyBtc(entry.customerId), t.clientA)));
    expect(quotes.map((response) => response.status)).toEqual(holders.map(() => 201));
    expect(quotes.map((response) => response.body.data.customerId)).toEqual(holders.map((entry) => entry.customerId));
    const executed = await Promise.all(holders.map((entry, index) => execute(quotes[index]?.body.data.quoteId, entry.walletId, { idempotencyKey: crypto.randomUUID() })));
    expect(executed.map((response) => [response.status, response.body.data?.success])).toEqual(holders.map(() => [201, true]));
    expect(new Set(executed.map((response) => response.body.data.parentTransactionId)).size).toBe(20);
    for (const [index, entry] of holders.entries()) {
      expect(executed[index]?.body.data.walletId).toBe(entry.walletId);
      expect(await balances(entry.walletId)).toEqual({ USD: '90.00', BTC: quotes[index]?.body.data.totalToReceive });
    }
  });

  it('quotes and executions arriving together are written side by side, each kind in its own batches, and each gets its own answer', async () => {
    const executing = await Promise.all(Array.from({ length: 6 }, () => holder(t.clientA, { USD: 10_000n })));
    const quoting = await Promise.all(Array.from({ length: 6 }, () => holder(t.clientA, { USD: 10_000n })));
    const open = await Promise.all(executing.map((entry) => quoted(buyBtc(entry.customerId))));
    const responses = await Promise.all([
      ...executing.map((entry, index) => execute(open[index].quoteId, entry.walletId, { idempotencyKey: crypto.randomUUID() })),
      ...quoting.map((entry) => quote(buyBtc(entry.customerId, '20.00'))),
    ]);
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 201));
    const executions = responses.slice(0, 6).map((response) => response.body);
    const quotes = responses.slice(6).map((response) => response.body);
    expect(executions.map((body) => [body.message, body.data.quoteId, body.data.walletId, body.data.success])).toEqual(
      executing.map((entry, index) => ['Trade executed', open[index].quoteId, entry.walletId, true]),
    );
    expect(quotes.map((body) => [body.message, body.data.customerId, body.data.fromAmount, body.data.status])).toEqual(quoting.map((entry) => ['Quote created', entry.customerId, '20.00', 'OPEN']));
    for (const entry of executing) expect((await balances(entry.walletId)).USD).toBe('90.00');
    for (const entry of quoting) expect(await balances(entry.walletId)).toEqual({ USD: '100.00' });
  });

  it('when a batch written without reading is refused, it runs the checked way: 404 for a wallet of another customer or none, 422 for short money, the others execute', async () => {
    const good = await Promise.all(Array.from({ length: 3 }, () => holder(t.clientA, { USD: 10_000n })));
    const owner = await holder(t.clientA, { USD: 10_000n });
    const stranger = await holder(t.clientA, { USD: 10_000n });
    const short = await holder(t.clientA, { USD: 500n });
    const goodQuotes = await Promise.all(good.map((entry) => quoted(buyBtc(entry.customerId))));
    const ownerQuote = await quoted(buyBtc(owner.customerId));
    const shortQuote = await quoted(buyBtc(short.customerId));
    const before = await counts(executeRoute);
    const noWalletQuote = await quoted(buyBtc(owner.customerId));
    const [wrongWallet, noWallet, shortMoney, ...executed] = await Promise.all([
      execute(ownerQuote.quoteId, stranger.walletId, { idempotencyKey: crypto.randomUUID() }),
      execute(noWalletQuote.quoteId, crypto.randomUUID(), { idempotencyKey: crypto.randomUUID() }),
      execute(shortQuote.quoteId, short.walletId, { idempotencyKey: crypto.randomUUID() }),
      ...good.map((entry, index) => execute(goodQuotes[index].quoteId, entry.walletId, { idempotencyKey: crypto.randomUUID() })),
    ]);
    expectError(wrongWallet, 404, 'NOT_FOUND', 'walletId');
    expectError(noWallet, 404, 'NOT_FOUND', 'walletId');
    expectError(shortMoney, 422, 'INSUFFICIENT_FUNDS', 'walletId');
    expect(executed.map((response) => response.status)).toEqual([201, 201, 201]);
    const after = await counts(executeRoute);
    expect(after.retried).toBeGreaterThan(before.retried);
    expect(after.checked).toBeGreaterThan(before.checked);
    // Nothing moved for the refused two; the owner's quote is still open and executes from the owner's wallet.
    expect(await balances(stranger.walletId)).toEqual({ USD: '100.00' });
    expect(await balances(short.walletId)).toEqual({ USD: '5.00' });
    for (const entry of good) expect((await balances(entry.walletId)).USD).toBe('90.00');
    expect((await t.request({ url: `/v1/trades/quotes/${ownerQuote.quoteId}` })).body.data.status).toBe('OPEN');
    expect((await execute(ownerQuote.quoteId, owner.walletId)).status).toBe(201);
  });

  it('a quote given by another process (or before a restart) is read and locked before its execution; a second execution answers 409', async () => {
    const { customerId, walletId } = await holder(t.clientA, { USD: 10_000n });
    const given = await quoted(buyBtc(customerId));
    // A second app on the same database knows none of the first one's quotes.
    const { app: other } = await buildApp(t.deps, { logger: false });
    try {
      const response = await other.inject({ method: 'POST', url: `/v1/trades/quotes/${given.quoteId}/execute`, headers: { authorization: t.clientA.key }, payload: { walletId } });
      expect(response.statusCode, response.body).toBe(201);
      expect(JSON.parse(response.body).data.success).toBe(true);
    } finally {
      await other.close();
    }
    // The first app still remembers the quote as open: its write finds the quote executed and the checked way answers 409.
    expectError(await execute(given.quoteId, walletId, { idempotencyKey: crypto.randomUUID() }), 409, 'QUOTE_ALREADY_EXECUTED');
    expect((await balances(walletId)).USD).toBe('90.00');
  });

  it('one execution sent to two processes at once with one Idempotency-Key executes once; the other answers the replay or 409 in progress, never 500', async () => {
    // Until 2026-12-05 the process whose transaction recorded the key second answered 500 now and
    // then (the key's primary key refused it, and a request alone was not run again; found by an
    // audit on PostgreSQL, in 5 of 20 tries). The embedded database runs one transaction at a time,
    // where the two cannot meet.
    const { customerId, walletId } = await holder(t.clientA, { USD: 10_000n });
    const { app: other } = await buildApp(t.deps, { logger: false });
    try {
      for (let round = 0; round < 20; round += 1) {
        const given = await quoted(quoteBody(customerId, { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1.00', side: 'buy', direction: 'reverse' }));
        const idempotencyKey = crypto.randomUUID();
        const [here, there] = await Promise.all([
          execute(given.quoteId, walletId, { idempotencyKey }),
          other.inject({ method: 'POST', url: `/v1/trades/quotes/${given.quoteId as string}/execute`, headers: { authorization: t.clientA.key, 'idempotency-key': idempotencyKey }, payload: { walletId } }),
        ]);
        const statuses = [here.status, there.statusCode].sort();
        expect([['201', '201'], ['201', '409']].map((pair) => pair.join())).toContain(statuses.join());
        if (there.statusCode === 409) expect(JSON.parse(there.body).code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
        if (here.status === 409) expect(here.body.code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
      }
    } finally {
      await other.close();
    }
    // Twenty executions of 1.00 each, once each.
    expect((await balances(walletId)).USD).toBe('80.00');
  });

  it('quotes at once with an unknown customer among them: 404 for it (and its Idempotency-Key replays the 404), 201 for the others', async () => {
    const holders = await Promise.all(Array.from({ length: 4 }, () => holder()));
    const missingKey = crypto.randomUUID();
    const missing = { method: 'POST' as const, url: '/v1/trades/quotes', body: buyBtc(crypto.randomUUID()), idempotencyKey: missingKey };
    const [refused, ...given] = await Promise.all([t.request(missing), ...holders.map((entry) => quote(buyBtc(entry.customerId)))]);
    expectError(refused, 404, 'NOT_FOUND', 'customerId');
    expect(given.map((response) => response.status)).toEqual([201, 201, 201, 201]);
    const replay = await t.request(missing);
    expectError(replay, 404, 'NOT_FOUND', 'customerId');
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });
});

describe('plans of the batched trade writes', () => {
  const genericPlan = (statement: RawBuilder<unknown>) => planOf(t.deps.db, statement);

  it('the quote update finds each quote and its wallet by their whole key; the insert looks each customer up through an index', async () => {
    // The trap: as a join (EXISTS), the update's generic plan read every quote of the client by
    // client_id alone, for each execution: the benchmark slowed as quotes piled up.
    const { customerId, walletId } = await holder(t.clientA, { USD: 10_000n });
    const given = await quoted(quoteBody(customerId, { fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '10.00', side: 'buy', direction: 'reverse' }));
    const row = await t.deps.db.selectFrom('trade_quotes').selectAll().where('client_id', '=', t.clientA.id).where('id', '=', given.quoteId).executeTakeFirstOrThrow();
    const executed = { ...row, status: 'EXECUTED' as const, wallet_id: walletId, parent_transaction_id: crypto.randomUUID(), source_transaction_id: crypto.randomUUID(), target_transaction_id: crypto.randomUUID(), executed_at: row.created_at };
    // The client's quotes pile up (5,000 copies of this one, executed) and the table is analysed,
    // as autovacuum does while a load runs.
    await sql`INSERT INTO trade_quotes SELECT (q).* FROM (
        SELECT jsonb_populate_record(t, jsonb_build_object('id', gen_random_uuid(), 'status', 'EXECUTED', 'wallet_id', ${walletId}::uuid,
          'parent_transaction_id', gen_random_uuid(), 'source_transaction_id', gen_random_uuid(), 'target_transaction_id', gen_random_uuid(),
          'executed_at', t.created_at)) AS q
        FROM trade_quotes t, generate_series(1, 5000) WHERE t.client_id = ${t.clientA.id} AND t.id = ${row.id}) copies`.execute(t.deps.db);
    await sql`ANALYZE trade_quotes`.execute(t.deps.db);

    const update = scansOf(await genericPlan(quoteResultsStatement([executed])));
    expect(update.map((scan) => scan['Relation Name']).sort()).toEqual(['trade_quotes', 'wallets']);
    for (const scan of update) {
      const condition = scan['Index Cond'] ?? '';
      expect({ table: scan['Relation Name'], byWholeKey: /client_id = /.test(condition) && /\bid = /.test(condition) }, JSON.stringify(scan)).toEqual({ table: scan['Relation Name'], byWholeKey: true });
    }
    // On a small customers table the planner may use (client_id, created_at) and filter the id; it
    // must not read the table whole.
    const insert = scansOf(await genericPlan(insertQuotesStatement([row])));
    expect(insert.map((scan) => [scan['Relation Name'], scan['Node Type']])).toEqual([['customers', expect.stringMatching(/^Index (Only )?Scan$/)]]);
  });
});

describe('ledger verify', () => {
  it('is clean after every trade above', async () => {
    const report = await verifyLedger(t.deps.db);
    expect(report.checks.filter((check) => check.violationCount > 0)).toEqual([]);
    expect(report.ok).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/http/errors.js';
import {
  assetIdOf,
  assetPairIdOf,
  defaultAssetPairs,
  findAssetPair,
  registryAssetCodeForId,
  requireTradablePair,
  resolveTradeAsset,
  type AssetCodeForId,
} from './asset-pairs.js';

const sandbox = { mode: 'sandbox' as const, assetCodeForId: registryAssetCodeForId };
const production = { mode: 'production' as const, assetCodeForId: registryAssetCodeForId };

function expectUnknownAsset(run: () => unknown, field: string): AppError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AppError);
  expect((caught as AppError).code).toBe('UNKNOWN_ASSET');
  expect((caught as AppError).statusCode).toBe(400);
  expect((caught as AppError).details?.[0]?.field).toBe(field);
  return caught as AppError;
}

describe('the seeded catalogue', () => {
  it('lists the seven pairs of the contract, base first, each once', () => {
    expect(defaultAssetPairs.map((pair) => pair.symbol)).toEqual(['BTC-USD', 'ETH-USD', 'USDC-USD', 'USDT-USD', 'BTC-USDC', 'ETH-USDC', 'USDT-USDC']);
    for (const pair of defaultAssetPairs) expect(pair.symbol).toBe(`${pair.baseAsset}-${pair.quoteAsset}`);
  });

  it('writes limits in the base asset\'s scale, fee rate 0.001, all tradable', () => {
    expect(defaultAssetPairs.find((pair) => pair.symbol === 'BTC-USD')).toMatchObject({ minAmount: '0.00000100', maxAmount: '100.00000000', feeRate: '0.001', tradable: true });
    expect(defaultAssetPairs.find((pair) => pair.symbol === 'USDT-USDC')).toMatchObject({ minAmount: '1.000000', maxAmount: '1000000.000000' });
    expect(defaultAssetPairs.every((pair) => pair.tradable && pair.feeRate === '0.001')).toBe(true);
  });

  it('derives stable ids: the same in every process and release', () => {
    expect(assetPairIdOf('BTC-USD')).toBe('2f6c4a91-cc3c-5720-a083-6e505738cf52');
    // Asset ids moved to the registry (GET /v1/assets shows them) and kept their values.
    expect(assetIdOf('USD')).toBe('8b95a155-5e83-58e0-b5ce-2a328db9a43b');
    expect(defaultAssetPairs[0]?.id).toBe('2f6c4a91-cc3c-5720-a083-6e505738cf52');
    expect(new Set(defaultAssetPairs.map((pair) => pair.id)).size).toBe(defaultAssetPairs.length);
    expect(assetIdOf('BTC')).toBe(assetIdOf('BTC'));
    expect(assetIdOf('BTC')).not.toBe(assetIdOf('ETH'));
  });
});

describe('finding a pair', () => {
  it('finds it in either order', () => {
    expect(findAssetPair(defaultAssetPairs, 'BTC', 'USD')?.symbol).toBe('BTC-USD');
    expect(findAssetPair(defaultAssetPairs, 'USD', 'BTC')?.symbol).toBe('BTC-USD');
    expect(findAssetPair(defaultAssetPairs, 'USDC', 'USDT')?.symbol).toBe('USDT-USDC');
    expect(findAssetPair(defaultAssetPairs, 'BTC', 'ETH')).toBeUndefined();
  });

  it('requireTradablePair answers 422 PAIR_NOT_TRADABLE for a missing or switched-off pair', () => {
    const btc = resolveTradeAsset('BTC', 'fromAssetId', sandbox);
    const eth = resolveTradeAsset('ETH', 'toAssetId', sandbox);
    const usd = resolveTradeAsset('USD', 'toAssetId', sandbox);
    expect(() => requireTradablePair(defaultAssetPairs, btc, eth)).toThrow(/no asset pair trades BTC against ETH/);
    const off = defaultAssetPairs.map((pair) => ({ ...pair, tradable: pair.symbol !== 'BTC-USD' }));
    expect(() => requireTradablePair(off, usd, btc)).toThrow(/BTC-USD is not tradable/);
    expect(requireTradablePair(defaultAssetPairs, usd, btc).symbol).toBe('BTC-USD');
  });
});

describe('resolving fromAssetId / toAssetId / feeAssetId', () => {
  it('accepts a crypto symbol and an ISO 4217 code as the registry writes them', () => {
    expect(resolveTradeAsset('BTC', 'fromAssetId', sandbox).scale).toBe(8);
    expect(resolveTradeAsset('USD', 'toAssetId', sandbox).scale).toBe(2);
    expect(resolveTradeAsset('USDC', 'toAssetId', sandbox).code).toBe('USDC');
  });

  it('accepts the registry\'s asset ids, in either letter case', () => {
    expect(resolveTradeAsset(assetIdOf('ETH'), 'fromAssetId', sandbox).code).toBe('ETH');
    expect(resolveTradeAsset(assetIdOf('USD').toUpperCase(), 'fromAssetId', sandbox).code).toBe('USD');
  });

  it('asks the lookup it is given for ids, and only for ids', () => {
    const asked: string[] = [];
    const lookup: AssetCodeForId = (id) => {
      asked.push(id);
      return id === '0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b' ? 'USDT' : undefined;
    };
    expect(resolveTradeAsset('0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b', 'toAssetId', { mode: 'sandbox', assetCodeForId: lookup }).code).toBe('USDT');
    expect(resolveTradeAsset('BTC', 'toAssetId', { mode: 'sandbox', assetCodeForId: lookup }).code).toBe('BTC');
    expect(asked).toEqual(['0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b']);
  });

  it('refuses an unknown id, symbol or code with 400 UNKNOWN_ASSET naming the field', () => {
    expect(expectUnknownAsset(() => resolveTradeAsset('0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b', 'fromAssetId', sandbox), 'fromAssetId').message).toContain('no asset has the id');
    expectUnknownAsset(() => resolveTradeAsset('DOGE', 'toAssetId', sandbox), 'toAssetId');
    expectUnknownAsset(() => resolveTradeAsset('GBP', 'feeAssetId', sandbox), 'feeAssetId');
    // Codes are written as the registry writes them, as everywhere else in the API.
    expectUnknownAsset(() => resolveTradeAsset('btc', 'fromAssetId', sandbox), 'fromAssetId');
  });

  it('refuses the sandbox-only USD_TEST in production, by code and by id', () => {
    expect(resolveTradeAsset('USD_TEST', 'fromAssetId', sandbox).code).toBe('USD_TEST');
    expectUnknownAsset(() => resolveTradeAsset('USD_TEST', 'fromAssetId', production), 'fromAssetId');
    expectUnknownAsset(() => resolveTradeAsset(assetIdOf('USD_TEST'), 'fromAssetId', production), 'fromAssetId');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('GET /v1/digital/networks', () => {
  it('lists the four networks with their assets, formats, confirmations and memo support; the sandbox runs test networks', async () => {
    const response = await t.request({ url: '/v1/digital/networks' });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([
      { network: 'BITCOIN', assets: ['BTC'], addressFormat: 'BECH32', confirmationsRequired: 3, memoSupported: false, testnet: true },
      { network: 'ETHEREUM', assets: ['ETH', 'USDC', 'USDT'], addressFormat: 'EIP55', confirmationsRequired: 12, memoSupported: false, testnet: true },
      { network: 'TRON', assets: ['USDC', 'USDT'], addressFormat: 'BASE58CHECK', confirmationsRequired: 19, memoSupported: true, testnet: true },
      { network: 'SOLANA', assets: ['USDC', 'USDT'], addressFormat: 'BASE58', confirmationsRequired: 32, memoSupported: true, testnet: true },
    ]);
  });
});

describe('GET /v1/digital/withdrawal-fees: answered', () => {
  it.each([
    ['asset=BTC', { asset: 'BTC', network: 'BITCOIN', fee: '0.00005000', feeAsset: 'BTC' }],
    ['asset=USDC', { asset: 'USDC', network: 'ETHEREUM', fee: '2.000000', feeAsset: 'USDC' }],
    ['asset=USDT&network=TRON', { asset: 'USDT', network: 'TRON', fee: '1.000000', feeAsset: 'USDT' }],
    ['asset=USDC&network=SOLANA', { asset: 'USDC', network: 'SOLANA', fee: '0.100000', feeAsset: 'USDC' }],
    // At the asset's scale, as a withdrawal shows its fee.
    ['asset=ETH', { asset: 'ETH', network: 'ETHEREUM', fee: '0.000500000000000000', feeAsset: 'ETH' }],
  ])('%s', async (query, expected) => {
    const response = await t.request({ url: `/v1/digital/withdrawal-fees?${query}` });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(expected);
  });
});

describe('GET /v1/digital/withdrawal-fees: refused with 400 naming the field', () => {
  it.each([
    ['asset=DOGE', 'UNKNOWN_ASSET', 'asset'],
    ['asset=USD', 'VALIDATION_ERROR', 'asset'],
    ['asset=BTC&network=TRON', 'VALIDATION_ERROR', 'network'],
    ['asset=USDC&network=bitcoin', 'VALIDATION_ERROR', 'network'],
    ['network=TRON', 'VALIDATION_ERROR', 'asset'],
  ])('%s', async (query, code, field) => {
    const response = await t.request({ url: `/v1/digital/withdrawal-fees?${query}` });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(code);
    expect((response.body.details as Array<{ field: string }>).map((detail) => detail.field)).toContain(field);
  });
});

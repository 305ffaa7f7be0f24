import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatAmount, parseAmount } from './amount.js';
import { findAsset, listAssets, maxAmountMinor, type Asset } from './assets.js';
import { AppError } from '../http/errors.js';

const assets = listAssets('sandbox');
const assetArbitrary = fc.constantFrom(...assets);

function expectRefused(value: unknown, asset: Asset) {
  try {
    parseAmount(value, asset);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('INVALID_AMOUNT');
    expect((error as AppError).details?.[0]?.field).toBe('amount');
    return;
  }
  throw new Error(`accepted ${JSON.stringify(value)} for ${asset.code}`);
}

describe('amount round trip', () => {
  it('parse(format(x)) = x for every positive amount up to the maximum, for every asset', () => {
    fc.assert(
      fc.property(assetArbitrary, fc.bigInt({ min: 1n, max: 10n ** 33n }), (asset, raw) => {
        const minor = ((raw - 1n) % maxAmountMinor(asset)) + 1n;
        const text = formatAmount(minor, asset);
        expect(parseAmount(text, asset)).toBe(minor);
        expect(text.split('.')[1]?.length ?? 0).toBe(asset.scale);
      }),
    );
  });

  it('accepts fewer decimals than the scale and pads them', () => {
    const usd = findAsset('USD', 'sandbox');
    if (!usd) throw new Error('USD missing');
    expect(parseAmount('10', usd)).toBe(1000n);
    expect(parseAmount('10.5', usd)).toBe(1050n);
    expect(parseAmount('0.01', usd)).toBe(1n);
    expect(formatAmount(1250_50n, usd)).toBe('1250.50');
  });
});

describe('amount refusals', () => {
  it('refuses JSON numbers, null, booleans and objects', () => {
    fc.assert(
      fc.property(assetArbitrary, fc.oneof(fc.double(), fc.integer(), fc.constant(null), fc.boolean(), fc.object()), (asset, value) => {
        expectRefused(value, asset);
      }),
    );
  });

  it('refuses signs, exponents, spaces, separators, leading zeros and bare points', () => {
    const malformed = fc.oneof(
      fc.nat().map((n) => `-${n + 1}`),
      fc.nat().map((n) => `+${n + 1}`),
      fc.nat().map((n) => `${n + 1}e2`),
      fc.nat().map((n) => `${n + 1}E-1`),
      fc.nat().map((n) => ` ${n + 1}`),
      fc.nat().map((n) => `${n + 1} `),
      fc.nat().map((n) => `${n + 1},00`),
      fc.nat().map((n) => `1,${String(n).padStart(3, '0')}`),
      fc.nat().map((n) => `0${n + 1}`),
      fc.nat().map((n) => `.${n + 1}`),
      fc.nat().map((n) => `${n + 1}.`),
      fc.nat().map((n) => `0x${n + 1}`),
      fc.constantFrom('', 'NaN', 'Infinity', '1_000', '١٢', '1.2.3', '0', '0.0', '0.00', '00.10'),
    );
    fc.assert(fc.property(assetArbitrary, malformed, (asset, value) => expectRefused(value, asset)));
  });

  it('refuses more decimals than the asset scale', () => {
    fc.assert(
      fc.property(assetArbitrary, fc.integer({ min: 1, max: 5 }), (asset, extra) => {
        expectRefused(`1.${'1'.repeat(asset.scale + extra)}`, asset);
      }),
    );
  });

  it('refuses amounts above the maximum', () => {
    fc.assert(
      fc.property(assetArbitrary, fc.bigInt({ min: 1n, max: 10n ** 20n }), (asset, over) => {
        expectRefused(formatAmount(maxAmountMinor(asset) + over, asset), asset);
      }),
    );
  });
});

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AppError } from '../../platform/http/errors.js';
import { AssertionError } from '../../platform/assert.js';
import { formatAmount } from '../../platform/money/amount.js';
import { findAsset, maxAmountMinor } from '../../platform/money/assets.js';
import { assetIdOf, defaultAssetPairs, findAssetPair, registryAssetCodeForId, type AssetPair } from './asset-pairs.js';
import { crossMidPrice, parsePrice, sandboxDefaultPrice, type Price } from './prices.js';
import {
  computeQuote,
  isLiquidityFailureAmount,
  isQuoteExpired,
  quoteDisclaimer,
  quoteExpiresAt,
  quoteFigures,
  resolveQuoteRequest,
  type QuoteRequestFields,
  type ResolvedQuoteRequest,
  type TradeDirection,
} from './quote-math.js';
import type { Ratio } from './ratio.js';

const context = { mode: 'sandbox' as const, pairs: defaultAssetPairs, assetCodeForId: registryAssetCodeForId };

function request(fields: Partial<QuoteRequestFields> & Pick<QuoteRequestFields, 'fromAssetId' | 'toAssetId'>): QuoteRequestFields {
  // By default the direction and side that agree with the pair (direct when from is the base asset).
  const direct = findAssetPair(defaultAssetPairs, fields.fromAssetId, fields.toAssetId)?.baseAsset === fields.fromAssetId;
  return {
    fromAmount: '1',
    feeAssetId: fields.fromAssetId,
    direction: direct ? 'direct' : 'reverse',
    side: direct ? 'sell' : 'buy',
    ...fields,
  };
}

function defaultMid(resolved: ResolvedQuoteRequest): Ratio {
  const mid = crossMidPrice(resolved.baseAsset.code, resolved.quoteAsset.code, sandboxDefaultPrice);
  if (!mid) throw new Error(`no default price for ${resolved.pair.symbol}`);
  return mid;
}

/** Resolves and prices a request at the seeded prices (or the prices given), returning the API figures. */
function quote(fields: QuoteRequestFields, options: { spreadBps?: number; prices?: Record<string, string>; pairs?: readonly AssetPair[] } = {}) {
  const resolved = resolveQuoteRequest(fields, { ...context, pairs: options.pairs ?? defaultAssetPairs });
  const priceOf = (symbol: string): Price | undefined => {
    const given = options.prices?.[symbol];
    return given === undefined ? sandboxDefaultPrice(symbol) : parsePrice(given);
  };
  const midPrice = crossMidPrice(resolved.baseAsset.code, resolved.quoteAsset.code, priceOf);
  if (!midPrice) throw new Error('no mid price');
  return quoteFigures(computeQuote({ ...resolved, midPrice, spreadBps: options.spreadBps ?? 0 }));
}

function expectAppError(run: () => unknown, code: string, field?: string): AppError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AppError);
  const error = caught as AppError;
  expect(error.code).toBe(code);
  if (field !== undefined) expect(error.details?.[0]?.field).toBe(field);
  return error;
}

function pairNamed(symbol: string): AssetPair {
  const pair = defaultAssetPairs.find((candidate) => candidate.symbol === symbol);
  if (!pair) throw new Error(`no pair ${symbol}`);
  return pair;
}

describe('quote figures: worked examples at the seeded prices (BTC-USD 60000.00, ETH-USD 3000.00, USDC-USD 1.00)', () => {
  it('direct (sell BTC for USD), fee in BTC: the fee comes off the BTC before it is exchanged', () => {
    expect(quote(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.5', feeAssetId: 'BTC' }))).toEqual({
      pricePerUnit: '60000.00',
      fee: '0.001',
      feeAmount: '0.00050000',
      feeAsset: 'BTC',
      totalPrice: '0.50000000',
      totalToReceive: '29970.00',
      fromAsset: 'BTC',
      toAsset: 'USD',
      fromAmount: '0.50000000',
      amountToSpend: '0.49950000',
      pairSymbol: 'BTC-USD',
      direction: 'direct',
      side: 'sell',
    });
  });

  it('direct (sell BTC for USD), fee in USD: the fee comes off the USD the exchange yields', () => {
    expect(quote(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.5', feeAssetId: 'USD' }))).toMatchObject({
      pricePerUnit: '60000.00',
      feeAmount: '30.00',
      feeAsset: 'USD',
      totalPrice: '0.50000000',
      amountToSpend: '0.50000000',
      totalToReceive: '29970.00',
    });
  });

  it('reverse (buy BTC with USD), fee in USD', () => {
    expect(quote(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', feeAssetId: 'USD' }))).toMatchObject({
      pricePerUnit: '60000.00',
      feeAmount: '1.00',
      feeAsset: 'USD',
      totalPrice: '1000.00',
      amountToSpend: '999.00',
      totalToReceive: '0.01665000',
      direction: 'reverse',
      side: 'buy',
    });
  });

  it('reverse (buy BTC with USD), fee in BTC: received rounds down (0.016666666… → 0.01666666), the fee up (0.0000166666… → 0.00001667)', () => {
    expect(quote(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', feeAssetId: 'BTC' }))).toMatchObject({
      feeAmount: '0.00001667',
      feeAsset: 'BTC',
      totalPrice: '1000.00',
      amountToSpend: '1000.00',
      totalToReceive: '0.01664999',
    });
  });

  it('a crossed pair (ETH-USDC = ETH-USD ÷ USDC-USD), both directions, fee in the to-asset', () => {
    expect(quote(request({ fromAssetId: 'ETH', toAssetId: 'USDC', fromAmount: '1.25', feeAssetId: 'USDC' }))).toMatchObject({
      pricePerUnit: '3000.00',
      feeAmount: '3.750000',
      totalToReceive: '3746.250000',
    });
    expect(quote(request({ fromAssetId: 'USDC', toAssetId: 'ETH', fromAmount: '100', feeAssetId: 'ETH' }))).toMatchObject({
      pricePerUnit: '3000.00',
      feeAmount: '0.000033333333333334',
      totalToReceive: '0.033299999999999999',
    });
  });

  it('a spread moves the price against the customer on both sides: down when selling, up when buying', () => {
    expect(quote(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.5', feeAssetId: 'USD' }), { spreadBps: 25 })).toMatchObject({
      pricePerUnit: '59850.00',
      feeAmount: '29.93',
      totalToReceive: '29895.07',
    });
    expect(quote(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1000.00', feeAssetId: 'USD' }), { spreadBps: 25 })).toMatchObject({
      pricePerUnit: '60150.00',
      feeAmount: '1.00',
      totalToReceive: '0.01660847',
    });
  });

  it('a cross rate that is not a finite decimal is rounded to the pair\'s price decimals against the customer', () => {
    // 60000 ÷ 0.9999 = 60006.000600060006…
    const prices = { 'USDC-USD': '0.9999' };
    expect(quote(request({ fromAssetId: 'BTC', toAssetId: 'USDC', fromAmount: '1', feeAssetId: 'USDC' }), { prices })).toMatchObject({
      pricePerUnit: '60006.00',
      feeAmount: '60.006000',
      totalToReceive: '59945.994000',
    });
    expect(quote(request({ fromAssetId: 'USDC', toAssetId: 'BTC', fromAmount: '60006.01', feeAssetId: 'USDC' }), { prices })).toMatchObject({
      pricePerUnit: '60006.01',
      feeAmount: '60.006010',
      totalToReceive: '0.99900000',
    });
  });

  it('accepts asset ids (UUIDs) for the three asset fields', () => {
    const figures = quote({
      fromAssetId: assetIdOf('BTC'),
      toAssetId: assetIdOf('USD'),
      feeAssetId: assetIdOf('USD'),
      fromAmount: '0.5',
      direction: 'direct',
      side: 'sell',
    });
    expect(figures).toMatchObject({ fromAsset: 'BTC', toAsset: 'USD', feeAsset: 'USD', totalToReceive: '29970.00' });
  });
});

// ---------------------------------------------------------------------------------------------
// An independent computation of the same figures, straight from integers: every value is one
// numerator over one denominator, divided once with an explicit floor or ceiling. It shares no
// code with quote-math.ts or ratio.ts.

function floorDivision(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  return numerator % denominator !== 0n && numerator < 0n !== denominator < 0n ? quotient - 1n : quotient;
}

function ceilDivision(numerator: bigint, denominator: bigint): bigint {
  return -floorDivision(-numerator, denominator);
}

const pow10 = (exponent: number) => 10n ** BigInt(exponent);

/** "0.001" → [1n, 1000n], by hand. */
function decimalFraction(text: string): [bigint, bigint] {
  const [whole = '0', decimals = ''] = text.split('.');
  return [BigInt(whole + decimals), pow10(decimals.length)];
}

interface Expected {
  priceUnits: bigint;
  feeMinor: bigint;
  receiveMinor: bigint;
  grossMinor: bigint;
  /** The customer's exact entitlement at the mid price with an unrounded fee: [numerator, denominator] in to-asset minor units. */
  atMid: [bigint, bigint];
  /** The exact fee at the executed price, in fee-asset minor units. */
  exactFee: [bigint, bigint];
}

function expectedFigures(args: {
  direction: TradeDirection;
  feeInFrom: boolean;
  fromMinor: bigint;
  fromScale: number;
  toScale: number;
  priceDecimals: number;
  midNumerator: bigint;
  midDenominator: bigint;
  spreadBps: bigint;
  feeRate: string;
}): Expected {
  const { direction, fromMinor, fromScale, toScale, priceDecimals, midNumerator: a, midDenominator: b, spreadBps } = args;
  const [rateNumerator, rateDenominator] = decimalFraction(args.feeRate);
  const priceUnits =
    direction === 'direct'
      ? floorDivision(a * (10_000n - spreadBps) * pow10(priceDecimals), b * 10_000n)
      : ceilDivision(a * (10_000n + spreadBps) * pow10(priceDecimals), b * 10_000n);
  // Value in to-asset minor units of x from-asset minor units at the executed price, as a fraction.
  const converted = (x: bigint): [bigint, bigint] =>
    direction === 'direct'
      ? [x * priceUnits * pow10(toScale), pow10(fromScale) * pow10(priceDecimals)]
      : [x * pow10(priceDecimals) * pow10(toScale), pow10(fromScale) * priceUnits];
  // Same at the unrounded mid price.
  const atMidOf = (x: [bigint, bigint]): [bigint, bigint] =>
    direction === 'direct'
      ? [x[0] * a * pow10(toScale), x[1] * b * pow10(fromScale)]
      : [x[0] * b * pow10(toScale), x[1] * a * pow10(fromScale)];

  if (args.feeInFrom) {
    const feeMinor = ceilDivision(fromMinor * rateNumerator, rateDenominator);
    const [n, d] = converted(fromMinor - feeMinor);
    const receiveMinor = floorDivision(n, d);
    return {
      priceUnits,
      feeMinor,
      receiveMinor,
      grossMinor: receiveMinor,
      atMid: atMidOf([fromMinor * (rateDenominator - rateNumerator), rateDenominator]),
      exactFee: [fromMinor * rateNumerator, rateDenominator],
    };
  }
  const [n, d] = converted(fromMinor);
  const feeMinor = ceilDivision(n * rateNumerator, d * rateDenominator);
  const grossMinor = floorDivision(n, d);
  return {
    priceUnits,
    feeMinor,
    receiveMinor: grossMinor - feeMinor,
    grossMinor,
    atMid: atMidOf([fromMinor * (rateDenominator - rateNumerator), rateDenominator]),
    exactFee: [n * rateNumerator, d * rateDenominator],
  };
}

/** Pairs with limits wide open, so only the "receives nothing" and "too large" limits can refuse. */
function widePair(pair: AssetPair): AssetPair {
  const base = findAsset(pair.baseAsset, 'sandbox');
  if (!base) throw new Error(`no asset ${pair.baseAsset}`);
  return { ...pair, minAmount: formatAmount(1n, base), maxAmount: formatAmount(maxAmountMinor(base), base) };
}

describe('quote figures: property against the independent computation', () => {
  it('matches it exactly, and never favours the customer over the exact values', () => {
    let priced = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...defaultAssetPairs),
        fc.constantFrom<TradeDirection>('direct', 'reverse'),
        fc.boolean(),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.bigInt({ min: 1n, max: 10n ** 8n }),
        fc.integer({ min: 0, max: 500 }),
        fc.bigInt({ min: 1n, max: 10n ** 26n }),
        fc.constantFrom('0.001', '0', '0.0025', '0.3333'),
        (basePair, direction, feeInFrom, midNumerator, midDenominator, spreadBps, rawAmount, feeRate) => {
          const pair = { ...widePair(basePair), feeRate };
          const fromCode = direction === 'direct' ? pair.baseAsset : pair.quoteAsset;
          const toCode = direction === 'direct' ? pair.quoteAsset : pair.baseAsset;
          const skeleton = resolveQuoteRequest(
            { fromAssetId: fromCode, toAssetId: toCode, fromAmount: '1', feeAssetId: feeInFrom ? fromCode : toCode, direction, side: direction === 'direct' ? 'sell' : 'buy' },
            { ...context, pairs: [pair] },
          );
          const fromMinor = ((rawAmount - 1n) % maxAmountMinor(skeleton.fromAsset)) + 1n;
          const input = { ...skeleton, fromAmountMinor: fromMinor, midPrice: { numerator: midNumerator, denominator: midDenominator }, spreadBps };
          const expected = expectedFigures({
            direction,
            feeInFrom,
            fromMinor,
            fromScale: skeleton.fromAsset.scale,
            toScale: skeleton.toAsset.scale,
            priceDecimals: pair.priceDecimals,
            midNumerator,
            midDenominator,
            spreadBps: BigInt(spreadBps),
            feeRate,
          });

          const shouldRefuse = expected.receiveMinor <= 0n || expected.grossMinor > maxAmountMinor(skeleton.toAsset);
          if (shouldRefuse) {
            expectAppError(() => computeQuote(input), 'AMOUNT_OUT_OF_RANGE', 'fromAmount');
            refused += 1;
            return;
          }
          const amounts = computeQuote(input);
          priced += 1;
          expect(amounts.pricePerUnitUnits).toBe(expected.priceUnits);
          expect(amounts.feeAmountMinor).toBe(expected.feeMinor);
          expect(amounts.totalToReceiveMinor).toBe(expected.receiveMinor);
          expect(amounts.grossToReceiveMinor).toBe(expected.grossMinor);

          // Received never exceeds what the mid price and an exact fee would give.
          expect(amounts.totalToReceiveMinor * expected.atMid[1] <= expected.atMid[0]).toBe(true);
          // The fee is never below its exact value, and over it by less than one minor unit.
          expect(amounts.feeAmountMinor * expected.exactFee[1] >= expected.exactFee[0]).toBe(true);
          expect((amounts.feeAmountMinor - 1n) * expected.exactFee[1] < expected.exactFee[0]).toBe(true);
          // What is exchanged plus a from-asset fee never exceeds the stated wallet debit (totalPrice).
          const fromFee = feeInFrom ? amounts.feeAmountMinor : 0n;
          expect(amounts.amountToSpendMinor + fromFee).toBeLessThanOrEqual(amounts.fromAmountMinor);
          expect(amounts.fromAmountMinor).toBe(fromMinor);
          // What is credited plus a to-asset fee is what the exchange yields.
          expect(amounts.totalToReceiveMinor + (feeInFrom ? 0n : amounts.feeAmountMinor)).toBe(amounts.grossToReceiveMinor);
        },
      ),
      { numRuns: 2000 },
    );
    // Both branches of the property must really have been exercised.
    expect(priced).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(0);
  });

  it('the executed price is never better for the customer than the mid price', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...defaultAssetPairs),
        fc.constantFrom<TradeDirection>('direct', 'reverse'),
        fc.bigInt({ min: 1n, max: 10n ** 10n }),
        fc.bigInt({ min: 1n, max: 10n ** 6n }),
        fc.integer({ min: 0, max: 500 }),
        (basePair, direction, midNumerator, midDenominator, spreadBps) => {
          const pair = widePair(basePair);
          const fromCode = direction === 'direct' ? pair.baseAsset : pair.quoteAsset;
          const toCode = direction === 'direct' ? pair.quoteAsset : pair.baseAsset;
          const resolved = resolveQuoteRequest(
            { fromAssetId: fromCode, toAssetId: toCode, fromAmount: '1', feeAssetId: fromCode, direction, side: direction === 'direct' ? 'sell' : 'buy' },
            { ...context, pairs: [pair] },
          );
          let amounts;
          try {
            amounts = computeQuote({ ...resolved, midPrice: { numerator: midNumerator, denominator: midDenominator }, spreadBps });
          } catch (error) {
            if (error instanceof AppError && error.code === 'AMOUNT_OUT_OF_RANGE') return;
            throw error;
          }
          // price × 10^-decimals compared with numerator / denominator
          const shown = amounts.pricePerUnitUnits * midDenominator;
          const mid = midNumerator * 10n ** BigInt(pair.priceDecimals);
          if (direction === 'direct') expect(shown <= mid).toBe(true);
          else expect(shown >= mid).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('400 UNKNOWN_ASSET', () => {
  it('names the field whose asset is unknown', () => {
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'DOGE', toAssetId: 'USD' }), context), 'UNKNOWN_ASSET', 'fromAssetId');
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'DOGE' }), context), 'UNKNOWN_ASSET', 'toAssetId');
    expectAppError(
      () => resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'USD', feeAssetId: '0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b' }), context),
      'UNKNOWN_ASSET',
      'feeAssetId',
    );
  });
});

describe('400 VALIDATION_ERROR on feeAssetId', () => {
  it('refuses a fee asset that is neither the from nor the to asset', () => {
    const error = expectAppError(
      () => resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'USD', feeAssetId: 'USDC' }), context),
      'VALIDATION_ERROR',
      'feeAssetId',
    );
    expect(error.statusCode).toBe(400);
  });
});

describe('400 INVALID_AMOUNT', () => {
  it('refuses more decimals than the from-asset has, a JSON number, and zero', () => {
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '10.001' }), context), 'INVALID_AMOUNT', 'fromAmount');
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: 10 }), context), 'INVALID_AMOUNT', 'fromAmount');
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0' }), context), 'INVALID_AMOUNT', 'fromAmount');
  });
});

describe('422 PAIR_NOT_TRADABLE', () => {
  it('refuses two assets no pair joins, and the same asset twice', () => {
    const error = expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'ETH' }), context), 'PAIR_NOT_TRADABLE', 'toAssetId');
    expect(error.statusCode).toBe(422);
    const same = expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'BTC' }), context), 'PAIR_NOT_TRADABLE', 'toAssetId');
    expect(same.details?.[0]?.message).toMatch(/the same asset as fromAssetId/);
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'USD', toAssetId: 'EUR' }), context), 'PAIR_NOT_TRADABLE', 'toAssetId');
  });

  it('refuses a listed pair whose tradable flag is off, in either order', () => {
    const pairs = defaultAssetPairs.map((pair) => (pair.symbol === 'BTC-USD' ? { ...pair, tradable: false } : pair));
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'USD' }), { ...context, pairs }), 'PAIR_NOT_TRADABLE', 'toAssetId');
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'USD', toAssetId: 'BTC' }), { ...context, pairs }), 'PAIR_NOT_TRADABLE', 'toAssetId');
    expect(resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'USDC' }), { ...context, pairs }).pair.symbol).toBe('BTC-USDC');
  });
});

describe('400 DIRECTION_MISMATCH', () => {
  it('refuses reverse for base → quote and direct for quote → base', () => {
    const error = expectAppError(
      () => resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'USD', direction: 'reverse', side: 'buy' }), context),
      'DIRECTION_MISMATCH',
      'direction',
    );
    expect(error.statusCode).toBe(400);
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'USD', toAssetId: 'BTC', direction: 'direct', side: 'sell' }), context), 'DIRECTION_MISMATCH', 'direction');
  });

  it('is checked before the side', () => {
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'USDC', toAssetId: 'USDT', direction: 'direct', side: 'sell' }), context), 'DIRECTION_MISMATCH');
  });
});

describe('400 SIDE_MISMATCH', () => {
  it('refuses buy with direct and sell with reverse', () => {
    const error = expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'USD', side: 'buy' }), context), 'SIDE_MISMATCH', 'side');
    expect(error.statusCode).toBe(400);
    expectAppError(() => resolveQuoteRequest(request({ fromAssetId: 'USD', toAssetId: 'BTC', side: 'sell' }), context), 'SIDE_MISMATCH', 'side');
  });
});

describe('422 AMOUNT_OUT_OF_RANGE', () => {
  it('refuses a direct base amount below minAmount or above maxAmount, and accepts both bounds', () => {
    const btcUsd = pairNamed('BTC-USD');
    expectAppError(() => quote(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.00000099' })), 'AMOUNT_OUT_OF_RANGE', 'fromAmount');
    expectAppError(() => quote(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '100.00000001' })), 'AMOUNT_OUT_OF_RANGE', 'fromAmount');
    expect(quote(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: btcUsd.minAmount, feeAssetId: 'USD' })).totalToReceive).toBe('0.05');
    expect(quote(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: btcUsd.maxAmount })).totalToReceive).toBe('5994000.00');
  });

  it('judges a reverse trade by the base amount it yields', () => {
    // 1.00 USD yields 0.00001666 BTC before the BTC fee (in range); 6000000.00 USD yields exactly
    // 100 BTC, the maximum, before the BTC fee; one cent more yields more than 100 BTC.
    expect(quote(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '1.00', feeAssetId: 'BTC' })).totalToReceive).toBe('0.00001664');
    expect(quote(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '6000000.00', feeAssetId: 'BTC' })).totalToReceive).toBe('99.90000000');
    expectAppError(() => quote(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '6000000.01', feeAssetId: 'BTC' })), 'AMOUNT_OUT_OF_RANGE', 'fromAmount');
    // At a BTC price of 1,000,000 USD, 0.50 USD buys 0.0000005 BTC, below the 0.000001 minimum.
    expectAppError(
      () => quote(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '0.50' }), { prices: { 'BTC-USD': '1000000' } }),
      'AMOUNT_OUT_OF_RANGE',
      'fromAmount',
    );
  });

  it('refuses a trade that would leave the customer nothing after the fee', () => {
    // 0.000001 BTC at 1.00 USD is 0.000001 USD: nothing in cents.
    const error = expectAppError(
      () => quote(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.000001' }), { prices: { 'BTC-USD': '1.00' } }),
      'AMOUNT_OUT_OF_RANGE',
    );
    expect(error.message).toContain('receive no USD');
    expect(error.statusCode).toBe(422);
  });
});

describe('sandbox liquidity-failure amounts', () => {
  const resolved = (fromAssetId: string, toAssetId: string, fromAmount: string) => resolveQuoteRequest(request({ fromAssetId, toAssetId, fromAmount }), context);

  it('recognises 0.00000999 BTC and 9.99 of a fiat currency or stablecoin, by value', () => {
    for (const [from, to, amount] of [
      ['BTC', 'USD', '0.00000999'],
      ['USD', 'BTC', '9.99'],
      ['USDC', 'ETH', '9.990000'],
      ['USDT', 'USDC', '9.99'],
    ] as const) {
      const trade = resolved(from, to, amount);
      expect(isLiquidityFailureAmount(trade.fromAsset, trade.fromAmountMinor), `${amount} ${from}`).toBe(true);
    }
  });

  it('does not flag neighbouring amounts, or ETH', () => {
    for (const [from, to, amount] of [
      ['BTC', 'USD', '0.00000998'],
      ['USD', 'BTC', '9.98'],
      ['USD', 'BTC', '99.90'],
      ['ETH', 'USD', '0.00000999'],
      ['ETH', 'USD', '9.99'],
    ] as const) {
      const trade = resolved(from, to, amount);
      expect(isLiquidityFailureAmount(trade.fromAsset, trade.fromAmountMinor), `${amount} ${from}`).toBe(false);
    }
  });

  it('is still quoted normally (the failure comes at execution)', () => {
    expect(quote(request({ fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.00000999', feeAssetId: 'USD' })).totalToReceive).toBe('0.58');
    expect(quote(request({ fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: '9.99' })).totalToReceive).toBe('0.00016633');
  });
});

describe('quote expiry', () => {
  it('expires ttl seconds after creation, from that instant on', () => {
    const createdAt = new Date('2026-03-01T12:00:00.000Z');
    const expiresAt = quoteExpiresAt(createdAt, 300);
    expect(expiresAt.toISOString()).toBe('2026-03-01T12:05:00.000Z');
    expect(isQuoteExpired(expiresAt, new Date('2026-03-01T12:04:59.999Z'))).toBe(false);
    expect(isQuoteExpired(expiresAt, expiresAt)).toBe(true);
  });

  it('refuses a TTL outside 5..900 seconds as a configuration bug', () => {
    expect(() => quoteExpiresAt(new Date(0), 4)).toThrow(AssertionError);
    expect(() => quoteExpiresAt(new Date(0), 901)).toThrow(AssertionError);
    expect(quoteExpiresAt(new Date(0), 5).getTime()).toBe(5000);
  });

  it('states the TTL in the disclaimer', () => {
    expect(quoteDisclaimer(300)).toContain('expires in 5 minutes');
    expect(quoteDisclaimer(60)).toContain('expires in 1 minute,');
    expect(quoteDisclaimer(90)).toContain('expires in 90 seconds');
  });
});

describe('input bugs are assertions, not client errors', () => {
  it('refuses a spread outside its bounds and a zero mid price', () => {
    const resolved = resolveQuoteRequest(request({ fromAssetId: 'BTC', toAssetId: 'USD' }), context);
    const midPrice = defaultMid(resolved);
    expect(() => computeQuote({ ...resolved, midPrice, spreadBps: -1 })).toThrow(AssertionError);
    expect(() => computeQuote({ ...resolved, midPrice, spreadBps: 5001 })).toThrow(AssertionError);
    expect(() => computeQuote({ ...resolved, midPrice, spreadBps: 1.5 })).toThrow(AssertionError);
    expect(() => computeQuote({ ...resolved, midPrice: { numerator: 0n, denominator: 1n }, spreadBps: 0 })).toThrow(AssertionError);
  });
});

import { assert } from '../../platform/assert.js';
import { AppError } from '../../platform/http/errors.js';
import { formatAmount, parseAmount, parseNonNegativeAmount } from '../../platform/money/amount.js';
import { maxAmountMinor, type Asset } from '../../platform/money/assets.js';
import { requireTradablePair, resolveTradeAsset, type AssetPair, type TradeAssetLookup } from './asset-pairs.js';
import {
  ceilAtScale,
  compareRatios,
  divideRatios,
  floorAtScale,
  multiplyRatios,
  ratio,
  ratioFromScaled,
  type Ratio,
} from './ratio.js';

/** `direct`: from the pair's base asset to its quote asset; `reverse`: from quote to base. */
export type TradeDirection = 'direct' | 'reverse';
/** Relative to the pair's base asset: `sell` goes with `direct`, `buy` with `reverse`. */
export type TradeSide = 'buy' | 'sell';

/** The quote request's fields (contract §7), after the route schema checked their types. */
export interface QuoteRequestFields {
  fromAssetId: string;
  toAssetId: string;
  /** Decimal string of the from-asset the customer gives up. */
  fromAmount: unknown;
  feeAssetId: string;
  side: TradeSide;
  direction: TradeDirection;
}

/** A quote request whose assets, pair, direction and side agree; the amount is in minor units. */
export interface ResolvedQuoteRequest {
  pair: AssetPair;
  baseAsset: Asset;
  quoteAsset: Asset;
  fromAsset: Asset;
  toAsset: Asset;
  feeAsset: Asset;
  direction: TradeDirection;
  side: TradeSide;
  fromAmountMinor: bigint;
}

export interface QuoteResolutionContext extends TradeAssetLookup {
  pairs: readonly AssetPair[];
}

const sideOfDirection: Record<TradeDirection, TradeSide> = { direct: 'sell', reverse: 'buy' };

/**
 * Checks a quote request against the catalogue. The first failing rule answers:
 * 1. `fromAssetId`, `toAssetId`, `feeAssetId` name known assets (400 UNKNOWN_ASSET);
 * 2. the fee asset is the from or the to asset (400 VALIDATION_ERROR on `feeAssetId`);
 * 3. `fromAmount` is a positive amount within the from-asset's scale (400 INVALID_AMOUNT);
 * 4. a tradable pair joins the two assets, in either order (422 PAIR_NOT_TRADABLE);
 * 5. `direction` matches the assets (400 DIRECTION_MISMATCH);
 * 6. `side` matches the direction (400 SIDE_MISMATCH).
 * The amount range is checked by computeQuote, which needs the price.
 */
export function resolveQuoteRequest(request: QuoteRequestFields, context: QuoteResolutionContext): ResolvedQuoteRequest {
  const fromAsset = resolveTradeAsset(request.fromAssetId, 'fromAssetId', context);
  const toAsset = resolveTradeAsset(request.toAssetId, 'toAssetId', context);
  const feeAsset = resolveTradeAsset(request.feeAssetId, 'feeAssetId', context);
  if (feeAsset.code !== fromAsset.code && feeAsset.code !== toAsset.code) {
    const message = `the fee is charged in the from asset (${fromAsset.code}) or the to asset (${toAsset.code}), not ${feeAsset.code}`;
    throw new AppError('VALIDATION_ERROR', `feeAssetId: ${message}`, { details: [{ field: 'feeAssetId', message }] });
  }
  const fromAmountMinor = parseAmount(request.fromAmount, fromAsset, 'fromAmount');
  const pair = requireTradablePair(context.pairs, fromAsset, toAsset);

  const actualDirection: TradeDirection = fromAsset.code === pair.baseAsset ? 'direct' : 'reverse';
  if (request.direction !== actualDirection) {
    const message = `${fromAsset.code} to ${toAsset.code} on ${pair.symbol} is "${actualDirection}" (direct sells the base asset ${pair.baseAsset} for ${pair.quoteAsset}, reverse buys it)`;
    throw new AppError('DIRECTION_MISMATCH', `direction: ${message}`, { details: [{ field: 'direction', message }] });
  }
  const expectedSide = sideOfDirection[actualDirection];
  if (request.side !== expectedSide) {
    const message = `a ${actualDirection} trade ${expectedSide === 'sell' ? 'sells' : 'buys'} the base asset ${pair.baseAsset}, so side must be "${expectedSide}"`;
    throw new AppError('SIDE_MISMATCH', `side: ${message}`, { details: [{ field: 'side', message }] });
  }

  const baseAsset = actualDirection === 'direct' ? fromAsset : toAsset;
  const quoteAsset = actualDirection === 'direct' ? toAsset : fromAsset;
  return { pair, baseAsset, quoteAsset, fromAsset, toAsset, feeAsset, direction: actualDirection, side: expectedSide, fromAmountMinor };
}

/** Spread bounds, in basis points of the mid price; the configuration keeps inside them. */
export const spreadBpsDefault = 0;
export const spreadBpsMax = 5_000;

export interface QuoteInput extends ResolvedQuoteRequest {
  /** Price of one base unit in quote units, from the PriceProvider; positive. */
  midPrice: Ratio;
  /** Taken from the mid price against the customer (a whole number of basis points). */
  spreadBps: number;
}

/** Every figure of a quote, exact, in minor units of the asset named beside it. */
export interface QuoteAmounts {
  pairSymbol: string;
  direction: TradeDirection;
  side: TradeSide;
  baseAsset: Asset;
  quoteAsset: Asset;
  fromAsset: Asset;
  toAsset: Asset;
  feeAsset: Asset;
  /** The executed price: units of 10^-priceDecimals of the quote asset for one base unit. */
  pricePerUnitUnits: bigint;
  priceDecimals: number;
  /** The pair's fee rate, as the pair states it ("0.001"). */
  feeRate: string;
  /** What the customer gives up, in the from-asset; also `totalPrice`, the wallet debit. */
  fromAmountMinor: bigint;
  /** From-asset exchanged at the price: fromAmount less a fee taken in the from-asset. */
  amountToSpendMinor: bigint;
  /** To-asset the exchange yields before a fee taken in the to-asset. */
  grossToReceiveMinor: bigint;
  feeAmountMinor: bigint;
  /** To-asset credited to the customer. */
  totalToReceiveMinor: bigint;
  /** The base-asset side of the trade the pair's limits apply to (see computeQuote). */
  baseAmountMinor: bigint;
}

const basisPointsPerOne = 10_000n;

/**
 * Prices a trade exactly; only whole minor units leave this function.
 *
 * - Executed price (`pricePerUnit`): the mid price moved by the spread against the customer and
 *   rounded against the customer to the pair's price decimals (down when the customer sells the
 *   base asset, up when the customer buys it). Every amount below derives from this price, so
 *   the figures of a quote agree with the price it shows.
 * - Fee in the from-asset: feeAmount = ⌈fromAmount × feeRate⌉; amountToSpend = fromAmount −
 *   feeAmount; totalToReceive = ⌊amountToSpend converted⌋.
 * - Fee in the to-asset: gross = fromAmount converted (exact); feeAmount = ⌈gross × feeRate⌉;
 *   totalToReceive = ⌊gross⌋ − feeAmount.
 * - Limits: the base amount (fromAmount when direct; the base the exchange yields before a
 *   base-asset fee when reverse) must lie within the pair's minAmount..maxAmount, the customer
 *   must receive more than zero, and no figure may exceed the asset's maximum amount; otherwise
 *   422 AMOUNT_OUT_OF_RANGE.
 */
export function computeQuote(input: QuoteInput): QuoteAmounts {
  const { pair, baseAsset, quoteAsset, fromAsset, toAsset, feeAsset, direction, fromAmountMinor } = input;
  assert(fromAmountMinor > 0n, 'a quote needs a positive fromAmount');
  assert(input.midPrice.numerator > 0n, `the mid price of ${pair.symbol} must be positive`);
  assert(Number.isInteger(input.spreadBps) && input.spreadBps >= 0 && input.spreadBps <= spreadBpsMax, `spreadBps out of bounds: ${input.spreadBps}`);
  assert(feeAsset.code === fromAsset.code || feeAsset.code === toAsset.code, 'the fee asset is the from or the to asset');

  const spread = BigInt(input.spreadBps);
  const executedPrice =
    direction === 'direct'
      ? floorAtScale(multiplyRatios(input.midPrice, ratio(basisPointsPerOne - spread, basisPointsPerOne)), pair.priceDecimals)
      : ceilAtScale(multiplyRatios(input.midPrice, ratio(basisPointsPerOne + spread, basisPointsPerOne)), pair.priceDecimals);
  const price = ratioFromScaled(executedPrice, pair.priceDecimals);
  const feeRate = parseRate(pair.feeRate, pair.symbol);

  /** The exact to-asset value, in major units, of a from-asset amount in minor units. */
  const convert = (amountMinor: bigint): Ratio => {
    const amount = ratioFromScaled(amountMinor, fromAsset.scale);
    if (direction === 'direct') return multiplyRatios(amount, price);
    // A price rounded to zero cannot be bought at; the limits below refuse what it would yield.
    return executedPrice === 0n ? ratio(0n, 1n) : divideRatios(amount, price);
  };

  let feeAmountMinor: bigint;
  let amountToSpendMinor: bigint;
  let grossToReceiveMinor: bigint;
  let totalToReceiveMinor: bigint;
  if (feeAsset.code === fromAsset.code) {
    feeAmountMinor = ceilAtScale(multiplyRatios(ratioFromScaled(fromAmountMinor, fromAsset.scale), feeRate), fromAsset.scale);
    amountToSpendMinor = fromAmountMinor - feeAmountMinor;
    grossToReceiveMinor = floorAtScale(convert(amountToSpendMinor), toAsset.scale);
    totalToReceiveMinor = grossToReceiveMinor;
  } else {
    const gross = convert(fromAmountMinor);
    amountToSpendMinor = fromAmountMinor;
    grossToReceiveMinor = floorAtScale(gross, toAsset.scale);
    feeAmountMinor = ceilAtScale(multiplyRatios(gross, feeRate), toAsset.scale);
    totalToReceiveMinor = grossToReceiveMinor - feeAmountMinor;
  }

  const baseAmountMinor = direction === 'direct' ? fromAmountMinor : grossToReceiveMinor;
  const amounts: QuoteAmounts = {
    pairSymbol: pair.symbol,
    direction,
    side: input.side,
    baseAsset,
    quoteAsset,
    fromAsset,
    toAsset,
    feeAsset,
    pricePerUnitUnits: executedPrice,
    priceDecimals: pair.priceDecimals,
    feeRate: pair.feeRate,
    fromAmountMinor,
    amountToSpendMinor,
    grossToReceiveMinor,
    feeAmountMinor,
    totalToReceiveMinor,
    baseAmountMinor,
  };
  checkLimits(amounts, pair);
  return amounts;
}

function outOfRange(message: string): AppError {
  return new AppError('AMOUNT_OUT_OF_RANGE', `fromAmount: ${message}`, { details: [{ field: 'fromAmount', message }] });
}

function checkLimits(amounts: QuoteAmounts, pair: AssetPair): void {
  const { baseAsset, toAsset } = amounts;
  const minMinor = parseNonNegativeAmount(pair.minAmount, baseAsset, 'minAmount');
  const maxMinor = parseNonNegativeAmount(pair.maxAmount, baseAsset, 'maxAmount');
  const base = `${formatAmount(amounts.baseAmountMinor, baseAsset)} ${baseAsset.code}`;
  const limits = `${pair.minAmount} to ${pair.maxAmount} ${baseAsset.code}`;
  if (amounts.baseAmountMinor < minMinor) throw outOfRange(`the trade amounts to ${base}, below the ${pair.symbol} range of ${limits}`);
  if (amounts.baseAmountMinor > maxMinor) throw outOfRange(`the trade amounts to ${base}, above the ${pair.symbol} range of ${limits}`);
  if (amounts.totalToReceiveMinor <= 0n) throw outOfRange(`after the fee the customer would receive no ${toAsset.code}; trade a larger amount`);
  if (amounts.grossToReceiveMinor > maxAmountMinor(toAsset)) {
    throw outOfRange(`the trade would yield more than the largest ${toAsset.code} amount, ${formatAmount(maxAmountMinor(toAsset), toAsset)}`);
  }
}

/** Fee rates are written by the catalogue as decimal strings; one not in [0, 1) is a catalogue bug. */
function parseRate(text: string, symbol: string): Ratio {
  const rateDecimalsMax = 18;
  const units = parseNonNegativeAmount(text, { code: 'rate', name: 'fee rate', scale: rateDecimalsMax, kind: 'FIAT', sandboxOnly: false }, `${symbol} feeRate`);
  const rate = ratioFromScaled(units, rateDecimalsMax);
  assert(compareRatios(rate, ratio(1n, 1n)) < 0, `the fee rate of ${symbol} must be below 1, got ${text}`);
  return rate;
}

/** The figures of a quote as the API shows them (decimal strings in each asset's scale). */
export interface QuoteFigures {
  /** Price of one base unit in quote units, as executed. */
  pricePerUnit: string;
  /** The fee rate ("0.001"). */
  fee: string;
  feeAmount: string;
  feeAsset: string;
  /** Debited from the wallet, in the from-asset (= fromAmount). */
  totalPrice: string;
  /** Credited to the wallet, in the to-asset. */
  totalToReceive: string;
  fromAsset: string;
  toAsset: string;
  fromAmount: string;
  amountToSpend: string;
  pairSymbol: string;
  direction: TradeDirection;
  side: TradeSide;
}

export function quoteFigures(amounts: QuoteAmounts): QuoteFigures {
  const priceFormat: Asset = { ...amounts.quoteAsset, scale: amounts.priceDecimals };
  return {
    pricePerUnit: formatAmount(amounts.pricePerUnitUnits, priceFormat),
    fee: amounts.feeRate,
    feeAmount: formatAmount(amounts.feeAmountMinor, amounts.feeAsset),
    feeAsset: amounts.feeAsset.code,
    totalPrice: formatAmount(amounts.fromAmountMinor, amounts.fromAsset),
    totalToReceive: formatAmount(amounts.totalToReceiveMinor, amounts.toAsset),
    fromAsset: amounts.fromAsset.code,
    toAsset: amounts.toAsset.code,
    fromAmount: formatAmount(amounts.fromAmountMinor, amounts.fromAsset),
    amountToSpend: formatAmount(amounts.amountToSpendMinor, amounts.fromAsset),
    pairSymbol: amounts.pairSymbol,
    direction: amounts.direction,
    side: amounts.side,
  };
}

/** How long a quote holds its price (`OPENBAAS_QUOTE_TTL_SECONDS`): default and bounds. */
export const quoteTtlSecondsDefault = 300;
export const quoteTtlSecondsMin = 5;
export const quoteTtlSecondsMax = 900;

export function quoteExpiresAt(createdAt: Date, ttlSeconds: number): Date {
  assert(
    Number.isInteger(ttlSeconds) && ttlSeconds >= quoteTtlSecondsMin && ttlSeconds <= quoteTtlSecondsMax,
    `quote TTL out of bounds: ${ttlSeconds}`,
  );
  return new Date(createdAt.getTime() + ttlSeconds * 1000);
}

/** A quote has expired once the client's clock has reached `expiresAt`. */
export function isQuoteExpired(expiresAt: Date, now: Date): boolean {
  return now.getTime() >= expiresAt.getTime();
}

export function quoteDisclaimer(ttlSeconds: number): string {
  const span =
    ttlSeconds % 60 === 0
      ? `${ttlSeconds / 60} minute${ttlSeconds === 60 ? '' : 's'}`
      : `${ttlSeconds} second${ttlSeconds === 1 ? '' : 's'}`;
  return `This quote expires in ${span}, at expiresAt. Its price and amounts hold until then; after that, request a new quote.`;
}

/**
 * Sandbox amounts that make the simulated liquidity provider refuse the execution (contract
 * §12.9): the quote is given as usual, and executing it fails with LIQUIDITY_UNAVAILABLE.
 * Compared by value, so "9.990000" USDC counts too.
 */
export const liquidityFailureAmounts: Readonly<Record<string, string>> = {
  BTC: '0.00000999',
  USD: '9.99',
  USD_TEST: '9.99',
  EUR: '9.99',
  USDC: '9.99',
  USDT: '9.99',
};

export function isLiquidityFailureAmount(fromAsset: Asset, fromAmountMinor: bigint): boolean {
  const magic = liquidityFailureAmounts[fromAsset.code];
  if (magic === undefined) return false;
  return parseAmount(magic, fromAsset, 'fromAmount') === fromAmountMinor;
}

import { assert } from '../../platform/assert.js';
import type { Tx } from '../../platform/db/transaction.js';
import { formatAmount, parseAmount } from '../../platform/money/amount.js';
import type { Asset } from '../../platform/money/assets.js';
import { divideRatios, ratio, ratioFromScaled, type Ratio } from './ratio.js';

/**
 * A stored mid price: exactly `units` × 10^-scale units of the quote asset (USD) for one unit of
 * the priced asset. Never a floating-point number.
 */
export interface Price {
  readonly units: bigint;
  readonly scale: number;
}

/** Every stored price is an asset against this one; pairs quoted in another asset are crossed. */
export const priceQuoteAssetCode = 'USD';

/** Most decimal places a price may be set with (`PUT /v1/sandbox/prices/:symbol`). */
export const priceDecimalsMax = 8;

/** Prices are shown with at least this many decimal places ("60000.00", "0.9995"). */
const priceDecimalsShownMin = 2;

/** The mid prices every sandbox client starts with (contract §12.8). */
export const sandboxDefaultPrices: ReadonlyArray<{ readonly symbol: string; readonly price: string }> = [
  { symbol: 'BTC-USD', price: '60000.00' },
  { symbol: 'ETH-USD', price: '3000.00' },
  { symbol: 'USDC-USD', price: '1.00' },
  { symbol: 'USDT-USD', price: '1.00' },
];

/** The symbols whose mid price is stored and can be set: one per priced asset, against USD. */
export const priceSymbols: readonly string[] = sandboxDefaultPrices.map((entry) => entry.symbol);

/** The price symbol of an asset ("BTC" → "BTC-USD"). */
export function priceSymbolOf(assetCode: string): string {
  return `${assetCode}-${priceQuoteAssetCode}`;
}

export function isPriceSymbol(symbol: string): boolean {
  return priceSymbols.includes(symbol);
}

/** The amount format of a price: the quote asset's name with the price's scale, so the amount parser and formatter serve. */
function priceFormat(scale: number): Asset {
  return { code: priceQuoteAssetCode, name: 'price in US Dollar', scale, kind: 'FIAT', sandboxOnly: false };
}

/** Drops trailing zero decimals down to `priceDecimalsShownMin`, so a price keeps the precision it was given. */
function trimPrice(price: Price): Price {
  let { units, scale } = price;
  while (scale > priceDecimalsShownMin && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  return { units, scale };
}

/**
 * Reads a price from a decimal string ("60000.00"): positive, plain digits, at most
 * `priceDecimalsMax` decimals and 15 whole digits. Refused with 400 INVALID_AMOUNT naming `field`.
 */
export function parsePrice(value: unknown, field = 'price'): Price {
  // The decimals are the price's rule, not USD's (2): the message says so (it read "USD allows at most 8").
  return trimPrice({ units: parseAmount(value, priceFormat(priceDecimalsMax), field, 'a price'), scale: priceDecimalsMax });
}

/** The decimal string of a price, with the decimals it carries (at least two). */
export function formatPrice(price: Price): string {
  const trimmed = trimPrice(price);
  const shownScale = Math.max(trimmed.scale, priceDecimalsShownMin);
  return formatAmount(trimmed.units * 10n ** BigInt(shownScale - trimmed.scale), priceFormat(shownScale));
}

export function priceRatio(price: Price): Ratio {
  return ratioFromScaled(price.units, price.scale);
}

/** The seeded price of a price symbol, or undefined for a symbol that has none. */
export function sandboxDefaultPrice(symbol: string): Price | undefined {
  const entry = sandboxDefaultPrices.find((candidate) => candidate.symbol === symbol);
  return entry ? parsePrice(entry.price) : undefined;
}

/**
 * The mid price of one unit of `baseAssetCode` in units of `quoteAssetCode`, from the stored
 * prices against USD: direct when the quote asset is USD, otherwise the cross rate
 * base-USD ÷ quote-USD (exact, possibly not a finite decimal). Undefined when a price is missing.
 */
export function crossMidPrice(
  baseAssetCode: string,
  quoteAssetCode: string,
  usdPriceOf: (symbol: string) => Price | undefined,
): Ratio | undefined {
  const valueInUsd = (code: string): Ratio | undefined => {
    if (code === priceQuoteAssetCode) return ratio(1n, 1n);
    const price = usdPriceOf(priceSymbolOf(code));
    return price ? priceRatio(price) : undefined;
  };
  const base = valueInUsd(baseAssetCode);
  const quote = valueInUsd(quoteAssetCode);
  if (!base || !quote || quote.numerator === 0n) return undefined;
  return divideRatios(base, quote);
}

export interface MidPriceQuery {
  clientId: string;
  /** A pair symbol, base first: "BTC-USD", "BTC-USDC". */
  symbol: string;
  /** The client's own time (its sandbox clock in sandbox mode). */
  at: Date;
}

/**
 * The price feed, an outside system like the rails and the chains: quotes and collateral values
 * read the mid price from it. It is asked outside any database transaction.
 */
export interface PriceProvider {
  /**
   * The mid price of one unit of the pair's base asset in units of its quote asset, exact; undefined
   * when the provider has no price for the pair.
   */
  midPrice(query: MidPriceQuery): Promise<Ratio | undefined>;
}

export interface PriceRecord {
  /** A price symbol ("BTC-USD"). */
  symbol: string;
  price: Price;
  updatedAt: Date;
}

export interface PriceChange {
  clientId: string;
  symbol: string;
  previousPrice: Price;
  price: Price;
  /** The client's time of the change. */
  changedAt: Date;
  traceId: string;
}

/** The sandbox price feed: the same reads, plus the controls behind `/v1/sandbox/prices`. */
export interface SandboxPriceProvider extends PriceProvider {
  /** Every price symbol with the client's current price (the seeded one until set). */
  listPrices(clientId: string): Promise<PriceRecord[]>;
  /**
   * Sets the client's mid price of a price symbol inside `tx`, then runs every price-changed hook
   * in that same transaction, so the price and everything it recomputes commit together.
   */
  setPrice(tx: Tx, change: { clientId: string; symbol: string; price: Price; at: Date; traceId: string }): Promise<PriceRecord>;
}

/**
 * Work that must follow a price change in the same database transaction (credit lines recompute
 * their LTV and write the events it causes). It is not an event bus: events still go through the
 * outbox, written by the hook inside `tx`.
 */
export type PriceChangedHook = (tx: Tx, change: PriceChange) => Promise<void>;

/** The hooks one application instance runs on a price change, in the order they were registered. */
export class PriceChangedHooks {
  private readonly hooks = new Map<string, PriceChangedHook>();

  /** Registers a hook under a name; registering a name twice is a wiring bug. */
  register(name: string, hook: PriceChangedHook): void {
    assert(!this.hooks.has(name), `price-changed hook "${name}" is registered twice`);
    this.hooks.set(name, hook);
  }

  names(): string[] {
    return [...this.hooks.keys()];
  }

  /** Runs the hooks one after another (they share one connection); the first failure aborts the transaction. */
  async runAll(tx: Tx, change: PriceChange): Promise<void> {
    for (const hook of this.hooks.values()) await hook(tx, change);
  }
}

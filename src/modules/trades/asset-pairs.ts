import { v5 as uuidv5 } from 'uuid';
import { assert } from '../../platform/assert.js';
import type { Mode } from '../../platform/config.js';
import { AppError } from '../../platform/http/errors.js';
import { isUuid } from '../../platform/ids.js';
import { formatAmount, parseNonNegativeAmount } from '../../platform/money/amount.js';
import { assetIdOf, findAsset, listAssets, registryIdNamespace, requireAsset, type Asset } from '../../platform/money/assets.js';

/**
 * One tradable market, listed once per unordered pair of assets (contract §12.9). Amounts are
 * decimal strings in the base asset's scale.
 */
export interface AssetPair {
  id: string;
  /** Base first: "BTC-USD". */
  symbol: string;
  baseAsset: string;
  quoteAsset: string;
  /** Smallest base-asset amount of one trade. */
  minAmount: string;
  /** Largest base-asset amount of one trade. */
  maxAmount: string;
  tradable: boolean;
  /** Share of the traded amount charged as the fee ("0.001" is 0.1 %). */
  feeRate: string;
  /** Decimal places of the executed price (`pricePerUnit`), in units of the quote asset. */
  priceDecimals: number;
}

/**
 * Pair ids are derived like asset ids (src/platform/money/assets.ts): the UUIDv5 of
 * `asset-pair/<symbol>` under the registry's namespace, the same everywhere and forever.
 */
export { assetIdOf };

export function assetPairIdOf(symbol: string): string {
  return uuidv5(`asset-pair/${symbol}`, registryIdNamespace);
}

/** How an asset id (a UUID) becomes an asset code; undefined when no asset has that id. */
export type AssetCodeForId = (id: string) => string | undefined;

const assetCodesById = new Map(listAssets('sandbox').map((asset) => [assetIdOf(asset.code), asset.code]));

/** The registry's own ids (assetIdOf of each code). Availability in a mode is checked by the caller. */
export const registryAssetCodeForId: AssetCodeForId = (id) => assetCodesById.get(id.toLowerCase());

const feeRateDefault = '0.001';

interface PairSettings {
  base: string;
  quote: string;
  min: string;
  max: string;
  priceDecimals: number;
}

/**
 * The seeded markets. Limits are OpenBaaS choices (the contract leaves them open): BTC from 100
 * satoshi, so the sandbox's liquidity-failure amount of 0.00000999 BTC can still be quoted, up to
 * 100 BTC; ETH from 0.0001 up to 1,000; stablecoins from 1 up to 1,000,000. BTC and ETH prices
 * carry cents; stablecoin prices four decimals, so a slightly depegged price still shows.
 */
const seededPairs: readonly PairSettings[] = [
  { base: 'BTC', quote: 'USD', min: '0.000001', max: '100', priceDecimals: 2 },
  { base: 'ETH', quote: 'USD', min: '0.0001', max: '1000', priceDecimals: 2 },
  { base: 'USDC', quote: 'USD', min: '1', max: '1000000', priceDecimals: 4 },
  { base: 'USDT', quote: 'USD', min: '1', max: '1000000', priceDecimals: 4 },
  { base: 'BTC', quote: 'USDC', min: '0.000001', max: '100', priceDecimals: 2 },
  { base: 'ETH', quote: 'USDC', min: '0.0001', max: '1000', priceDecimals: 2 },
  { base: 'USDT', quote: 'USDC', min: '1', max: '1000000', priceDecimals: 4 },
];

function registryAsset(code: string): Asset {
  const asset = findAsset(code, 'production');
  assert(asset, `asset pair names ${code}, which is not in the asset registry`);
  return asset;
}

function buildPair(settings: PairSettings): AssetPair {
  const base = registryAsset(settings.base);
  const quote = registryAsset(settings.quote);
  const symbol = `${base.code}-${quote.code}`;
  // Written short above; shown like every other amount, with the base asset's scale.
  const canonical = (text: string) => formatAmount(parseNonNegativeAmount(text, base, `${symbol} limit`), base);
  return {
    id: assetPairIdOf(symbol),
    symbol,
    baseAsset: base.code,
    quoteAsset: quote.code,
    minAmount: canonical(settings.min),
    maxAmount: canonical(settings.max),
    tradable: true,
    feeRate: feeRateDefault,
    priceDecimals: settings.priceDecimals,
  };
}

/** The asset pairs every client starts with (contract §12.9). */
export const defaultAssetPairs: readonly AssetPair[] = seededPairs.map(buildPair);

/** The pair joining two assets, in either order; undefined when none does. */
export function findAssetPair(pairs: readonly AssetPair[], assetCodeA: string, assetCodeB: string): AssetPair | undefined {
  return pairs.find(
    (pair) =>
      (pair.baseAsset === assetCodeA && pair.quoteAsset === assetCodeB) ||
      (pair.baseAsset === assetCodeB && pair.quoteAsset === assetCodeA),
  );
}

/**
 * The pair joining the two assets, or 422 PAIR_NOT_TRADABLE when there is none or it is not
 * tradable now, naming `toAssetId` (the asset the trade would go to from `fromAssetId`; until
 * 2026-12-06 the answer named no field, found by an audit).
 */
export function requireTradablePair(pairs: readonly AssetPair[], from: Asset, to: Asset): AssetPair {
  const pair = findAssetPair(pairs, from.code, to.code);
  const refuse = (message: string): AppError => new AppError('PAIR_NOT_TRADABLE', `toAssetId: ${message}`, { details: [{ field: 'toAssetId', message }] });
  if (from.code === to.code) throw refuse(`the same asset as fromAssetId (${from.code}); a trade goes from one asset to another`);
  if (!pair) {
    const listed = pairs.filter((candidate) => candidate.tradable).map((candidate) => candidate.symbol).join(', ');
    throw refuse(`no asset pair trades ${from.code} against ${to.code}; tradable pairs: ${listed}`);
  }
  if (!pair.tradable) throw refuse(`the asset pair ${pair.symbol} is not tradable at the moment`);
  return pair;
}

export interface TradeAssetLookup {
  mode: Mode;
  /** Resolves an asset id (UUID); registryAssetCodeForId for the registry's derived ids. */
  assetCodeForId: AssetCodeForId;
}

/**
 * The asset a quote's `fromAssetId`, `toAssetId` or `feeAssetId` names: an asset id (UUID), a
 * crypto symbol ("BTC") or an ISO 4217 currency code ("USD"), exactly as the registry writes it.
 * Unknown (or unavailable in this mode): 400 UNKNOWN_ASSET naming `field`.
 */
export function resolveTradeAsset(value: string, field: string, lookup: TradeAssetLookup): Asset {
  if (isUuid(value)) {
    const code = lookup.assetCodeForId(value);
    const asset = code === undefined ? undefined : findAsset(code, lookup.mode);
    if (!asset) {
      throw new AppError('UNKNOWN_ASSET', `${field}: no asset has the id "${value}"`, {
        details: [{ field, message: 'no asset has this id; give an asset id, symbol or currency code' }],
      });
    }
    return asset;
  }
  return requireAsset(value, lookup.mode, field);
}

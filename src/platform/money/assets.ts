import { v5 as uuidv5 } from 'uuid';
import type { Mode } from '../config.js';
import { AppError } from '../http/errors.js';

export interface Asset {
  /** The currency acronym used everywhere in the API (USD, BTC, …). */
  code: string;
  name: string;
  /** Number of decimal places: an amount of 1 minor unit is 10^-scale of the asset. */
  scale: number;
  kind: 'FIAT' | 'CRYPTO';
  /** Only usable in sandbox mode (USD_TEST). */
  sandboxOnly: boolean;
}

/** Largest whole-unit part any amount may have: 15 digits, under a quadrillion units. */
export const amountIntegerDigitsMax = 15;

const assetList: Asset[] = [
  { code: 'USD', name: 'US Dollar', scale: 2, kind: 'FIAT', sandboxOnly: false },
  { code: 'USD_TEST', name: 'US Dollar (sandbox test asset)', scale: 2, kind: 'FIAT', sandboxOnly: true },
  { code: 'EUR', name: 'Euro', scale: 2, kind: 'FIAT', sandboxOnly: false },
  { code: 'BTC', name: 'Bitcoin', scale: 8, kind: 'CRYPTO', sandboxOnly: false },
  { code: 'ETH', name: 'Ether', scale: 18, kind: 'CRYPTO', sandboxOnly: false },
  { code: 'USDC', name: 'USD Coin', scale: 6, kind: 'CRYPTO', sandboxOnly: false },
  { code: 'USDT', name: 'Tether USD', scale: 6, kind: 'CRYPTO', sandboxOnly: false },
];

const assetsByCode = new Map(assetList.map((asset) => [asset.code, asset]));

export function listAssets(mode: Mode): Asset[] {
  return assetList.filter((asset) => mode === 'sandbox' || !asset.sandboxOnly);
}

/** The asset with this code, or undefined when it is unknown or not available in this mode. */
export function findAsset(code: string, mode: Mode): Asset | undefined {
  const asset = assetsByCode.get(code);
  if (!asset || (asset.sandboxOnly && mode !== 'sandbox')) return undefined;
  return asset;
}

export function requireAsset(code: string, mode: Mode, field = 'asset', offered?: readonly string[]): Asset {
  const asset = findAsset(code, mode);
  if (!asset) {
    // `offered`: the assets the caller takes, when it takes fewer than the registry knows (a bank
    // payment); the list would otherwise propose assets the next check refuses.
    const known = (offered ?? listAssets(mode).map((entry) => entry.code)).join(', ');
    throw new AppError('UNKNOWN_ASSET', `${field}: unknown asset "${code}"; known assets: ${known}`, {
      details: [{ field, message: `unknown asset; one of ${known}` }],
    });
  }
  return asset;
}

/** Largest amount of the asset, in minor units. */
export function maxAmountMinor(asset: Asset): bigint {
  return 10n ** BigInt(amountIntegerDigitsMax + asset.scale) - 1n;
}

/**
 * The namespace of the registry's derived ids (UUIDv5): the registry has no table, so every
 * process, client and installation computes the same id for an asset (and the trades module for
 * an asset pair) without a lookup, and an id never changes.
 */
export const registryIdNamespace = '3b9e0f64-51c2-4d8a-a7f3-9c1e26d48b05';

/** An asset's id: the UUIDv5 of `asset/<code>` (GET /v1/assets shows it; trade quotes accept it). */
export function assetIdOf(assetCode: string): string {
  return uuidv5(`asset/${assetCode}`, registryIdNamespace);
}

import { assert } from '../../platform/assert.js';
import { ConfigError, type Mode } from '../../platform/config.js';
import { AppError } from '../../platform/http/errors.js';
import { parseNonNegativeAmount } from '../../platform/money/amount.js';
import { findAsset } from '../../platform/money/assets.js';

/**
 * The blockchain networks OpenBaaS moves crypto assets on, and the facts about each that the API
 * shows (`GET /v1/digital/networks`, contract §12.7). Pure data and lookups: no database, no
 * configuration reads; the caller passes the settings in.
 */

export const cryptoNetworkNames = ['BITCOIN', 'ETHEREUM', 'TRON', 'SOLANA'] as const;
export type CryptoNetworkName = (typeof cryptoNetworkNames)[number];

/**
 * Which Bitcoin network the server speaks (`OPENBAAS_BITCOIN_NETWORK`). Bitcoin is the one chain
 * whose address encodings differ between test and main networks (`tb1…`/`m`/`n`/`2` against
 * `bc1…`/`1`/`3`); Ethereum, TRON and Solana addresses look the same on both.
 */
export const bitcoinNetworkNames = ['testnet', 'mainnet'] as const;
export type BitcoinNetwork = (typeof bitcoinNetworkNames)[number];

export function isBitcoinNetwork(value: string): value is BitcoinNetwork {
  return (bitcoinNetworkNames as readonly string[]).includes(value);
}

/** Sandbox servers default to Bitcoin testnet, production servers to mainnet (contract §12.7). */
export function bitcoinNetworkDefault(mode: Mode): BitcoinNetwork {
  return mode === 'sandbox' ? 'testnet' : 'mainnet';
}

/**
 * The encoding of the deposit addresses OpenBaaS issues on the network: BECH32 (Bitcoin native
 * SegWit P2WPKH), EIP55 (`0x` + 40 hex with the mixed-case checksum), BASE58CHECK (TRON `T…`),
 * BASE58 (a Solana ed25519 public key). Withdrawals accept more forms on Bitcoin; see
 * address-validation.ts.
 */
export type AddressFormat = 'BECH32' | 'EIP55' | 'BASE58CHECK' | 'BASE58';

export interface CryptoNetwork {
  network: CryptoNetworkName;
  /** Registry asset codes carried on this network. */
  assets: readonly string[];
  addressFormat: AddressFormat;
  /** Confirmations a deposit or withdrawal needs before it completes (default, configurable). */
  confirmationsRequired: number;
  /** Whether a withdrawal may carry a `memo` (stored and echoed). */
  memoSupported: boolean;
  /** True when the server runs on test networks (derived from the Bitcoin network setting). */
  testnet: boolean;
}

/**
 * Confirmations required by default (research §5.6): BITCOIN 3 and ETHEREUM 12 follow common
 * exchange practice; TRON 19 and SOLANA 32 stand for "solidified" and "finalized".
 */
export const confirmationsRequiredDefault: Readonly<Record<CryptoNetworkName, number>> = {
  BITCOIN: 3,
  ETHEREUM: 12,
  TRON: 19,
  SOLANA: 32,
};

/** Largest confirmations requirement a setting may name (a day of Bitcoin blocks, many times over). */
export const confirmationsRequiredMax = 1000;

const addressFormats: Readonly<Record<CryptoNetworkName, AddressFormat>> = {
  BITCOIN: 'BECH32',
  ETHEREUM: 'EIP55',
  TRON: 'BASE58CHECK',
  SOLANA: 'BASE58',
};

/** Only TRON and Solana transfers carry a memo the recipient can read (contract §12.7). */
const memoSupport: Readonly<Record<CryptoNetworkName, boolean>> = {
  BITCOIN: false,
  ETHEREUM: false,
  TRON: true,
  SOLANA: true,
};

/** Asset → the networks it moves on; the first one is the default when a request names none. */
export const assetNetworks: Readonly<Record<string, readonly CryptoNetworkName[]>> = {
  BTC: ['BITCOIN'],
  ETH: ['ETHEREUM'],
  USDC: ['ETHEREUM', 'SOLANA', 'TRON'],
  USDT: ['ETHEREUM', 'TRON', 'SOLANA'],
};

export const cryptoAssetCodes: readonly string[] = Object.keys(assetNetworks);

export function isCryptoNetworkName(value: string): value is CryptoNetworkName {
  return (cryptoNetworkNames as readonly string[]).includes(value);
}

export function memoSupported(network: CryptoNetworkName): boolean {
  return memoSupport[network];
}

export interface NetworkSettings {
  bitcoinNetwork: BitcoinNetwork;
  /** Overrides of confirmationsRequiredDefault, per network. */
  confirmationsRequired?: Partial<Record<CryptoNetworkName, number>>;
}

/**
 * The four networks as the API lists them. `testnet` follows the Bitcoin network setting for
 * every network: a server runs all its chains as test networks or all as main networks (the
 * sandbox simulates all four).
 */
export function listCryptoNetworks(settings: NetworkSettings): CryptoNetwork[] {
  return cryptoNetworkNames.map((network) => describeCryptoNetwork(network, settings));
}

export function describeCryptoNetwork(network: CryptoNetworkName, settings: NetworkSettings): CryptoNetwork {
  const override = settings.confirmationsRequired?.[network];
  assert(
    override === undefined || (Number.isInteger(override) && override >= 1 && override <= confirmationsRequiredMax),
    `confirmationsRequired for ${network} must be an integer from 1 to ${confirmationsRequiredMax}; got ${String(override)}`,
  );
  return {
    network,
    assets: cryptoAssetCodes.filter((asset) => assetNetworks[asset]?.includes(network)),
    addressFormat: addressFormats[network],
    confirmationsRequired: override ?? confirmationsRequiredDefault[network],
    memoSupported: memoSupport[network],
    testnet: settings.bitcoinNetwork === 'testnet',
  };
}

/**
 * The stablecoin token contracts (Ethereum ERC-20 contracts, TRON TRC-20 contracts, Solana SPL
 * mints) on each network's main network. Tokens sent to a token contract itself are lost, so
 * these are refused as withdrawal destinations. Addresses are the well-known issuer contracts
 * (research §5.2 and §5.3); Ethereum ones are written in their EIP-55 form.
 */
export interface TokenContract {
  asset: string;
  network: CryptoNetworkName;
  address: string;
}

export const tokenContracts: readonly TokenContract[] = [
  { asset: 'USDC', network: 'ETHEREUM', address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' },
  { asset: 'USDT', network: 'ETHEREUM', address: '0xdAC17F958D2ee523a2206206994597C13D831ec7' },
  { asset: 'USDC', network: 'TRON', address: 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8' },
  { asset: 'USDT', network: 'TRON', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
  { asset: 'USDC', network: 'SOLANA', address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' },
  { asset: 'USDT', network: 'SOLANA', address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB' },
];

/** The token contract of the asset on the network; undefined for native assets (BTC, ETH). */
export function tokenContractOf(asset: string, network: CryptoNetworkName): string | undefined {
  return tokenContracts.find((contract) => contract.asset === asset && contract.network === network)?.address;
}

/**
 * Flat withdrawal fees charged in the withdrawn asset (contract §12.7 sandbox defaults), written
 * as the contract writes them. `feeMinor` is the same amount in the asset's minor units.
 */
const withdrawalFeeDefaults: Readonly<Record<string, Partial<Record<CryptoNetworkName, string>>>> = {
  BTC: { BITCOIN: '0.00005000' },
  ETH: { ETHEREUM: '0.00050000' },
  USDC: { ETHEREUM: '2.00', TRON: '1.00', SOLANA: '0.10' },
  USDT: { ETHEREUM: '2.00', TRON: '1.00', SOLANA: '0.10' },
};

export interface WithdrawalFee {
  asset: string;
  network: CryptoNetworkName;
  fee: string;
  feeMinor: bigint;
  feeAsset: string;
}

/**
 * The fee of a withdrawal of the asset on the network: the server's setting (`ASSET/NETWORK`
 * keys, OPENBAAS_CRYPTO_WITHDRAWAL_FEES) or the default; undefined when the asset does not move there.
 */
export function withdrawalFeeOf(asset: string, network: CryptoNetworkName, fees: Readonly<Record<string, string>>): WithdrawalFee | undefined {
  const fallback = withdrawalFeeDefaults[asset]?.[network];
  const registryAsset = findAsset(asset, 'production');
  if (fallback === undefined || registryAsset === undefined) return undefined;
  const fee = fees[`${asset}/${network}`] ?? fallback;
  return { asset, network, fee, feeMinor: parseNonNegativeAmount(fee, registryAsset, 'fee'), feeAsset: asset };
}

/** The server's crypto settings of OPENBAAS_CRYPTO_CONFIRMATIONS and OPENBAAS_CRYPTO_WITHDRAWAL_FEES, checked. */
export interface CryptoNetworkOverrides {
  confirmationsRequired: Partial<Record<CryptoNetworkName, number>>;
  /** Keyed `ASSET/NETWORK`, amounts as written (within the asset's decimals). */
  withdrawalFees: Readonly<Record<string, string>>;
}

/**
 * Checks the raw pairs of the two settings (config.ts reads them without knowing the networks):
 * a known network and a whole number from 1 to confirmationsRequiredMax; a known asset/network
 * pair and an amount within the asset's decimals (0 allowed). Throws ConfigError: the server
 * does not start with a setting it would misread.
 */
export function cryptoNetworkOverrides(confirmations: Readonly<Record<string, string>>, fees: Readonly<Record<string, string>>): CryptoNetworkOverrides {
  const confirmationsRequired: Partial<Record<CryptoNetworkName, number>> = {};
  for (const [name, value] of Object.entries(confirmations)) {
    if (!(cryptoNetworkNames as readonly string[]).includes(name)) {
      throw new ConfigError(`OPENBAAS_CRYPTO_CONFIRMATIONS names ${name}, which is not a network (${cryptoNetworkNames.join(', ')})`);
    }
    const count = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!(count >= 1 && count <= confirmationsRequiredMax)) {
      throw new ConfigError(`OPENBAAS_CRYPTO_CONFIRMATIONS: ${name} must be a whole number from 1 to ${confirmationsRequiredMax}, got "${value}"`);
    }
    confirmationsRequired[name as CryptoNetworkName] = count;
  }
  for (const [pair, amount] of Object.entries(fees)) {
    const [asset = '', network = ''] = pair.split('/');
    const registryAsset = findAsset(asset, 'production');
    if (registryAsset === undefined || withdrawalFeeDefaults[asset]?.[network as CryptoNetworkName] === undefined) {
      const known = Object.entries(withdrawalFeeDefaults).flatMap(([code, networks]) => Object.keys(networks).map((name) => `${code}/${name}`));
      throw new ConfigError(`OPENBAAS_CRYPTO_WITHDRAWAL_FEES names ${pair}, which is not an asset/network pair (${known.join(', ')})`);
    }
    try {
      parseNonNegativeAmount(amount, registryAsset, 'fee');
    } catch {
      throw new ConfigError(`OPENBAAS_CRYPTO_WITHDRAWAL_FEES: ${pair} must be an amount of at most ${registryAsset.scale} decimals, 0 or more, got "${amount}"`);
    }
  }
  return { confirmationsRequired, withdrawalFees: { ...fees } };
}

export type NetworkResolution =
  | { ok: true; network: CryptoNetworkName; defaulted: boolean }
  | { ok: false; field: 'asset' | 'network'; reason: string };

/**
 * Resolves the network of a request naming an asset and perhaps a network: without a network,
 * the asset's default network; with one, that network if the asset moves on it. Refusals name
 * the field and what would be accepted.
 */
export function resolveAssetNetwork(asset: string, network?: string | null): NetworkResolution {
  const networks = assetNetworks[asset];
  if (networks === undefined) {
    return {
      ok: false,
      field: 'asset',
      reason: `"${asset}" is not a crypto asset with a blockchain network; crypto assets are ${cryptoAssetCodes.join(', ')}`,
    };
  }
  const defaultNetwork = networks[0];
  assert(defaultNetwork !== undefined, `asset ${asset} lists no network`);
  if (network === undefined || network === null) {
    return { ok: true, network: defaultNetwork, defaulted: true };
  }
  if (!isCryptoNetworkName(network)) {
    const upper = network.toUpperCase();
    const hint = isCryptoNetworkName(upper) ? `; network names are upper case: "${upper}"` : '';
    return { ok: false, field: 'network', reason: `unknown network "${network}"; networks are ${cryptoNetworkNames.join(', ')}${hint}` };
  }
  if (!networks.includes(network)) {
    return {
      ok: false,
      field: 'network',
      reason: `${asset} does not move on ${network}; ${asset} moves on ${networks.join(', ')} (default ${defaultNetwork})`,
    };
  }
  return { ok: true, network, defaulted: false };
}

/** resolveAssetNetwork for a request: a refusal becomes a 400 VALIDATION_ERROR naming the field. */
export function requireAssetNetwork(
  asset: string,
  network?: string | null,
  fields: { asset?: string; network?: string } = {},
): CryptoNetworkName {
  const resolution = resolveAssetNetwork(asset, network);
  if (resolution.ok) return resolution.network;
  const field = fields[resolution.field] ?? resolution.field;
  throw new AppError('VALIDATION_ERROR', `${field}: ${resolution.reason}`, { details: [{ field, message: resolution.reason }] });
}

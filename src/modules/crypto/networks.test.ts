import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../platform/assert.js';
import { AppError } from '../../platform/http/errors.js';
import {
  bitcoinNetworkDefault,
  describeCryptoNetwork,
  listCryptoNetworks,
  requireAssetNetwork,
  resolveAssetNetwork,
  tokenContractOf,
  withdrawalFeeOf,
} from './networks.js';

describe('the network list (GET /v1/digital/networks)', () => {
  it('lists the four networks with the contract\'s data, testnet following the Bitcoin network setting', () => {
    for (const bitcoinNetwork of ['testnet', 'mainnet'] as const) {
      const testnet = bitcoinNetwork === 'testnet';
      expect(listCryptoNetworks({ bitcoinNetwork })).toEqual([
        { network: 'BITCOIN', assets: ['BTC'], addressFormat: 'BECH32', confirmationsRequired: 3, memoSupported: false, testnet },
        { network: 'ETHEREUM', assets: ['ETH', 'USDC', 'USDT'], addressFormat: 'EIP55', confirmationsRequired: 12, memoSupported: false, testnet },
        { network: 'TRON', assets: ['USDC', 'USDT'], addressFormat: 'BASE58CHECK', confirmationsRequired: 19, memoSupported: true, testnet },
        { network: 'SOLANA', assets: ['USDC', 'USDT'], addressFormat: 'BASE58', confirmationsRequired: 32, memoSupported: true, testnet },
      ]);
    }
  });

  it('takes configured confirmation counts and refuses impossible ones as a bug', () => {
    expect(describeCryptoNetwork('BITCOIN', { bitcoinNetwork: 'testnet', confirmationsRequired: { BITCOIN: 6 } }).confirmationsRequired).toBe(6);
    expect(describeCryptoNetwork('ETHEREUM', { bitcoinNetwork: 'testnet', confirmationsRequired: { BITCOIN: 6 } }).confirmationsRequired).toBe(12);
    expect(() => describeCryptoNetwork('BITCOIN', { bitcoinNetwork: 'testnet', confirmationsRequired: { BITCOIN: 0 } })).toThrow(AssertionError);
    expect(() => describeCryptoNetwork('BITCOIN', { bitcoinNetwork: 'testnet', confirmationsRequired: { BITCOIN: 1.5 } })).toThrow(AssertionError);
  });

  it('defaults Bitcoin to testnet in sandbox mode and mainnet in production', () => {
    expect([bitcoinNetworkDefault('sandbox'), bitcoinNetworkDefault('production')]).toEqual(['testnet', 'mainnet']);
  });
});

describe('resolving (asset, network?)', () => {
  it('without a network, the asset\'s first network', () => {
    expect(['BTC', 'ETH', 'USDC', 'USDT'].map((asset) => resolveAssetNetwork(asset))).toEqual([
      { ok: true, network: 'BITCOIN', defaulted: true },
      { ok: true, network: 'ETHEREUM', defaulted: true },
      { ok: true, network: 'ETHEREUM', defaulted: true },
      { ok: true, network: 'ETHEREUM', defaulted: true },
    ]);
    expect(resolveAssetNetwork('USDT', null)).toEqual({ ok: true, network: 'ETHEREUM', defaulted: true });
  });

  it('with a network the asset moves on, that network', () => {
    expect(resolveAssetNetwork('USDC', 'SOLANA')).toEqual({ ok: true, network: 'SOLANA', defaulted: false });
    expect(resolveAssetNetwork('USDT', 'TRON')).toEqual({ ok: true, network: 'TRON', defaulted: false });
  });

  it('refuses a network the asset does not move on, naming the ones it does', () => {
    expect(resolveAssetNetwork('BTC', 'ETHEREUM')).toEqual({ ok: false, field: 'network', reason: 'BTC does not move on ETHEREUM; BTC moves on BITCOIN (default BITCOIN)' });
    expect(resolveAssetNetwork('USDC', 'BITCOIN')).toEqual({ ok: false, field: 'network', reason: 'USDC does not move on BITCOIN; USDC moves on ETHEREUM, SOLANA, TRON (default ETHEREUM)' });
  });

  it('refuses an unknown network, hinting at upper case', () => {
    expect(resolveAssetNetwork('USDC', 'solana')).toEqual({ ok: false, field: 'network', reason: 'unknown network "solana"; networks are BITCOIN, ETHEREUM, TRON, SOLANA; network names are upper case: "SOLANA"' });
    expect(resolveAssetNetwork('USDC', 'POLYGON')).toEqual({ ok: false, field: 'network', reason: 'unknown network "POLYGON"; networks are BITCOIN, ETHEREUM, TRON, SOLANA' });
  });

  it('refuses an asset without a blockchain network', () => {
    expect(resolveAssetNetwork('USD')).toEqual({ ok: false, field: 'asset', reason: '"USD" is not a crypto asset with a blockchain network; crypto assets are BTC, ETH, USDC, USDT' });
  });

  it('requireAssetNetwork throws a 400 VALIDATION_ERROR naming the field, or returns the network', () => {
    expect(requireAssetNetwork('USDT', 'SOLANA')).toBe('SOLANA');
    let caught: unknown;
    try {
      requireAssetNetwork('BTC', 'TRON', { network: 'destination.network' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    const error = caught as AppError;
    expect([error.code, error.statusCode, error.details?.[0]?.field]).toEqual(['VALIDATION_ERROR', 400, 'destination.network']);
    expect(error.message).toBe('destination.network: BTC does not move on TRON; BTC moves on BITCOIN (default BITCOIN)');
  });
});

describe('withdrawal fees and token contracts', () => {
  it('gives the contract\'s default fee per (asset, network), in the withdrawn asset, with its minor units', () => {
    const fees = [
      ['BTC', 'BITCOIN', '0.00005000', 5000n],
      ['ETH', 'ETHEREUM', '0.00050000', 500_000_000_000_000n],
      ['USDC', 'ETHEREUM', '2.00', 2_000_000n],
      ['USDC', 'TRON', '1.00', 1_000_000n],
      ['USDC', 'SOLANA', '0.10', 100_000n],
      ['USDT', 'ETHEREUM', '2.00', 2_000_000n],
      ['USDT', 'TRON', '1.00', 1_000_000n],
      ['USDT', 'SOLANA', '0.10', 100_000n],
    ] as const;
    for (const [asset, network, fee, feeMinor] of fees) {
      expect(withdrawalFeeOf(asset, network, {})).toEqual({ asset, network, fee, feeMinor, feeAsset: asset });
    }
  });

  it('has no fee where the asset does not move', () => {
    expect(withdrawalFeeOf('BTC', 'TRON', {})).toBeUndefined();
    expect(withdrawalFeeOf('USD', 'ETHEREUM', {})).toBeUndefined();
    // A setting for a pair that does not exist is never read as one (the start refuses it anyway).
    expect(withdrawalFeeOf('BTC', 'TRON', { 'BTC/TRON': '1' })).toBeUndefined();
  });

  it('takes the server setting of a pair before its default', () => {
    expect(withdrawalFeeOf('USDC', 'TRON', { 'USDC/TRON': '1.50' })).toMatchObject({ fee: '1.50', feeMinor: 1_500_000n });
    expect(withdrawalFeeOf('USDC', 'SOLANA', { 'USDC/TRON': '1.50' })).toMatchObject({ fee: '0.10', feeMinor: 100_000n });
  });

  it('knows the stablecoin contracts and no contract for native assets', () => {
    expect(tokenContractOf('USDT', 'TRON')).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(tokenContractOf('USDC', 'ETHEREUM')).toBe('0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48');
    expect(tokenContractOf('ETH', 'ETHEREUM')).toBeUndefined();
    expect(tokenContractOf('BTC', 'BITCOIN')).toBeUndefined();
  });
});

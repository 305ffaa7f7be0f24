import { randomBytes as nodeRandomBytes } from 'node:crypto';
import { base58, hex } from '@scure/base';
import { AppError } from '../../platform/http/errors.js';
import { decodeBase58 } from './address-encoding.js';
import type { CryptoNetworkName } from './networks.js';

/**
 * Transaction hashes in each chain's own format (contract §12.8): a 32-byte hash written as 64
 * lower-case hex digits on BITCOIN and TRON, the same behind `0x` on ETHEREUM (as Ethereum
 * explorers and JSON-RPC write it), and on SOLANA the transaction's first signature, 64 bytes in
 * Base58 (up to 88 characters).
 */

export const txHashByteLengths: Readonly<Record<CryptoNetworkName, number>> = {
  BITCOIN: 32,
  ETHEREUM: 32,
  TRON: 32,
  SOLANA: 64,
};

/** Longer input is refused before any decoding (a Base58 64-byte signature is at most 88 characters). */
export const txHashLengthMax = 128;

/** Writes hash bytes in the network's format. */
export function formatTxHash(network: CryptoNetworkName, bytes: Uint8Array): string {
  if (bytes.length !== txHashByteLengths[network]) {
    throw new TypeError(`a ${network} transaction hash is ${txHashByteLengths[network]} bytes; got ${bytes.length}`);
  }
  switch (network) {
    case 'BITCOIN':
    case 'TRON':
      return hex.encode(bytes);
    case 'ETHEREUM':
      return `0x${hex.encode(bytes)}`;
    case 'SOLANA':
      return base58.encode(bytes);
  }
}

/**
 * A fresh sandbox transaction hash for the network. Randomness is injectable so a seeded
 * simulator can replay its scenario; by default it comes from the operating system.
 */
export function generateSandboxTxHash(network: CryptoNetworkName, randomBytes: (length: number) => Uint8Array = nodeRandomBytes): string {
  return formatTxHash(network, randomBytes(txHashByteLengths[network]));
}

export type TxHashCheck = { ok: true; txHash: string } | { ok: false; reason: string };

/**
 * Checks a client-supplied transaction hash for the network and normalises it: hex in lower
 * case (letter case carries no meaning there), Base58 as sent (it does).
 */
export function validateTxHash(network: CryptoNetworkName, value: string): TxHashCheck {
  if (value.length === 0) return { ok: false, reason: 'is empty' };
  if (value.length > txHashLengthMax) return { ok: false, reason: `is ${value.length} characters long; no ${network} transaction hash is longer than 88` };
  switch (network) {
    case 'BITCOIN':
    case 'TRON': {
      const form = `a ${network} transaction hash is 64 hex digits without a prefix`;
      if (/^0x/i.test(value)) return { ok: false, reason: `starts with 0x; ${form}` };
      if (!/^[0-9a-fA-F]*$/.test(value)) return { ok: false, reason: `holds characters other than hex digits; ${form}` };
      if (value.length !== 64) return { ok: false, reason: `has ${value.length} hex digits; ${form}` };
      return { ok: true, txHash: value.toLowerCase() };
    }
    case 'ETHEREUM': {
      const form = 'an ETHEREUM transaction hash is 0x followed by 64 hex digits';
      if (!value.startsWith('0x')) return { ok: false, reason: `does not start with 0x; ${form}` };
      const digits = value.slice(2);
      if (!/^[0-9a-fA-F]*$/.test(digits)) return { ok: false, reason: `holds characters other than hex digits after 0x; ${form}` };
      if (digits.length !== 64) return { ok: false, reason: `has ${digits.length} hex digits after 0x; ${form}` };
      return { ok: true, txHash: value.toLowerCase() };
    }
    case 'SOLANA': {
      const form = 'a SOLANA transaction hash is a 64-byte signature in Base58 (up to 88 characters)';
      const decoded = decodeBase58(value);
      if (!decoded.ok) return { ok: false, reason: `${decoded.reason}; ${form}` };
      if (decoded.value.length !== 64) return { ok: false, reason: `decodes to ${decoded.value.length} bytes; ${form}` };
      return { ok: true, txHash: value };
    }
  }
}

/** validateTxHash for a request: a refusal becomes a 400 VALIDATION_ERROR naming the field. */
export function requireValidTxHash(network: CryptoNetworkName, value: string, field = 'txHash'): string {
  const check = validateTxHash(network, value);
  if (check.ok) return check.txHash;
  throw new AppError('VALIDATION_ERROR', `${field}: ${check.reason}`, { details: [{ field, message: check.reason }] });
}

import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base58 } from '@scure/base';
import { assert, AssertionError } from '../../platform/assert.js';
import {
  accountFromUncompressedKey,
  bitcoinSegwitPrefixes,
  eip55Checksummed,
  encodeBase58Check,
  encodeSegwitAddress,
  hash160,
  tronVersionByte,
} from './address-encoding.js';
import type { BitcoinNetwork, CryptoNetworkName } from './networks.js';

/**
 * Sandbox deposit addresses (contract §12.7): deterministic, checksummed, real encodings of real
 * public keys, so a client's own address validator accepts them, but no private key is kept or
 * returned (the sandbox never spends from them).
 *
 *   seed = HMAC-SHA256(sandboxSeed, clientId ‖ walletId ‖ network)     (UTF-8, no separators)
 *   BITCOIN   secp256k1 compressed key → HASH160 → P2WPKH Bech32 v0 (`tb` testnet, `bc` mainnet)
 *   ETHEREUM  secp256k1 uncompressed key → Keccak-256, last 20 bytes → EIP-55
 *   TRON      the same 20 bytes behind 0x41 → Base58Check
 *   SOLANA    seed as the ed25519 secret → public key → Base58
 *
 * The ids are UUIDs of fixed length, so the plain concatenation cannot make two different
 * (client, wallet) pairs collide.
 */

export interface SandboxAddressInput {
  /** `OPENBAAS_SANDBOX_SEED`: a string (used as its UTF-8 bytes) or raw bytes; never empty. */
  sandboxSeed: string | Uint8Array;
  clientId: string;
  walletId: string;
  network: CryptoNetworkName;
  /** Only BITCOIN addresses depend on it (their human-readable part). */
  bitcoinNetwork: BitcoinNetwork;
}

/**
 * How many times a seed that is not a valid secp256k1 secret key (zero, or not below the group
 * order n) is re-hashed. The chance of even one retry is about 2^-128; the bound turns a
 * broken hash into an assertion instead of a loop.
 */
const secretKeyAttemptsMax = 8;

function bytesOf(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? new TextEncoder().encode(value) : value;
}

/** The 32-byte per-(client, wallet, network) seed the keys of the sandbox address come from. */
export function sandboxAddressSeed(input: Omit<SandboxAddressInput, 'bitcoinNetwork'>): Uint8Array {
  const key = bytesOf(input.sandboxSeed);
  assert(key.length > 0, 'the sandbox seed must not be empty');
  return hmac(sha256, key, new TextEncoder().encode(`${input.clientId}${input.walletId}${input.network}`));
}

/**
 * Turns a 32-byte seed into a secp256k1 secret key. Read as a big-endian number, the seed is a
 * valid key when it is from 1 to n − 1; otherwise the next candidate is
 * HMAC-SHA256(sandboxSeed, candidate), until one is valid. Deterministic, so the same wallet
 * always gets the same address.
 */
export function secp256k1SecretKeyFromSeed(seed: Uint8Array, sandboxSeed: string | Uint8Array): Uint8Array {
  const key = bytesOf(sandboxSeed);
  let candidate = seed;
  for (let attempt = 0; attempt < secretKeyAttemptsMax; attempt++) {
    if (candidate.length === 32 && secp256k1.utils.isValidSecretKey(candidate)) return candidate;
    candidate = hmac(sha256, key, candidate);
  }
  throw new AssertionError(`no valid secp256k1 secret key after ${secretKeyAttemptsMax} attempts`);
}

/** P2WPKH address of a compressed secp256k1 public key: Bech32, witness version 0, HASH160 of the key. */
export function bitcoinAddressFromPublicKey(compressedPublicKey: Uint8Array, bitcoinNetwork: BitcoinNetwork): string {
  assert(compressedPublicKey.length === 33, 'a compressed secp256k1 public key is 33 bytes');
  return encodeSegwitAddress(bitcoinSegwitPrefixes[bitcoinNetwork], 0, hash160(compressedPublicKey));
}

/** EIP-55 address of a secp256k1 public key (compressed or uncompressed). */
export function ethereumAddressFromPublicKey(publicKey: Uint8Array): string {
  return eip55Checksummed(accountFromUncompressedKey(uncompressed(publicKey)));
}

/** TRON address of a secp256k1 public key: the Ethereum account behind 0x41, in Base58Check. */
export function tronAddressFromPublicKey(publicKey: Uint8Array): string {
  return tronAddressFromAccount(accountFromUncompressedKey(uncompressed(publicKey)));
}

export function tronAddressFromAccount(account: Uint8Array): string {
  assert(account.length === 20, 'a TRON account is 20 bytes');
  return encodeBase58Check(Uint8Array.from([tronVersionByte, ...account]));
}

/** A Solana address is the 32-byte ed25519 public key in Base58. */
export function solanaAddressFromPublicKey(publicKey: Uint8Array): string {
  assert(publicKey.length === 32, 'an ed25519 public key is 32 bytes');
  return base58.encode(publicKey);
}

function uncompressed(publicKey: Uint8Array): Uint8Array {
  return secp256k1.Point.fromBytes(publicKey).toBytes(false);
}

/** The sandbox deposit address of a wallet on a network (contract §12.7). */
export function deriveSandboxAddress(input: SandboxAddressInput): string {
  const seed = sandboxAddressSeed(input);
  try {
    if (input.network === 'SOLANA') return solanaAddressFromPublicKey(ed25519.getPublicKey(seed));
    const secretKey = secp256k1SecretKeyFromSeed(seed, input.sandboxSeed);
    const publicKey = secp256k1.getPublicKey(secretKey, true);
    switch (input.network) {
      case 'BITCOIN':
        return bitcoinAddressFromPublicKey(publicKey, input.bitcoinNetwork);
      case 'ETHEREUM':
        return ethereumAddressFromPublicKey(publicKey);
      case 'TRON':
        return tronAddressFromPublicKey(publicKey);
    }
  } finally {
    // The secret key is the seed itself (or a re-hash of it); nothing else holds it once we return.
    seed.fill(0);
  }
}

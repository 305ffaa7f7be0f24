import { sha256 } from '@noble/hashes/sha2.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { base58, bech32, bech32m, hex } from '@scure/base';
import type { BitcoinNetwork } from './networks.js';

/**
 * The text encodings of blockchain addresses: Bech32/Bech32m (BIP-173, BIP-350), Base58 and
 * Base58Check, and the EIP-55 mixed-case checksum. Decoders explain every refusal in a sentence,
 * because a developer reads it in the API's error message.
 *
 * Encoding leans on @scure/base; the Bech32 decoder and the Base58Check checksum are written
 * here so each failure has its own reason (and so the property tests check one implementation
 * against the other).
 */

/** Bech32 human-readable parts of the two Bitcoin networks OpenBaaS speaks. */
export const bitcoinSegwitPrefixes: Readonly<Record<BitcoinNetwork, string>> = { mainnet: 'bc', testnet: 'tb' };

/** TRON addresses are a 20-byte account behind this version byte (Base58Check, starting with T). */
export const tronVersionByte = 0x41;

export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string };

// ---------------------------------------------------------------------------------------------
// Bech32 and Bech32m

export const bech32Alphabet = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
/** BIP-173: a Bech32 string is at most 90 characters, separator and checksum included. */
export const bech32LengthMax = 90;
const bech32ChecksumLength = 6;
/** The constant the checksum polynomial must leave: 1 for Bech32, 0x2bc830a3 for Bech32m (BIP-350). */
const bech32Constants = { bech32: 1, bech32m: 0x2bc830a3 } as const;
export type Bech32Variant = keyof typeof bech32Constants;

/** The generator of the BCH code Bech32 uses (BIP-173), one value per bit of the top five bits. */
const bchGenerator = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3] as const;

function bchRemainder(values: readonly number[]): number {
  let remainder = 1;
  for (const value of values) {
    const top = remainder >>> 25;
    remainder = ((remainder & 0x1ffffff) << 5) ^ value;
    bchGenerator.forEach((generator, bit) => {
      if ((top >>> bit) & 1) remainder ^= generator;
    });
  }
  return remainder >>> 0;
}

/** The human-readable part enters the checksum as its high bits, a zero, then its low bits. */
function expandedPrefix(prefix: string): number[] {
  const codes = [...prefix].map((character) => character.charCodeAt(0));
  return [...codes.map((code) => code >> 5), 0, ...codes.map((code) => code & 31)];
}

export interface Bech32String {
  /** The human-readable part, in lower case. */
  prefix: string;
  /** The data part as 5-bit values, checksum removed. */
  words: number[];
  variant: Bech32Variant;
}

function describeCharacter(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  return code >= 0x21 && code <= 0x7e ? `"${character}"` : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Decodes any Bech32 or Bech32m string (BIP-173/BIP-350 rules), saying which checksum it carries. */
export function decodeBech32String(input: string): Decoded<Bech32String> {
  if (input.length > bech32LengthMax) {
    return { ok: false, reason: `is ${input.length} characters long; a Bech32 string has at most ${bech32LengthMax}` };
  }
  for (let index = 0; index < input.length; index++) {
    const code = input.charCodeAt(index);
    if (code < 0x21 || code > 0x7e) {
      return { ok: false, reason: `character ${describeCharacter(input.charAt(index))} at position ${index + 1} is outside printable US-ASCII` };
    }
  }
  const lower = input.toLowerCase();
  if (input !== lower && input !== input.toUpperCase()) {
    return { ok: false, reason: 'mixes upper- and lower-case letters; a Bech32 string is all lower case or all upper case' };
  }
  const separatorIndex = lower.lastIndexOf('1');
  if (separatorIndex === -1) return { ok: false, reason: 'has no separator "1" between its human-readable part and its data' };
  if (separatorIndex === 0) return { ok: false, reason: 'has an empty human-readable part before the separator "1"' };
  const prefix = lower.slice(0, separatorIndex);
  const data = lower.slice(separatorIndex + 1);
  if (data.length < bech32ChecksumLength) {
    return { ok: false, reason: `has ${data.length} characters after the separator "1"; the checksum alone takes ${bech32ChecksumLength}` };
  }
  const values: number[] = [];
  for (let index = 0; index < data.length; index++) {
    const character = data.charAt(index);
    const value = bech32Alphabet.indexOf(character);
    if (value === -1) {
      return {
        ok: false,
        reason: `character ${describeCharacter(input.charAt(separatorIndex + 1 + index))} at position ${separatorIndex + 2 + index} is not in the Bech32 alphabet (${bech32Alphabet}; "1", "b", "i" and "o" never appear after the separator)`,
      };
    }
    values.push(value);
  }
  const remainder = bchRemainder([...expandedPrefix(prefix), ...values]);
  const variant = (Object.keys(bech32Constants) as Bech32Variant[]).find((name) => bech32Constants[name] === remainder);
  if (variant === undefined) {
    return { ok: false, reason: 'fails its Bech32 checksum: a character is mistyped, missing, added or swapped' };
  }
  return { ok: true, value: { prefix, words: values.slice(0, values.length - bech32ChecksumLength), variant } };
}

/** Regroups 5-bit values into bytes; BIP-173 allows at most 4 bits of padding, all zero. */
function wordsToBytes(words: readonly number[]): Decoded<Uint8Array> {
  const bytes: number[] = [];
  let accumulator = 0;
  let bits = 0;
  for (const word of words) {
    accumulator = ((accumulator << 5) | word) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((accumulator >> bits) & 0xff);
    }
  }
  if (bits > 4) return { ok: false, reason: `its data ends in ${bits} bits of padding; at most 4 are allowed` };
  if ((accumulator & ((1 << bits) - 1)) !== 0) return { ok: false, reason: 'its data ends in padding bits that are not zero' };
  return { ok: true, value: Uint8Array.from(bytes) };
}

export interface SegwitProgram {
  /** The human-readable part in lower case: `bc` (mainnet), `tb` (testnet), `bcrt` (regtest), or another. */
  prefix: string;
  version: number;
  program: Uint8Array;
}

export const witnessVersionMax = 16;
export const witnessProgramLengthMin = 2;
export const witnessProgramLengthMax = 40;

/**
 * Decodes a native SegWit address (BIP-173, BIP-350) whatever its human-readable part: witness
 * version 0 must use Bech32 with a 20- or 32-byte program, versions 1 to 16 must use Bech32m with
 * 2 to 40 bytes. The caller decides whether the prefix is the one it expects.
 */
export function decodeSegwitAddress(input: string): Decoded<SegwitProgram> {
  const decoded = decodeBech32String(input);
  if (!decoded.ok) return decoded;
  const { prefix, words, variant } = decoded.value;
  const [version, ...programWords] = words;
  if (version === undefined) return { ok: false, reason: 'has an empty data part: no witness version and no program' };
  if (version > witnessVersionMax) return { ok: false, reason: `has witness version ${version}; versions run from 0 to ${witnessVersionMax}` };
  const program = wordsToBytes(programWords);
  if (!program.ok) return program;
  const length = program.value.length;
  if (length < witnessProgramLengthMin || length > witnessProgramLengthMax) {
    return { ok: false, reason: `has a ${length}-byte witness program; programs are ${witnessProgramLengthMin} to ${witnessProgramLengthMax} bytes` };
  }
  if (version === 0 && length !== 20 && length !== 32) {
    return { ok: false, reason: `has a ${length}-byte version 0 witness program; version 0 programs are 20 bytes (P2WPKH) or 32 bytes (P2WSH)` };
  }
  if (version === 0 && variant !== 'bech32') {
    return { ok: false, reason: 'is a version 0 address with a Bech32m checksum; version 0 addresses use Bech32 (BIP-173)' };
  }
  if (version > 0 && variant !== 'bech32m') {
    return { ok: false, reason: `is a version ${version} address with a Bech32 checksum; version 1 and later use Bech32m (BIP-350)` };
  }
  return { ok: true, value: { prefix, version, program: program.value } };
}

/** Encodes a native SegWit address: Bech32 for version 0, Bech32m for later versions. */
export function encodeSegwitAddress(prefix: string, version: number, program: Uint8Array): string {
  const words = [version, ...bech32.toWords(program)];
  return version === 0 ? bech32.encode(prefix, words) : bech32m.encode(prefix, words);
}

/** The output script a SegWit address pays to: OP_n, then a push of the program. */
export function segwitScriptPubKey(version: number, program: Uint8Array): Uint8Array {
  return Uint8Array.from([version === 0 ? 0 : 0x50 + version, program.length, ...program]);
}

// ---------------------------------------------------------------------------------------------
// Base58 and Base58Check

export const base58Alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const base58CheckLength = 4;

export function isBase58(input: string): boolean {
  return input.length > 0 && [...input].every((character) => base58Alphabet.includes(character));
}

export function decodeBase58(input: string): Decoded<Uint8Array> {
  if (input.length === 0) return { ok: false, reason: 'is empty' };
  for (let index = 0; index < input.length; index++) {
    const character = input.charAt(index);
    if (!base58Alphabet.includes(character)) {
      return {
        ok: false,
        reason: `character ${describeCharacter(character)} at position ${index + 1} is not in the Base58 alphabet (digits and letters except 0, O, I and l)`,
      };
    }
  }
  return { ok: true, value: base58.decode(input) };
}

function doubleSha256(bytes: Uint8Array): Uint8Array {
  return sha256(sha256(bytes));
}

/** Base58Check: the payload followed by the first four bytes of its double SHA-256. */
export function encodeBase58Check(payload: Uint8Array): string {
  const checksum = doubleSha256(payload).subarray(0, base58CheckLength);
  return base58.encode(Uint8Array.from([...payload, ...checksum]));
}

/** Decodes a Base58Check string into its payload (version byte included), checksum verified. */
export function decodeBase58Check(input: string, expectedLength?: number): Decoded<Uint8Array> {
  const decoded = decodeBase58(input);
  if (!decoded.ok) return decoded;
  const bytes = decoded.value;
  if (expectedLength !== undefined && bytes.length !== expectedLength) {
    return { ok: false, reason: `decodes to ${bytes.length} bytes; expected ${expectedLength} (a version byte, 20 bytes and a 4-byte checksum)` };
  }
  if (bytes.length <= base58CheckLength) return { ok: false, reason: `decodes to ${bytes.length} bytes, too short to hold a checksum` };
  const payload = bytes.subarray(0, bytes.length - base58CheckLength);
  const checksum = bytes.subarray(bytes.length - base58CheckLength);
  const expected = doubleSha256(payload).subarray(0, base58CheckLength);
  if (!checksum.every((byte, index) => byte === expected[index])) {
    return { ok: false, reason: 'fails its Base58Check checksum: a character is mistyped, missing, added or swapped' };
  }
  return { ok: true, value: Uint8Array.from(payload) };
}

// ---------------------------------------------------------------------------------------------
// Hashes and the EIP-55 checksum

/** RIPEMD-160 of SHA-256: the 20-byte key hash of Bitcoin P2PKH and P2WPKH. */
export function hash160(bytes: Uint8Array): Uint8Array {
  return ripemd160(sha256(bytes));
}

/**
 * EIP-55: hash the 40 lower-case hex digits (as ASCII) with Keccak-256 and write the i-th
 * letter in upper case when the i-th nibble of the hash is 8 or more.
 */
export function eip55Checksummed(body: Uint8Array): string {
  const lower = hex.encode(body);
  const hash = hex.encode(keccak_256(new TextEncoder().encode(lower)));
  let out = '0x';
  for (let index = 0; index < lower.length; index++) {
    const character = lower.charAt(index);
    out += Number.parseInt(hash.charAt(index), 16) >= 8 ? character.toUpperCase() : character;
  }
  return out;
}

/** The 20-byte account of an Ethereum (and TRON) key: the last 20 bytes of Keccak-256 of the uncompressed point without its 0x04 prefix. */
export function accountFromUncompressedKey(uncompressedPublicKey: Uint8Array): Uint8Array {
  if (uncompressedPublicKey.length !== 65 || uncompressedPublicKey[0] !== 0x04) {
    throw new TypeError('expected a 65-byte uncompressed secp256k1 public key starting with 0x04');
  }
  return keccak_256(uncompressedPublicKey.subarray(1)).subarray(12);
}

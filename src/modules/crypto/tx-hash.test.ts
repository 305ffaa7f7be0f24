import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/http/errors.js';
import { cryptoNetworkNames } from './networks.js';
import { formatTxHash, generateSandboxTxHash, requireValidTxHash, validateTxHash } from './tx-hash.js';

/** Deterministic "randomness": bytes 0, 1, 2, … */
const counting = (length: number): Uint8Array => Uint8Array.from({ length }, (_, index) => index);

const solanaSignature = formatTxHash('SOLANA', counting(64));

describe('generated sandbox transaction hashes', () => {
  it('use each chain\'s format', () => {
    const thirtyTwo = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
    expect(generateSandboxTxHash('BITCOIN', counting)).toBe(thirtyTwo);
    expect(generateSandboxTxHash('TRON', counting)).toBe(thirtyTwo);
    expect(generateSandboxTxHash('ETHEREUM', counting)).toBe(`0x${thirtyTwo}`);
    expect(generateSandboxTxHash('SOLANA', counting)).toBe(solanaSignature);
    expect(solanaSignature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
  });

  it('with real randomness, differ from call to call and pass validation unchanged', () => {
    for (const network of cryptoNetworkNames) {
      const first = generateSandboxTxHash(network);
      expect(first).not.toBe(generateSandboxTxHash(network));
      expect(validateTxHash(network, first)).toEqual({ ok: true, txHash: first });
    }
    expect(generateSandboxTxHash('BITCOIN')).toMatch(/^[0-9a-f]{64}$/);
    expect(generateSandboxTxHash('ETHEREUM')).toMatch(/^0x[0-9a-f]{64}$/);
  });
});

describe('client-supplied hashes: accepted', () => {
  it('hex in either case, normalised to lower case; Base58 as sent', () => {
    const digits = 'AB'.repeat(32);
    expect(validateTxHash('BITCOIN', digits)).toEqual({ ok: true, txHash: digits.toLowerCase() });
    expect(validateTxHash('TRON', digits)).toEqual({ ok: true, txHash: digits.toLowerCase() });
    expect(validateTxHash('ETHEREUM', `0x${digits}`)).toEqual({ ok: true, txHash: `0x${digits.toLowerCase()}` });
    expect(validateTxHash('SOLANA', solanaSignature)).toEqual({ ok: true, txHash: solanaSignature });
  });
});

describe('client-supplied hashes: refused with the reason', () => {
  it('BITCOIN and TRON: a 0x prefix, the wrong length, non-hex characters', () => {
    expect(validateTxHash('BITCOIN', `0x${'a'.repeat(64)}`)).toEqual({ ok: false, reason: 'starts with 0x; a BITCOIN transaction hash is 64 hex digits without a prefix' });
    expect(validateTxHash('TRON', 'a'.repeat(63))).toEqual({ ok: false, reason: 'has 63 hex digits; a TRON transaction hash is 64 hex digits without a prefix' });
    expect(validateTxHash('BITCOIN', `${'a'.repeat(63)}g`)).toEqual({ ok: false, reason: 'holds characters other than hex digits; a BITCOIN transaction hash is 64 hex digits without a prefix' });
  });

  it('ETHEREUM: no 0x prefix, the wrong length', () => {
    expect(validateTxHash('ETHEREUM', 'a'.repeat(64))).toEqual({ ok: false, reason: 'does not start with 0x; an ETHEREUM transaction hash is 0x followed by 64 hex digits' });
    expect(validateTxHash('ETHEREUM', `0x${'a'.repeat(40)}`)).toEqual({ ok: false, reason: 'has 40 hex digits after 0x; an ETHEREUM transaction hash is 0x followed by 64 hex digits' });
  });

  it('SOLANA: 32 bytes instead of a 64-byte signature, a character outside Base58', () => {
    const thirtyTwoBytes = formatTxHash('BITCOIN', counting(32));
    expect(validateTxHash('SOLANA', thirtyTwoBytes).ok).toBe(false);
    expect(validateTxHash('SOLANA', '5oNDL3swdJJF1g9DzJiZ4ynHXgszjAEpUkxVYejchzrY')).toEqual({
      ok: false,
      reason: 'decodes to 32 bytes; a SOLANA transaction hash is a 64-byte signature in Base58 (up to 88 characters)',
    });
  });

  it('any network: empty or far too long', () => {
    expect(validateTxHash('ETHEREUM', '')).toEqual({ ok: false, reason: 'is empty' });
    expect(validateTxHash('SOLANA', '1'.repeat(129)).ok).toBe(false);
  });

  it('requireValidTxHash throws a 400 VALIDATION_ERROR naming the field', () => {
    expect(requireValidTxHash('TRON', 'F'.repeat(64))).toBe('f'.repeat(64));
    let caught: unknown;
    try {
      requireValidTxHash('ETHEREUM', 'nope');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    const error = caught as AppError;
    expect([error.code, error.statusCode, error.details?.[0]?.field]).toEqual(['VALIDATION_ERROR', 400, 'txHash']);
    expect(error.message).toMatch(/^txHash: does not start with 0x/);
  });
});

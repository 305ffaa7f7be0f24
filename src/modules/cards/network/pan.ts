/**
 * Card numbers (PAN), expiry dates and the sandbox CVV. Contract §12.2: PAN = program BIN +
 * random digits + Luhn check digit; expiry 4 years ahead, last day of the month; CVV derived
 * (contract §12.6), never stored.
 */
import crypto from 'node:crypto';
import { assert } from '../../../platform/assert.js';
import { hasValidLuhn, luhnCheckDigit } from '../../../platform/luhn.js';

export const panLengthMin = 12;
export const panLengthMax = 19;
export const panLengthDefault = 16;
export const expiryYearsDefault = 4;

/** Returns a random integer in [0, maxExclusive). Inject a seeded one to replay a scenario. */
export type RandomInt = (maxExclusive: number) => number;

export const secureRandomInt: RandomInt = (maxExclusive) => crypto.randomInt(maxExclusive);

/** True when `pan` is all digits, 12–19 long, and its last digit is the Luhn check digit. */
export function isValidPan(pan: string): boolean {
  if (!/^\d+$/.test(pan) || pan.length < panLengthMin || pan.length > panLengthMax) return false;
  return hasValidLuhn(pan);
}

export function isValidBin(bin: string): boolean {
  return /^\d{6,8}$/.test(bin);
}

function checkBinAndLength(bin: string, length: number): void {
  assert(isValidBin(bin), `a BIN is 6 to 8 digits; got "${bin}"`);
  assert(Number.isInteger(length) && length >= panLengthMin && length <= panLengthMax, `a PAN is ${panLengthMin} to ${panLengthMax} digits; asked for ${length}`);
  assert(length >= bin.length + 2, 'a PAN needs at least one account digit between the BIN and the check digit');
}

/** A PAN from the BIN, random account digits and the Luhn digit. Uniqueness is the caller's job. */
export function generatePan(bin: string, options: { length?: number; randomInt?: RandomInt } = {}): string {
  const length = options.length ?? panLengthDefault;
  const randomInt = options.randomInt ?? secureRandomInt;
  checkBinAndLength(bin, length);
  let payload = bin;
  while (payload.length < length - 1) payload += String(randomInt(10));
  return `${payload}${luhnCheckDigit(payload)}`;
}

/** The PAN with account number `sequence` (left zero padded) after the BIN: for fixtures and demos. */
export function panFromSequence(bin: string, sequence: bigint, options: { length?: number } = {}): string {
  const length = options.length ?? panLengthDefault;
  checkBinAndLength(bin, length);
  const accountDigits = length - 1 - bin.length;
  assert(sequence >= 0n && sequence < 10n ** BigInt(accountDigits), `sequence ${sequence} does not fit in ${accountDigits} digits`);
  const payload = bin + sequence.toString().padStart(accountDigits, '0');
  return `${payload}${luhnCheckDigit(payload)}`;
}

export function panLast4(pan: string): string {
  return pan.slice(-4);
}

/**
 * The PAN as events and logs may show it (contract §12.4): first 6 and last 4 digits, the rest
 * as `*` (`411111******1111`). A PAN shorter than 13 digits shows only its last 4: first 6
 * plus last 4 would leave almost nothing of a short number hidden.
 */
export function maskPan(pan: string): string {
  if (pan.length <= 4) return '*'.repeat(pan.length);
  if (pan.length < 13) return '*'.repeat(pan.length - 4) + pan.slice(-4);
  return pan.slice(0, 6) + '*'.repeat(pan.length - 10) + pan.slice(-4);
}

export interface CardExpiry {
  /** 1–12. */
  expiryMonth: number;
  /** Four digits. */
  expiryYear: number;
}

/**
 * The expiry of a card issued at `issuedAt`: the same calendar month (UTC) `years` later; the
 * card is good through the last day of that month.
 */
export function cardExpiryFor(issuedAt: Date, years = expiryYearsDefault): CardExpiry {
  assert(Number.isInteger(years) && years >= 1 && years <= 20, 'card validity is 1 to 20 years');
  return { expiryMonth: issuedAt.getUTCMonth() + 1, expiryYear: issuedAt.getUTCFullYear() + years };
}

/** The last instant the card is valid: the end of the last day of its expiry month (UTC). */
export function expiryLastValidInstant(expiry: CardExpiry): Date {
  return new Date(Date.UTC(expiry.expiryYear, expiry.expiryMonth, 1) - 1);
}

export function isCardExpired(expiry: CardExpiry, at: Date): boolean {
  return at.getTime() > expiryLastValidInstant(expiry).getTime();
}

function twoDigits(value: number): string {
  return String(value % 100).padStart(2, '0');
}

/** MMYY, the vault's `expiryDate` shape (contract §12.6). */
export function expiryMmYy(expiry: CardExpiry): string {
  return twoDigits(expiry.expiryMonth) + twoDigits(expiry.expiryYear);
}

/** YYMM, the DE14 shape of ISO 8583. */
export function expiryYyMm(expiry: CardExpiry): string {
  return twoDigits(expiry.expiryYear) + twoDigits(expiry.expiryMonth);
}

/**
 * Reads a DE14 value (YYMM) into an expiry; null when it is not one. Two-digit years are read in
 * the century 2000–2099, which holds every card a sandbox can issue.
 */
export function expiryFromYyMm(yymm: string): CardExpiry | null {
  if (!/^\d{4}$/.test(yymm)) return null;
  const expiryMonth = Number(yymm.slice(2));
  if (expiryMonth < 1 || expiryMonth > 12) return null;
  return { expiryMonth, expiryYear: 2000 + Number(yymm.slice(0, 2)) };
}

/**
 * SANDBOX ONLY: a stable three-digit card verification value, HMAC-SHA256(secret, PAN ‖ MMYY ‖
 * "cvv") reduced to three digits (contract §12.6). It is never stored or logged, only recomputed.
 * Real issuers derive CVV2 with network keys and algorithms this project does not implement.
 */
export function deriveSandboxCvv(secret: Uint8Array | string, pan: string, expiry: CardExpiry): string {
  assert(/^\d+$/.test(pan), 'a PAN holds digits only');
  const digest = crypto.createHmac('sha256', secret).update(`${pan}${expiryMmYy(expiry)}cvv`).digest();
  // 32 bits reduced modulo 1000: the bias (under 1 in 4 million) does not matter for a sandbox value.
  return String(digest.readUInt32BE(0) % 1000).padStart(3, '0');
}

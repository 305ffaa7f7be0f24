import { hasValidLuhn, luhnCheckDigit } from '../../platform/luhn.js';
import { permuteSerialFromOne } from '../../platform/serial-permutation.js';

/**
 * Virtual account numbers: 12 digits, "70" + a 9-digit serial + a Luhn check digit, for example
 * 700000000017. The serials come from one PostgreSQL sequence shared by every client, so a number
 * is globally unique (an inbound deposit names only the number) and never handed out twice,
 * even after a rolled-back transaction (a sequence never goes back). The check digit lets a
 * mistyped number be told apart from an unknown one.
 *
 * The sequence's value is not the serial: it goes through a keyed permutation of 1 … 999,999,999
 * (virtualAccountSerialFor), so two numbers a client receives say nothing of how many other
 * clients opened accounts in between, and the next number cannot be guessed (until the
 * thirty-fourth session the bare sequence value was the serial; found by an audit). Numbers given
 * before then hold such bare serials, so virtual-accounts.service skips a permuted number that a
 * wallet already holds.
 */

export const virtualAccountNumberLength = 12;
export const virtualAccountNumberPrefix = '70';
export const virtualAccountSerialDigits = 9;
export const virtualAccountSerialMax = 10n ** BigInt(virtualAccountSerialDigits) - 1n;
export const virtualAccountNumberPattern = /^70[0-9]{10}$/;

/**
 * The serial of the number drawn as the sequence's value `sequenceValue` (1 … 999,999,999): a
 * permutation of that range keyed by `serialKey` (derived from OPENBAAS_ENCRYPTION_KEY for this
 * purpose alone), so distinct values give distinct serials.
 */
export function virtualAccountSerialFor(sequenceValue: bigint, serialKey: Buffer): bigint {
  return permuteSerialFromOne(sequenceValue, Number(virtualAccountSerialMax), serialKey);
}

export function formatVirtualAccountNumber(serial: bigint): string {
  if (serial < 1n || serial > virtualAccountSerialMax) throw new Error(`virtual account serial out of range: ${serial}`);
  const payload = `${virtualAccountNumberPrefix}${serial.toString().padStart(virtualAccountSerialDigits, '0')}`;
  return `${payload}${luhnCheckDigit(payload)}`;
}

/** True for a well-formed number with a correct check digit. */
export function isValidVirtualAccountNumber(value: string): boolean {
  return virtualAccountNumberPattern.test(value) && hasValidLuhn(value);
}

import { hasValidLuhn, luhnCheckDigit } from '../../platform/luhn.js';
import { permuteSerialFromOne } from '../../platform/serial-permutation.js';

/**
 * The numbers a wallet can receive bank deposits on, besides its virtual account number ("70…",
 * made by the virtual-accounts module):
 *
 * - a dedicated account number: "71" + a 9-digit serial + a Luhn check digit (12 digits);
 * - a VRN (virtual reference number): "72" + a 9-digit serial + a Luhn check digit (12 digits).
 *
 * Each kind's serials come from its own PostgreSQL sequence shared by every client (migration
 * 0007), so a number is unique across the platform (an inbound deposit names only the number) and
 * never handed out twice, even after a rolled-back transaction. The prefixes keep the three kinds
 * apart, and the check digit tells a mistyped number from an unknown one.
 *
 * The sequence's value is not the serial: it goes through a keyed permutation of 1 … 999,999,999
 * (accountSerialFor), so two numbers a client receives say nothing of how many other clients
 * were given one in between, and the next number cannot be guessed (until the thirty-fourth
 * session the bare sequence value was the serial; found by an audit). Numbers given before then
 * hold such bare serials, so bank-accounts.store skips a permuted number that a wallet already
 * holds.
 */
export const accountNumberKinds = {
  DEDICATED: { prefix: '71', sequence: 'dedicated_account_serial', pattern: /^71[0-9]{10}$/ },
  VRN: { prefix: '72', sequence: 'vrn_serial', pattern: /^72[0-9]{10}$/ },
} as const;

export type AccountNumberKind = keyof typeof accountNumberKinds;

const serialDigits = 9;
const serialMax = 10n ** BigInt(serialDigits) - 1n;

/**
 * The keys of the permutations of the serials, one per kind (accountNumberSerialKeys in
 * modules/routes.ts), all derived from OPENBAAS_ENCRYPTION_KEY.
 */
export type AccountNumberSerialKeys = Record<AccountNumberKind, Buffer>;

/**
 * The serial of the number of the kind drawn as its sequence's value `sequenceValue`
 * (1 … 999,999,999): a permutation of that range keyed by `serialKey`, so distinct values give
 * distinct serials.
 */
export function accountSerialFor(sequenceValue: bigint, serialKey: Buffer): bigint {
  return permuteSerialFromOne(sequenceValue, Number(serialMax), serialKey);
}

export function formatAccountNumber(kind: AccountNumberKind, serial: bigint): string {
  if (serial < 1n || serial > serialMax) throw new Error(`${kind} serial out of range: ${serial}`);
  const payload = `${accountNumberKinds[kind].prefix}${serial.toString().padStart(serialDigits, '0')}`;
  return `${payload}${luhnCheckDigit(payload)}`;
}

/** True for a well-formed number of the kind with a correct check digit. */
export function isValidAccountNumber(kind: AccountNumberKind, value: string): boolean {
  return accountNumberKinds[kind].pattern.test(value) && hasValidLuhn(value);
}

import type { BankNetwork } from './bank-transfers.tables.js';

/**
 * Return codes a rail answers when a payment comes back: NACHA return reason codes (R01…) on
 * ACH, ISO 20022 reason codes (AC04…) on Fedwire and SWIFT. The sandbox rail's magic values use
 * exactly this list, so each documented code has a description to report as failureReason.
 */
export const returnCodeDescriptions: Readonly<Record<string, string>> = {
  R01: 'Insufficient funds',
  R02: 'Account closed',
  R03: 'No account or unable to locate account',
  R04: 'Invalid account number structure',
  R06: 'Returned per the originating bank\'s request',
  R07: 'Authorization revoked by the customer',
  R08: 'Payment stopped',
  R09: 'Uncollected funds',
  R10: 'Customer advises the originator is not known or not authorized',
  R13: 'Invalid ACH routing number',
  R16: 'Account frozen',
  R17: 'File record edit criteria',
  R20: 'Non-transaction account',
  R23: 'Credit entry refused by the receiver',
  R29: 'Corporate customer advises not authorized',
  AC01: 'Incorrect account number',
  AC03: 'Invalid creditor account number',
  AC04: 'Closed account number',
  AC06: 'Blocked account',
  AG01: 'Transaction forbidden on this type of account',
  AM04: 'Insufficient funds',
  BE04: 'Missing creditor address',
  MS03: 'Reason not specified',
  RC01: 'Bank identifier incorrect',
  RR01: 'Missing debtor account or identification',
};

/** Free-form return codes from the sandbox controls: 2 to 8 capital letters and digits. */
export const returnCodePattern = '^[A-Z0-9]{2,8}$';

/**
 * The code of a failure nobody gave a code for: R03 on ACH, MS03 ("reason not specified")
 * elsewhere; for an ACH deposit taken back after it settled, R06 ("returned per the originating
 * bank's request": the account was found and credited, so R03 would say something false; until
 * 2026-12-06 such a return got R03; found by a re-audit).
 */
export function defaultReturnCode(network: BankNetwork | null, settledDeposit = false): string {
  if (network === 'ACH') return settledDeposit ? 'R06' : 'R03';
  return 'MS03';
}

/** The code of a deposit no wallet could be found for: R03 on ACH, AC03 (invalid creditor account) elsewhere. */
export function unroutableReturnCode(network: BankNetwork | null): string {
  return network === 'ACH' ? 'R03' : 'AC03';
}

export function describeReturnCode(code: string): string {
  return returnCodeDescriptions[code] ?? 'Returned by the receiving bank';
}

// Longest first, so an account number ending in RR01 means RR01, not R01.
const magicCodesLongestFirst = Object.keys(returnCodeDescriptions).sort((a, b) => b.length - a.length);

/**
 * The sandbox magic value: an account number that ends in one of the listed return codes (any
 * letter case), for example 000123456R01 or 7654321AC04, makes the payment come back with that
 * code. Undefined for any other account number.
 */
export function magicReturnCode(accountNumber: string): string | undefined {
  const upper = accountNumber.toUpperCase();
  for (const code of magicCodesLongestFirst) {
    if (upper.length > code.length && upper.endsWith(code)) return code;
  }
  return undefined;
}

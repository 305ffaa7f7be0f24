import countries from 'i18n-iso-countries';
import type { IdentifierCheck } from './routing-number.js';

/**
 * A BIC (SWIFT code) per ISO 9362: a 4-character party prefix, a 2-letter ISO 3166-1 country
 * code, a 2-character party suffix (location) and an optional 3-character branch code. The 2014
 * and later editions allow digits in the prefix; every code SWIFT has issued so far starts with
 * letters, and both are accepted here. Letters are compared case-insensitively and returned in
 * upper case, the only form the networks use.
 */
export interface ParsedBic {
  /** The code as given, upper-cased (8 or 11 characters). */
  code: string;
  /** The 11-character form: an 8-character code names the primary office, branch XXX. */
  bic11: string;
  institutionCode: string;
  countryCode: string;
  locationCode: string;
  branchCode: string;
}

export function countryName(countryCode: string): string {
  return countries.getName(countryCode, 'en') ?? countryCode;
}

export function isCountryCode(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && countries.isValid(code);
}

export function checkBic(input: string): IdentifierCheck<ParsedBic> {
  // Checked as sent, before upper case: Unicode case mapping turns some other characters into
  // ASCII letters (the ligature U+FB00 into FF, the dotless i into I, ß into SS), which were then
  // stored as a code the client never sent (until 2026-12-02; found by an audit).
  const characters = [...input].length;
  if (characters !== 8 && characters !== 11) {
    return { ok: false, reason: `a SWIFT/BIC code is 8 or 11 characters long; got ${characters}` };
  }
  if (!/^[A-Za-z0-9]+$/.test(input)) return { ok: false, reason: 'a SWIFT/BIC code holds only letters and digits (no spaces or symbols)' };
  const code = input.toUpperCase();
  const institutionCode = code.slice(0, 4);
  const countryCode = code.slice(4, 6);
  const locationCode = code.slice(6, 8);
  const branchCode = code.length === 11 ? code.slice(8, 11) : 'XXX';
  if (!/^[A-Z]{2}$/.test(countryCode)) {
    return { ok: false, reason: `characters 5 and 6 of a SWIFT/BIC code are a country code of two letters; got "${countryCode}"` };
  }
  if (!isCountryCode(countryCode)) {
    return { ok: false, reason: `"${countryCode}" (characters 5 and 6) is not an ISO 3166-1 country code` };
  }
  if (branchCode.startsWith('X') && branchCode !== 'XXX') {
    return { ok: false, reason: `a branch code starting with X must be XXX (the primary office); got "${branchCode}"` };
  }
  return { ok: true, value: { code, bic11: `${code.slice(0, 8)}${branchCode}`, institutionCode, countryCode, locationCode, branchCode } };
}

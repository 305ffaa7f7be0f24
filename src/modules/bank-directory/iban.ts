import { electronicFormatIBAN, extractIBAN, getCountrySpecifications, validateIBAN, ValidationErrorsIBAN } from 'ibantools';
import { countryName } from './bic.js';
import { hasValidLuhn } from '../../platform/luhn.js';
import type { IdentifierCheck } from './routing-number.js';

/**
 * IBANs per ISO 13616: a country of the IBAN registry, two check digits that make the whole
 * number 1 modulo 97, and a BBAN of the length and shape that country defines (ibantools holds
 * the registry, and the national check digits some countries add). The print form with spaces
 * every four characters and lower-case letters are accepted; the electronic form (upper case, no
 * spaces) is what comes back.
 */
export interface ParsedIban {
  iban: string;
  countryCode: string;
  /** The national bank identifier inside the BBAN, when the country defines one. */
  bankCode: string | undefined;
  bban: string;
}

const ibanLengthMax = 34;
const countrySpecifications = getCountrySpecifications();

/**
 * Countries of the ISO 13616 registry that ibantools 4.5 still marks as outside it (added to the
 * registry from 2021 on: Burundi, Djibouti, the Falkland Islands, Honduras); it knows their
 * lengths and BBAN formats. Until 2026-12-02 their IBANs were refused, and an account number in
 * their IBAN form was taken as a plain one, unchecked (found by an audit).
 */
const registryCountriesMissingFromIbantools: ReadonlySet<string> = new Set(['BI', 'DJ', 'FK', 'HN']);

/** True when the country is in the ISO 13616 IBAN registry (ibantools also knows some that are not). */
export function usesIban(countryCode: string): boolean {
  return countrySpecifications[countryCode]?.IBANRegistry === true || registryCountriesMissingFromIbantools.has(countryCode);
}

/** Odd-position values of the Italian CIN (digits 0-9 as the letters A-J). */
const cinOddValues = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
const cinValue = (character: string) => (/\d/.test(character) ? Number(character) : character.charCodeAt(0) - 65);

/** The CIN letter of an Italian or San Marino BBAN: computed over ABI, CAB and account (its last 22 characters). */
function cinOf(bban: string): string {
  let sum = 0;
  const payload = bban.slice(1);
  for (let index = 0; index < payload.length; index++) {
    const value = cinValue(payload[index] as string);
    sum += index % 2 === 0 ? (cinOddValues[value] as number) : value;
  }
  return String.fromCharCode(65 + (sum % 26));
}

/**
 * National check digits ibantools does not verify: the CIN letter of Italy and San Marino and the
 * Luhn digit of Finland (ibantools checks those of BA, BE, CZ, EE, ES, FR, HR, HU, MC, ME, MK, NO,
 * PT, RS, SI and SK). Until 2026-12-02 an IBAN with a wrong one passed (found by an audit).
 */
function nationalCheckHolds(countryCode: string, bban: string): boolean {
  if (countryCode === 'IT' || countryCode === 'SM') return bban[0] === cinOf(bban);
  if (countryCode === 'FI') return hasValidLuhn(bban); // the whole 14-digit BBAN; its last digit is the check digit
  return true;
}

export function expectedIbanLength(countryCode: string): number | undefined {
  return countrySpecifications[countryCode]?.chars ?? undefined;
}

/** The electronic form of an IBAN: upper case, without the spaces (and dashes) of the print form. No validation. */
export function electronicIban(input: string): string {
  return electronicFormatIBAN(input) ?? input;
}

export function checkIban(input: string): IdentifierCheck<ParsedIban> {
  if (!/^[A-Za-z0-9 ]*$/.test(input)) return { ok: false, reason: 'an IBAN holds only letters, digits and spaces' };
  const iban = electronicIban(input);
  if (iban.length < 15) return { ok: false, reason: `an IBAN is at least 15 characters long; got ${iban.length}` };
  if (iban.length > ibanLengthMax) return { ok: false, reason: `an IBAN is at most ${ibanLengthMax} characters long; got ${iban.length}` };
  const countryCode = iban.slice(0, 2);
  if (!/^[A-Z]{2}$/.test(countryCode)) return { ok: false, reason: 'an IBAN starts with a two-letter country code' };
  if (!usesIban(countryCode)) {
    return { ok: false, reason: `${countryCode} is not a country of the IBAN registry` };
  }
  if (!/^\d{2}$/.test(iban.slice(2, 4))) return { ok: false, reason: 'characters 3 and 4 of an IBAN are its two check digits' };
  const length = expectedIbanLength(countryCode);
  if (length !== undefined && iban.length !== length) {
    return { ok: false, reason: `an IBAN from ${countryName(countryCode)} is ${length} characters long; got ${iban.length}` };
  }
  const result = validateIBAN(iban);
  if (!result.valid) {
    const errors = new Set(result.errorCodes);
    if (errors.has(ValidationErrorsIBAN.WrongBBANFormat) || errors.has(ValidationErrorsIBAN.WrongBBANLength)) {
      return { ok: false, reason: `the account part (BBAN) does not have the format of ${countryCode} IBANs` };
    }
    if (errors.has(ValidationErrorsIBAN.WrongIBANChecksum)) {
      return { ok: false, reason: 'the check digits do not match (the mod-97 checksum failed)' };
    }
    if (errors.has(ValidationErrorsIBAN.WrongAccountBankBranchChecksum)) {
      return { ok: false, reason: `the national check digits of the account part do not match (${countryName(countryCode)})` };
    }
    return { ok: false, reason: 'the IBAN is not valid' };
  }
  const parts = extractIBAN(iban);
  const bban = parts.bban ?? iban.slice(4);
  if (!nationalCheckHolds(countryCode, bban)) {
    return { ok: false, reason: `the national check digits of the account part do not match (${countryName(countryCode)})` };
  }
  return { ok: true, value: { iban, countryCode, bankCode: parts.bankIdentifier || undefined, bban } };
}

/** An account number that starts like an IBAN (a country of the registry and two digits) is meant as one. */
export function looksLikeIban(accountNumber: string): boolean {
  const compact = accountNumber.toUpperCase();
  return /^[A-Z]{2}\d{2}/.test(compact) && usesIban(compact.slice(0, 2));
}

import { electronicFormatIBAN, extractIBAN, getCountrySpecifications, validateIBAN, ValidationErrorsIBAN } from 'ibantools';
import { countryName } from './bic.js';
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

/** True when the country is in the ISO 13616 IBAN registry (ibantools also knows some that are not). */
export function usesIban(countryCode: string): boolean {
  return countrySpecifications[countryCode]?.IBANRegistry === true;
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
  if (iban.length < 4) return { ok: false, reason: `an IBAN is at least 15 characters long; got ${iban.length}` };
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
  return { ok: true, value: { iban, countryCode, bankCode: parts.bankIdentifier || undefined, bban: parts.bban ?? iban.slice(4) } };
}

/** An account number that starts like an IBAN (a country of the registry and two digits) is meant as one. */
export function looksLikeIban(accountNumber: string): boolean {
  const compact = accountNumber.toUpperCase();
  return /^[A-Z]{2}\d{2}/.test(compact) && usesIban(compact.slice(0, 2));
}

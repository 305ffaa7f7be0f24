import net from 'node:net';
import countries from 'i18n-iso-countries';
import { parsePhoneNumberFromString, validatePhoneNumberLength } from 'libphonenumber-js';
import { AppError, validationError } from '../../platform/http/errors.js';
import { assertPlainText, isBlank } from '../../platform/text.js';
import type { Address } from './customers.tables.js';

/**
 * Pure input rules of the customers module: each takes the value and the JSON path of the field
 * it came from, and either returns the normalised value or throws a VALIDATION_ERROR naming it.
 */

export const customerTypes = ['PRIVATE', 'LEGAL'] as const;
export type CustomerType = (typeof customerTypes)[number];

export const emailLengthMax = 254;
export const nameLengthMax = 100;
export const documentNumberLengthMax = 40;
export const addressLimits = { street: 100, cityCounty: 60, stateRegion: 60, zip: 16 } as const;
export const sexValues = ['MALE', 'FEMALE'] as const;
export const earliestBirthDate = '1900-01-01';

/**
 * Occupation codes: the 23 major groups of the US Standard Occupational Classification (SOC
 * 2018). The specification reduced occupations to 2-digit macro categories without an "Other".
 */
export const occupationGroups = {
  '11': 'Management Occupations',
  '13': 'Business and Financial Operations Occupations',
  '15': 'Computer and Mathematical Occupations',
  '17': 'Architecture and Engineering Occupations',
  '19': 'Life, Physical, and Social Science Occupations',
  '21': 'Community and Social Service Occupations',
  '23': 'Legal Occupations',
  '25': 'Educational Instruction and Library Occupations',
  '27': 'Arts, Design, Entertainment, Sports, and Media Occupations',
  '29': 'Healthcare Practitioners and Technical Occupations',
  '31': 'Healthcare Support Occupations',
  '33': 'Protective Service Occupations',
  '35': 'Food Preparation and Serving Related Occupations',
  '37': 'Building and Grounds Cleaning and Maintenance Occupations',
  '39': 'Personal Care and Service Occupations',
  '41': 'Sales and Related Occupations',
  '43': 'Office and Administrative Support Occupations',
  '45': 'Farming, Fishing, and Forestry Occupations',
  '47': 'Construction and Extraction Occupations',
  '49': 'Installation, Maintenance, and Repair Occupations',
  '51': 'Production Occupations',
  '53': 'Transportation and Material Moving Occupations',
  '55': 'Military Specific Occupations',
} as const;
export const occupationCodes = Object.keys(occupationGroups) as Array<keyof typeof occupationGroups>;

/** Legal structure of a business customer. */
export const businessStructureTypes = {
  SOLE_PROPRIETORSHIP: 'Sole proprietorship',
  GENERAL_PARTNERSHIP: 'General partnership',
  LIMITED_PARTNERSHIP: 'Limited partnership (LP) or limited liability partnership (LLP)',
  LLC: 'Limited liability company',
  CORPORATION: 'Corporation (C corporation or a foreign stock company)',
  S_CORPORATION: 'S corporation',
  NON_PROFIT: 'Non-profit organisation',
  TRUST: 'Trust',
  COOPERATIVE: 'Cooperative',
  GOVERNMENT_ENTITY: 'Government entity',
} as const;
export const businessStructureTypeCodes = Object.keys(businessStructureTypes) as Array<keyof typeof businessStructureTypes>;

/** Kinds of company identification a business customer can give. */
export const businessIdentificationTypes = {
  REGISTRATION_NUMBER: 'Company or trade register number',
  LEI: 'Legal Entity Identifier (ISO 17442)',
  VAT_NUMBER: 'VAT registration number',
  DUNS: 'Dun & Bradstreet D-U-N-S number',
} as const;
export const businessIdentificationTypeCodes = Object.keys(businessIdentificationTypes) as Array<keyof typeof businessIdentificationTypes>;

export const personRoles = ['SHAREHOLDER', 'REPRESENTATIVE'] as const;
export type PersonRole = (typeof personRoles)[number];

const alpha2Codes: ReadonlySet<string> = new Set(Object.keys(countries.getAlpha2Codes()));

/** ISO 3166-1 alpha-2, upper case, from the i18n-iso-countries list (so "us" and "USA" are refused). */
export function requireCountry(value: string, field: string): string {
  if (!/^[A-Z]{2}$/.test(value) || !alpha2Codes.has(value)) {
    throw validationError(field, 'must be an ISO 3166-1 alpha-2 country code in capitals, for example "US"');
  }
  return value;
}

/** A calendar date YYYY-MM-DD that exists (2023-02-30 does not). */
export function parseCalendarDate(value: string, field: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : undefined;
  if (!match || !date || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) {
    throw validationError(field, 'must be a real calendar date written YYYY-MM-DD');
  }
  return value;
}

/** A birth date: a real date, in the past (by the injected clock) and not before 1900. */
export function requireBirthDate(value: string, field: string, now: Date): string {
  parseCalendarDate(value, field);
  if (value >= now.toISOString().slice(0, 10)) throw validationError(field, 'must be in the past');
  if (value < earliestBirthDate) throw validationError(field, `must not be before ${earliestBirthDate}`);
  return value;
}

/**
 * US Social Security number: 123-45-6789 or 123456789, normalised to the dashed form. Area 000,
 * 666 and 900–999, group 00 and serial 0000 are never issued. The value is never echoed in errors.
 */
export function normaliseSsn(value: string, field: string): string {
  // Both dashes or none: 123-456789 and 12345-6789 are neither form.
  const match = /^(\d{3})(-?)(\d{2})\2(\d{4})$/.exec(value);
  const [area, group, serial] = match ? [match[1] ?? '', match[3] ?? '', match[4] ?? ''] : ['', '', ''];
  if (!match || area === '000' || area === '666' || area.startsWith('9') || group === '00' || serial === '0000') {
    throw validationError(field, 'must be a valid US Social Security number (AAA-GG-SSSS or 9 digits)');
  }
  return `${area}-${group}-${serial}`;
}

export function maskSsn(last4: string): string {
  return `***-**-${last4}`;
}

/**
 * A document number as customer endpoints show it (contract §12.6): its last four characters,
 * the rest starred (all of it when it has four or fewer). The clear value is the vault's
 * documents:reveal.
 */
export function maskDocumentNumber(value: string | null): string | null {
  if (value === null) return null;
  const shown = value.length > 4 ? value.slice(-4) : '';
  return '*'.repeat(value.length - shown.length) + shown;
}

/** Document numbers: letters, digits, spaces and dashes; stored without surrounding spaces. */
export function normaliseDocumentNumber(value: string, field: string): string {
  const trimmed = value.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9 -]*$/.test(trimmed) || trimmed.length > documentNumberLengthMax) {
    throw validationError(field, `must be 1 to ${documentNumberLengthMax} letters, digits, spaces or dashes`);
  }
  return trimmed;
}

export function normaliseCountryCallingCode(value: string, field: string): string {
  const digits = value.startsWith('+') ? value.slice(1) : value;
  if (!/^[0-9]{1,4}$/.test(digits)) throw validationError(field, 'must be 1 to 4 digits (an optional leading + is dropped)');
  return digits;
}

/**
 * A phone number with its dialling code, checked against the numbering plan of that code
 * (libphonenumber metadata: known code, possible length) and stored as national digits only.
 */
export function normalisePhone(number: string, callingCode: string, fields: { number: string; callingCode: string }): { phoneNumber: string; phoneCountryCode: string } {
  const code = normaliseCountryCallingCode(callingCode, fields.callingCode);
  if (!/^[0-9 ().-]{2,30}$/.test(number)) {
    throw validationError(fields.number, 'may hold only digits, spaces, dots, dashes and parentheses');
  }
  const digits = number.replace(/[^0-9]/g, '');
  const international = `+${code}${digits}`;
  const problem = validatePhoneNumberLength(international);
  if (problem === 'INVALID_COUNTRY') throw validationError(fields.callingCode, 'is not a country calling code in use');
  if (problem !== undefined) {
    throw validationError(fields.number, `is not a possible phone number for country calling code +${code} (${problem.toLowerCase().replace(/_/g, ' ')})`);
  }
  const parsed = parsePhoneNumberFromString(international);
  if (!parsed) throw validationError(fields.number, `is not a possible phone number for country calling code +${code}`);
  return { phoneNumber: parsed.nationalNumber, phoneCountryCode: parsed.countryCallingCode };
}

export function normaliseEmail(value: string, field: string): string {
  const trimmed = value.trim();
  // The route schema already checks the syntax (ajv-formats "email"); this keeps the limits in one place.
  if (trimmed.length < 3 || trimmed.length > emailLengthMax || !trimmed.includes('@')) {
    throw validationError(field, `must be an email address of at most ${emailLengthMax} characters`);
  }
  return trimmed;
}

export function requireIpAddress(value: string, field: string): string {
  // net.isIP takes an IPv6 zone (fe80::1%eth0): an interface of some machine, not an address someone signed up from.
  if (net.isIP(value) === 0 || value.includes('%')) throw validationError(field, 'must be an IPv4 or IPv6 address (without a zone such as %eth0)');
  return value;
}

/** The 2017/2022 NAICS sectors: every code starts with one of them (31–33, 44–45 and 48–49 are one sector each). */
const naicsSectors = ['11', '21', '22', '23', '31', '32', '33', '42', '44', '45', '48', '49', '51', '52', '53', '54', '55', '56', '61', '62', '71', '72', '81', '92'];

export function requireNaicsCode(value: string, field: string): string {
  if (!/^[0-9]{2,6}$/.test(value)) throw validationError(field, 'must be a NAICS code of 2 to 6 digits');
  if (!naicsSectors.includes(value.slice(0, 2))) throw validationError(field, `must start with a NAICS sector (${naicsSectors.join(', ')}); ${value.slice(0, 2)} is none`);
  return value;
}

/**
 * A text field (names, address lines, tax and registration numbers, portfolio names): none of
 * the characters platform/text.ts refuses (control characters, line breaks, invisible formatting
 * characters: they would reach deposit instructions and bank files, or make a value of one
 * zero-width space pass for filled in), then trimmed, not empty, within its limit.
 */
/** A domain name's last label: letters, or an internationalised one in its ASCII (xn--) form. */
const topLevelLabel = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
const domainLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A business's website: an absolute http or https URL of a domain name (the schema checks the
 * scheme and the length). Until the thirty-fourth session anything the loose URI format let
 * through was stored (https://:::, https://a:99999, credentials); found by an audit. Returned as
 * given.
 */
export function requireWebsite(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw validationError(field, 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError(field, 'must be an absolute http or https URL');
  // The host as written: an "@" (even with an empty user name) or a percent-encoded host would be
  // stored as written yet opened as something else.
  const authority = /^[A-Za-z]+:\/\/([^/?#]*)/.exec(value)?.[1] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) throw validationError(field, 'must not contain a user name or password');
  if (authority.includes('%')) throw validationError(field, 'must write its domain name without percent-encoding');
  if (url.port === '0') throw validationError(field, 'must not name port 0');
  const labels = url.hostname.split('.');
  const topLevel = labels.pop() ?? '';
  if (labels.length === 0 || !topLevelLabel.test(topLevel) || !labels.every((label) => domainLabel.test(label))) {
    throw validationError(field, 'must name a domain name (such as example.com)');
  }
  return value;
}

export function requireText(value: string, field: string, lengthMax: number): string {
  assertPlainText(value, field);
  const trimmed = value.trim();
  if (isBlank(trimmed)) throw validationError(field, 'must not be empty');
  if (trimmed.length > lengthMax) throw validationError(field, `must be at most ${lengthMax} characters`);
  return trimmed;
}

export interface AddressInput {
  street1: string;
  street2?: string | null | undefined;
  cityCounty: string;
  stateRegion: string;
  zip: string;
  countryCode: string;
}

export function normaliseAddress(input: AddressInput, field: string): Address {
  const street2 = input.street2 === undefined || input.street2 === null || input.street2.trim() === '' ? null : input.street2;
  return {
    street1: requireText(input.street1, `${field}.street1`, addressLimits.street),
    street2: street2 === null ? null : requireText(street2, `${field}.street2`, addressLimits.street),
    cityCounty: requireText(input.cityCounty, `${field}.cityCounty`, addressLimits.cityCounty),
    stateRegion: requireText(input.stateRegion, `${field}.stateRegion`, addressLimits.stateRegion),
    zip: requireText(input.zip, `${field}.zip`, addressLimits.zip),
    countryCode: requireCountry(input.countryCode, `${field}.countryCode`),
  };
}

/**
 * Ownership percentages are decimal strings with up to 4 decimals and no leading zero, 0 < p ≤ 100. Inside they are
 * integers in ten-thousandths of a percent, so totals are exact.
 */
export const ownershipScale = 4;
export const ownershipMaxUnits = 100n * 10n ** BigInt(ownershipScale);

export function parseOwnershipPercentage(value: string, field: string): bigint {
  // Written as amounts are: no leading zero ("05" is refused, "0.5" taken).
  const match = /^(0|[1-9]\d{0,2})(?:\.(\d{1,4}))?$/.exec(value);
  if (!match) throw validationError(field, 'must be a decimal string such as "25" or "33.3333" (at most 4 decimals)');
  const units = BigInt(match[1] ?? '0') * 10n ** BigInt(ownershipScale) + BigInt((match[2] ?? '').padEnd(ownershipScale, '0') || '0');
  if (units <= 0n || units > ownershipMaxUnits) throw validationError(field, 'must be more than 0 and at most 100');
  return units;
}

/** Formats ten-thousandths of a percent without trailing zeros: 250000 → "25", 333333 → "33.3333". */
export function formatOwnershipPercentage(units: bigint): string {
  const scale = 10n ** BigInt(ownershipScale);
  const whole = units / scale;
  const fraction = (units % scale).toString().padStart(ownershipScale, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole.toString();
}

/** Reads PostgreSQL numeric(7,4) text such as "25.0000" back into units. */
export function ownershipUnitsFromDatabase(value: string): bigint {
  const [whole = '0', fraction = ''] = value.split('.');
  return BigInt(whole) * 10n ** BigInt(ownershipScale) + BigInt(fraction.padEnd(ownershipScale, '0').slice(0, ownershipScale) || '0');
}

export function ownershipUnitsToDatabase(units: bigint): string {
  const scale = 10n ** BigInt(ownershipScale);
  return `${units / scale}.${(units % scale).toString().padStart(ownershipScale, '0')}`;
}

/**
 * KYC (and KYB) identity data may change only before any onboarding, or while the onboarding is
 * PENDING or PROCESSING: after a decision the verified data is frozen. The compliance module
 * uses the same rule. `onboardingStatus` is the customer's onboarding_status column.
 */
export const kycEditableStatuses: readonly string[] = ['PENDING', 'PROCESSING'];

export function isKycEditable(onboardingStatus: string | null): boolean {
  return onboardingStatus === null || kycEditableStatuses.includes(onboardingStatus);
}

export function assertKycEditable(onboardingStatus: string | null, field = 'kyc'): void {
  if (!isKycEditable(onboardingStatus)) {
    throw new AppError(
      'INVALID_STATE',
      `Identity data cannot be changed while the onboarding status is ${onboardingStatus ?? 'unknown'}; it can be changed only before onboarding or while it is PENDING or PROCESSING.`,
      { details: [{ field, message: `cannot be changed while the onboarding status is ${onboardingStatus ?? 'unknown'}` }] },
    );
  }
}

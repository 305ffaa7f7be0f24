import { Type } from 'typebox';
import type { ErrorCode } from '../../platform/http/error-codes.js';
import { AppError, type ErrorDetail } from '../../platform/http/errors.js';
import { describeCharacters, plainTextProblem } from '../../platform/text.js';
import { checkBic, checkIban, checkRoutingNumber, electronicIban, looksLikeIban } from '../bank-directory/index.js';

/**
 * The input rules of bank withdrawals and counterparties that need no database: which bank
 * identifier each transfer network takes, the remittance memo's characters and lengths, the
 * intermediary bank, the person type, the account number, and the removed fields. Each rule
 * returns a list of violations naming the offending field (empty when the input is fine), so a
 * caller can report every problem of a request at once; `violationsError` turns them into the
 * 400 the API answers. Whether a well-formed routing number or BIC exists is a directory lookup,
 * done by the caller with the bank directory's validate functions.
 */
export interface RuleViolation extends ErrorDetail {
  code: ErrorCode;
}

export const transferNetworks = ['ACH_DOMESTIC', 'ACH_CROSSBORDER', 'FEDWIRE_DOMESTIC', 'FEDWIRE_CROSSBORDER', 'SWIFT'] as const;
export type TransferNetwork = (typeof transferNetworks)[number];

export const TransferNetworkSchema = Type.Union(
  transferNetworks.map((network) => Type.Literal(network)),
  { description: 'ACH_DOMESTIC, ACH_CROSSBORDER, FEDWIRE_DOMESTIC, FEDWIRE_CROSSBORDER or SWIFT' },
);

export function isTransferNetwork(value: unknown): value is TransferNetwork {
  return typeof value === 'string' && (transferNetworks as readonly string[]).includes(value);
}

/** The rail a transfer network travels on, which sets its memo length. */
export type Rail = 'ACH' | 'FEDWIRE' | 'SWIFT';

/**
 * ACH_CROSSBORDER is an international ACH entry (IAT) and travels on ACH; FEDWIRE_CROSSBORDER is
 * a wire sent over Fedwire to a US correspondent for a bank abroad, and travels on Fedwire. The
 * memo limit follows the rail.
 */
export const railOf: Record<TransferNetwork, Rail> = {
  ACH_DOMESTIC: 'ACH',
  ACH_CROSSBORDER: 'ACH',
  FEDWIRE_DOMESTIC: 'FEDWIRE',
  FEDWIRE_CROSSBORDER: 'FEDWIRE',
  SWIFT: 'SWIFT',
};

type Presence = 'required' | 'not allowed';

/** The specification's table: which bank identifier each network takes. */
export const bankIdentifierRules: Record<TransferNetwork, { routingNumber: Presence; bicSwiftCode: Presence }> = {
  ACH_DOMESTIC: { routingNumber: 'required', bicSwiftCode: 'not allowed' },
  ACH_CROSSBORDER: { routingNumber: 'required', bicSwiftCode: 'not allowed' },
  FEDWIRE_DOMESTIC: { routingNumber: 'required', bicSwiftCode: 'not allowed' },
  FEDWIRE_CROSSBORDER: { routingNumber: 'not allowed', bicSwiftCode: 'required' },
  SWIFT: { routingNumber: 'not allowed', bicSwiftCode: 'required' },
};

/** A field counts as given when it is present and not null; an empty string is given (and wrong). */
function isGiven(value: unknown): boolean {
  return value !== undefined && value !== null;
}

export interface BankIdentifiers {
  routingNumber?: string | null | undefined;
  bicSwiftCode?: string | null | undefined;
}

/**
 * routingNumber and bicSwiftCode per the transfer network: a required one must be given and
 * well-formed (ABA checksum; ISO 9362), one that is not allowed must be absent. The message of a
 * contrary identifier names the one the network takes instead.
 */
export function checkBankIdentifiers(network: TransferNetwork, identifiers: BankIdentifiers): RuleViolation[] {
  const rules = bankIdentifierRules[network];
  const violations: RuleViolation[] = [];
  const { routingNumber, bicSwiftCode } = identifiers;
  if (rules.routingNumber === 'required') {
    if (!isGiven(routingNumber)) {
      violations.push({ code: 'VALIDATION_ERROR', field: 'routingNumber', message: `is required for ${network}` });
    } else {
      const check = checkRoutingNumber(routingNumber ?? '');
      if (!check.ok) violations.push({ code: 'INVALID_ROUTING_NUMBER', field: 'routingNumber', message: check.reason });
    }
  } else if (isGiven(routingNumber)) {
    violations.push({ code: 'VALIDATION_ERROR', field: 'routingNumber', message: `is not allowed for ${network}; identify the bank by bicSwiftCode` });
  }
  if (rules.bicSwiftCode === 'required') {
    if (!isGiven(bicSwiftCode)) {
      violations.push({ code: 'VALIDATION_ERROR', field: 'bicSwiftCode', message: `is required for ${network}` });
    } else {
      const check = checkBic(bicSwiftCode ?? '');
      if (!check.ok) violations.push({ code: 'INVALID_SWIFT_CODE', field: 'bicSwiftCode', message: check.reason });
    }
  } else if (isGiven(bicSwiftCode)) {
    violations.push({ code: 'VALIDATION_ERROR', field: 'bicSwiftCode', message: `is not allowed for ${network}; identify the bank by routingNumber` });
  }
  return violations;
}

/** Per-rail memo lengths from the specification's Limits, and the ceiling over all networks. */
export const remittanceMemoLengthMax: Record<Rail, number> = { ACH: 20, FEDWIRE: 35, SWIFT: 120 };
export const remittanceMemoCeiling = 140;
export const remittanceMemoAllowedCharacters = "letters A-Z and a-z, digits 0-9, spaces and / - . , ( ) ' + : ? # &";
/** ASCII letters only: the ACH, Fedwire and SWIFT formats carry no accented letters. */
const remittanceMemoCharacter = /^[A-Za-z0-9 /\-.,()'+:?#&]$/;

export const RemittanceMemoSchema = Type.String({
  minLength: 1,
  maxLength: remittanceMemoCeiling,
  description:
    `Shown to the beneficiary. Allowed: ${remittanceMemoAllowedCharacters}. At most 20 characters on ACH networks, 35 on Fedwire ` +
    'networks, 120 on SWIFT. Leave it out for no memo: the memo element is then left out of the payment.',
});

/** The most characters a memo may have on a network (the ceiling when the network is not known). */
export function remittanceMemoLimit(network: TransferNetwork | undefined): number {
  return network === undefined ? remittanceMemoCeiling : remittanceMemoLengthMax[railOf[network]];
}

/**
 * remittanceMemo: absent (undefined or null) is fine and means no memo in the payment. When
 * given: only the allowed characters, not blank, at most the network's length and never more
 * than the 140-character ceiling. Lengths count characters (code points), not bytes.
 */
export function checkRemittanceMemo(memo: string | null | undefined, network: TransferNetwork | undefined): RuleViolation[] {
  if (!isGiven(memo)) return [];
  const characters = [...(memo ?? '')];
  const violations: RuleViolation[] = [];
  const offending = [...new Set(characters.filter((character) => !remittanceMemoCharacter.test(character)))];
  if (offending.length > 0) {
    violations.push({
      code: 'VALIDATION_ERROR',
      field: 'remittanceMemo',
      message: `contains characters that are not allowed (${describeCharacters(offending)}); allowed are ${remittanceMemoAllowedCharacters}`,
    });
  }
  if (characters.every((character) => character === ' ')) {
    violations.push({ code: 'VALIDATION_ERROR', field: 'remittanceMemo', message: 'must not be empty or only spaces; leave the field out for no memo' });
  }
  if (characters.length > remittanceMemoCeiling) {
    violations.push({
      code: 'VALIDATION_ERROR',
      field: 'remittanceMemo',
      message: `must be at most ${remittanceMemoCeiling} characters on any network; got ${characters.length}`,
    });
  } else if (network !== undefined && characters.length > remittanceMemoLimit(network)) {
    violations.push({
      code: 'VALIDATION_ERROR',
      field: 'remittanceMemo',
      message: `must be at most ${remittanceMemoLimit(network)} characters for ${network} (${railOf[network]}); got ${characters.length}`,
    });
  }
  return violations;
}

/**
 * A name or address field (withdrawal name, street1, street2, cityCounty, stateRegion, zip;
 * counterparty name, accountHolderName and address): absent (undefined or null) is fine; when
 * given, none of the characters platform/text.ts refuses, and not empty or only white space.
 */
export function checkNameOrAddress(value: string | null | undefined, field: string): RuleViolation[] {
  if (!isGiven(value)) return [];
  const problem = plainTextProblem(value ?? '', { notBlank: true });
  return problem === undefined ? [] : [{ code: 'VALIDATION_ERROR', field, message: problem }];
}

/** The beneficiary's name and address fields, as a withdrawal and a counterparty both have them. */
export const nameAndAddressFields = ['name', 'street1', 'street2', 'cityCounty', 'stateRegion', 'zip'] as const;

/** checkNameOrAddress for each of `fields` of `source`, in that order. */
export function checkNamesAndAddresses<F extends string>(source: Readonly<Partial<Record<F, string | null | undefined>>>, fields: readonly F[]): RuleViolation[] {
  return fields.flatMap((field) => checkNameOrAddress(source[field], field));
}

export const intermediaryBankBicLengthMax = 11;
/** The networks that reach a bank abroad, the only ones where an intermediary bank means something. */
export const crossBorderNetworks: readonly TransferNetwork[] = ['ACH_CROSSBORDER', 'FEDWIRE_CROSSBORDER', 'SWIFT'];

/**
 * intermediaryBankBic: optional; at most 11 characters and a well-formed BIC. It names the bank
 * a cross-border payment passes through, so a domestic network refuses it rather than quietly
 * ignoring it.
 */
export function checkIntermediaryBankBic(value: string | null | undefined, network: TransferNetwork | undefined): RuleViolation[] {
  if (!isGiven(value)) return [];
  const text = value ?? '';
  if (network !== undefined && !crossBorderNetworks.includes(network)) {
    return [
      {
        code: 'VALIDATION_ERROR',
        field: 'intermediaryBankBic',
        message: `is not allowed for ${network}; an intermediary bank is used by ${crossBorderNetworks.join(', ')} only`,
      },
    ];
  }
  if ([...text].length > intermediaryBankBicLengthMax) {
    return [
      {
        code: 'VALIDATION_ERROR',
        field: 'intermediaryBankBic',
        message: `must be at most ${intermediaryBankBicLengthMax} characters; got ${[...text].length}`,
      },
    ];
  }
  const check = checkBic(text);
  return check.ok ? [] : [{ code: 'INVALID_SWIFT_CODE', field: 'intermediaryBankBic', message: check.reason }];
}

export const personTypeCodes = ['P', 'L'] as const;
export type PersonTypeCode = (typeof personTypeCodes)[number];
export const PersonTypeCodeSchema = Type.Union([Type.Literal('P'), Type.Literal('L')], {
  description: 'P = private person (individual), L = legal person (business)',
});

/** personTypeCode: exactly P (individual) or L (business), upper case. */
export function checkPersonTypeCode(value: unknown): RuleViolation[] {
  if (!isGiven(value)) return [{ code: 'VALIDATION_ERROR', field: 'personTypeCode', message: 'is required: P (individual) or L (business)' }];
  if (value === 'P' || value === 'L') return [];
  return [
    {
      code: 'VALIDATION_ERROR',
      field: 'personTypeCode',
      message: `must be P (private person, an individual) or L (legal person, a business); got ${JSON.stringify(value)}`,
    },
  ];
}

export const accountNumberLengthMax = 34;

/**
 * An account number (withdrawal accountNumber, counterparty accountNumberValue): 1 to 34 letters
 * and digits, without spaces or dashes. One that starts like an IBAN (a country of the IBAN
 * registry and two digits) is validated as an IBAN: structure, length, mod-97.
 */
export function checkAccountNumber(value: string | null | undefined, field = 'accountNumber'): RuleViolation[] {
  if (!isGiven(value)) return [{ code: 'VALIDATION_ERROR', field, message: 'is required' }];
  const text = value ?? '';
  if (text === '') return [{ code: 'VALIDATION_ERROR', field, message: 'must not be empty' }];
  if (!/^[A-Za-z0-9]+$/.test(text)) {
    return [{ code: 'VALIDATION_ERROR', field, message: 'must hold only letters and digits (no spaces, dashes or other symbols)' }];
  }
  if (text.length > accountNumberLengthMax) {
    return [{ code: 'VALIDATION_ERROR', field, message: `must be at most ${accountNumberLengthMax} characters; got ${text.length}` }];
  }
  if (looksLikeIban(text)) {
    const check = checkIban(text);
    if (!check.ok) return [{ code: 'INVALID_IBAN', field, message: `looks like an IBAN but is not a valid one: ${check.reason}` }];
  }
  return [];
}

/** The longest account number an ACH entry carries (NACHA's DFI account number field: 17 characters). */
export const achAccountNumberLengthMax = 17;

/**
 * An account number on ACH_DOMESTIC: never an IBAN (an account abroad goes by SWIFT or
 * ACH_CROSSBORDER), and at most 17 characters (NACHA's field). Until 2026-12-03 any account number
 * was accepted on every network, so a German IBAN went out by domestic ACH; then, for a few hours,
 * only the length was checked, so the IBANs of 15 and 16 characters (Norway's, Belgium's) still
 * went out by it (both found by audits). Only for an account number checkAccountNumber accepted.
 */
function checkAccountNumberOnNetwork(network: TransferNetwork, value: string, field: string): RuleViolation[] {
  // A domestic wire goes to a US bank by its routing number, and US banks have no IBANs (until
  // 2026-12-06 an IBAN was taken on FEDWIRE_DOMESTIC; found by an audit).
  if (network === 'FEDWIRE_DOMESTIC' && looksLikeIban(value)) {
    return [{ code: 'VALIDATION_ERROR', field, message: 'is not a US account number but an IBAN: an account abroad goes by SWIFT or FEDWIRE_CROSSBORDER' }];
  }
  if (network !== 'ACH_DOMESTIC') return [];
  if (looksLikeIban(value)) return [{ code: 'VALIDATION_ERROR', field, message: 'is not an ACH account number but an IBAN: an account abroad goes by SWIFT or ACH_CROSSBORDER' }];
  if (value.length <= achAccountNumberLengthMax) return [];
  return [{ code: 'VALIDATION_ERROR', field, message: `must be at most ${achAccountNumberLengthMax} characters on ACH_DOMESTIC (the ACH entry's account number field); got ${value.length}` }];
}

/** checkAccountNumber, then the network's own limit. */
function checkAccountNumberFor(network: TransferNetwork, value: string | null | undefined, field: string): RuleViolation[] {
  const violations = checkAccountNumber(value, field);
  return violations.length > 0 || typeof value !== 'string' ? violations : checkAccountNumberOnNetwork(network, value, field);
}

/**
 * An account number as it is stored and sent: an IBAN in its electronic form (upper case, as the
 * BIC next to it is), any other account number as given. For a value checkAccountNumber accepted.
 */
export function normalizeAccountNumber(value: string): string {
  return looksLikeIban(value) ? electronicIban(value) : value;
}

/** Withdrawal fields the API no longer accepts, each with what to do instead (route config `removedFields`). */
export const removedWithdrawalFields = {
  destination:
    'the withdrawal body is flat since 2025-12-08: send name, accountNumber, routingNumber or bicSwiftCode, street1, cityCounty, ' +
    'stateRegion, zip and countryCode at the top level.',
  details: 'the withdrawal body is flat since 2025-12-08: send the beneficiary fields at the top level and a note in remittanceMemo.',
  preferredPaymentScheme:
    'renamed transferNetwork (ACH_DOMESTIC, ACH_CROSSBORDER, FEDWIRE_DOMESTIC, FEDWIRE_CROSSBORDER or SWIFT).',
  bankName: 'no longer accepted; omit it: the bank name is derived from the routingNumber or bicSwiftCode.',
  bankAddress: 'no longer accepted; omit it: the bank address is derived from the routingNumber or bicSwiftCode.',
} as const;

/** Counterparty fields the API no longer accepts, each with what to do instead. */
export const removedCounterpartyFields = {
  accountNumberType: 'send the account number or IBAN in accountNumberValue; its kind is recognised from its form.',
  financialInstitutionId: 'renamed routingNumber.',
} as const;

/** The removed fields present in a body, each named with its replacement (code FIELD_REMOVED). */
export function checkRemovedFields(body: unknown, removed: Readonly<Record<string, string>>): RuleViolation[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [];
  return Object.keys(removed)
    .filter((field) => Object.hasOwn(body, field))
    .map((field) => ({ code: 'FIELD_REMOVED' as const, field, message: `was removed: ${removed[field] ?? ''}` }));
}

export interface WithdrawalRuleInput extends BankIdentifiers {
  transferNetwork: TransferNetwork;
  personTypeCode: unknown;
  accountNumber: string;
  remittanceMemo?: string | null | undefined;
  intermediaryBankBic?: string | null | undefined;
}

/**
 * Every input rule of a withdrawal, in this order: personTypeCode, routingNumber and
 * bicSwiftCode per the network, accountNumber (and IBAN), intermediaryBankBic, remittanceMemo.
 * (Removed fields are refused earlier, before the body schema, by the route's removedFields.)
 */
export function checkWithdrawalInput(input: WithdrawalRuleInput): RuleViolation[] {
  return [
    ...checkPersonTypeCode(input.personTypeCode),
    ...checkBankIdentifiers(input.transferNetwork, input),
    ...checkAccountNumberFor(input.transferNetwork, input.accountNumber, 'accountNumber'),
    ...checkIntermediaryBankBic(input.intermediaryBankBic, input.transferNetwork),
    ...checkRemittanceMemo(input.remittanceMemo, input.transferNetwork),
  ];
}

export interface CounterpartyRuleInput extends BankIdentifiers {
  transferNetwork: TransferNetwork;
  accountNumberValue?: string | null | undefined;
}

/** The counterparty's bank identifiers per its network (the same table) and its account number or IBAN. */
export function checkCounterpartyInput(input: CounterpartyRuleInput): RuleViolation[] {
  return [
    ...checkBankIdentifiers(input.transferNetwork, input),
    ...(isGiven(input.accountNumberValue) ? checkAccountNumberFor(input.transferNetwork, input.accountNumberValue, 'accountNumberValue') : []),
  ];
}

/**
 * The 400 for a list of violations: the code of the first (rules run in a documented order) and
 * every violation in `details`.
 */
export function violationsError(violations: readonly RuleViolation[]): AppError {
  const [first] = violations;
  if (!first) throw new Error('violationsError needs at least one violation');
  const details = violations.map(({ field, message }) => ({ field, message }));
  // "field: message": some messages read as sentences of their own ("routingNumber: the ABA check digit does not match").
  return new AppError(first.code, details.map((detail) => `${detail.field}: ${detail.message}`).join('; '), { details });
}

/** Throws the 400 when any rule fails. */
export function assertNoViolations(violations: readonly RuleViolation[]): void {
  if (violations.length > 0) throw violationsError(violations);
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/http/errors.js';
import {
  assertNoViolations,
  checkAccountNumber,
  checkBankIdentifiers,
  checkCounterpartyInput,
  checkIntermediaryBankBic,
  checkPersonTypeCode,
  checkRemittanceMemo,
  checkRemovedFields,
  checkWithdrawalInput,
  isTransferNetwork,
  remittanceMemoLimit,
  removedCounterpartyFields,
  removedWithdrawalFields,
  transferNetworks,
  violationsError,
  type TransferNetwork,
} from './withdrawal-rules.js';

const validRoutingNumber = '021000021';
const validBic = 'DEUTDEFF';

// The specification's table, written out again here so the test does not read the code's own copy.
const specificationTable: [TransferNetwork, 'required' | 'not allowed', 'required' | 'not allowed'][] = [
  ['ACH_DOMESTIC', 'required', 'not allowed'],
  ['ACH_CROSSBORDER', 'required', 'not allowed'],
  ['FEDWIRE_DOMESTIC', 'required', 'not allowed'],
  ['FEDWIRE_CROSSBORDER', 'not allowed', 'required'],
  ['SWIFT', 'not allowed', 'required'],
];

describe('transferNetwork', () => {
  it('has exactly the five values of the specification', () => {
    expect([...transferNetworks]).toEqual(specificationTable.map(([network]) => network));
    expect(isTransferNetwork('SWIFT')).toBe(true);
    for (const old of ['ACH', 'US_WIRE', 'swift', '', null, 3]) expect(isTransferNetwork(old)).toBe(false);
  });
});

describe('routingNumber and bicSwiftCode per transferNetwork', () => {
  for (const [network, routingRule, bicRule] of specificationTable) {
    describe(network, () => {
      for (const routingGiven of [true, false]) {
        for (const bicGiven of [true, false]) {
          const expectedFields = [
            ...(routingRule === 'required' && !routingGiven ? [['routingNumber', `is required for ${network}`]] : []),
            ...(routingRule === 'not allowed' && routingGiven ? [['routingNumber', expect.stringMatching(`^is not allowed for ${network}; identify the bank by bicSwiftCode`)]] : []),
            ...(bicRule === 'required' && !bicGiven ? [['bicSwiftCode', `is required for ${network}`]] : []),
            ...(bicRule === 'not allowed' && bicGiven ? [['bicSwiftCode', expect.stringMatching(`^is not allowed for ${network}; identify the bank by routingNumber`)]] : []),
          ];
          const name = `routingNumber ${routingGiven ? 'given' : 'absent'}, bicSwiftCode ${bicGiven ? 'given' : 'absent'}: ${
            expectedFields.length === 0 ? 'accepted' : `refused (${expectedFields.map(([field]) => field).join(', ')})`
          }`;
          it(name, () => {
            const violations = checkBankIdentifiers(network, {
              ...(routingGiven ? { routingNumber: validRoutingNumber } : {}),
              ...(bicGiven ? { bicSwiftCode: validBic } : {}),
            });
            expect(violations).toEqual(expectedFields.map(([field, message]) => ({ code: 'VALIDATION_ERROR', field, message })));
          });
        }
      }
    });
  }

  it('null counts as absent, an empty string as given', () => {
    expect(checkBankIdentifiers('SWIFT', { routingNumber: null, bicSwiftCode: validBic })).toEqual([]);
    expect(checkBankIdentifiers('SWIFT', { routingNumber: '', bicSwiftCode: validBic })[0]?.field).toBe('routingNumber');
    expect(checkBankIdentifiers('ACH_DOMESTIC', { routingNumber: '' })).toEqual([
      { code: 'INVALID_ROUTING_NUMBER', field: 'routingNumber', message: 'a routing number is 9 digits; got an empty value' },
    ]);
  });

  it('a required routing number must pass the ABA checksum', () => {
    for (const network of ['ACH_DOMESTIC', 'ACH_CROSSBORDER', 'FEDWIRE_DOMESTIC'] as const) {
      expect(checkBankIdentifiers(network, { routingNumber: '021000022' })).toEqual([
        { code: 'INVALID_ROUTING_NUMBER', field: 'routingNumber', message: 'the ABA check digit does not match (checksum failed)' },
      ]);
    }
  });

  it('a required SWIFT code must have the ISO 9362 form', () => {
    for (const network of ['FEDWIRE_CROSSBORDER', 'SWIFT'] as const) {
      expect(checkBankIdentifiers(network, { bicSwiftCode: 'DEUTZZFF' })).toEqual([
        { code: 'INVALID_SWIFT_CODE', field: 'bicSwiftCode', message: '"ZZ" (characters 5 and 6) is not an ISO 3166-1 country code' },
      ]);
    }
  });
});

const allowedSymbols = [' ', '/', '-', '.', ',', '(', ')', "'", '+', ':', '?', '#', '&'];
const forbiddenCharacters = ['@', '!', '"', '$', '%', '*', ';', '<', '>', '=', '_', '[', ']', '{', '}', '|', '\\', '~', '`', '^', 'é', 'ß', '€', '\n', '\t', '\u0000', '😀'];

describe('remittanceMemo', () => {
  const memoOf = (length: number) => 'A'.repeat(length);

  it('absent (undefined or null) is fine: the payment then carries no memo', () => {
    expect(checkRemittanceMemo(undefined, 'ACH_DOMESTIC')).toEqual([]);
    expect(checkRemittanceMemo(null, 'SWIFT')).toEqual([]);
  });

  it.each([
    ['ACH_DOMESTIC', 20],
    ['ACH_CROSSBORDER', 20],
    ['FEDWIRE_DOMESTIC', 35],
    ['FEDWIRE_CROSSBORDER', 35],
    ['SWIFT', 120],
  ] as const)('%s: %i characters pass, one more is refused naming the limit', (network, limit) => {
    expect(remittanceMemoLimit(network)).toBe(limit);
    expect(checkRemittanceMemo(memoOf(limit), network)).toEqual([]);
    expect(checkRemittanceMemo(memoOf(limit + 1), network)).toEqual([
      { code: 'VALIDATION_ERROR', field: 'remittanceMemo', message: expect.stringMatching(`^must be at most ${limit} characters for ${network} \\(.+\\); got ${limit + 1}$`) },
    ]);
  });

  it('the absolute ceiling of 140 characters holds on every network and when the network is unknown', () => {
    expect(checkRemittanceMemo(memoOf(140), undefined)).toEqual([]);
    const refused = [{ code: 'VALIDATION_ERROR', field: 'remittanceMemo', message: 'must be at most 140 characters on any network; got 141' }];
    expect(checkRemittanceMemo(memoOf(141), undefined)).toEqual(refused);
    for (const network of transferNetworks) expect(checkRemittanceMemo(memoOf(141), network)).toEqual(refused);
  });

  it('accepts letters, digits, spaces and each allowed symbol', () => {
    expect(checkRemittanceMemo('Invoice 2024/07-A', 'ACH_DOMESTIC')).toEqual([]);
    for (const symbol of allowedSymbols) expect(checkRemittanceMemo(`A${symbol}B`, 'ACH_DOMESTIC'), JSON.stringify(symbol)).toEqual([]);
    expect(checkRemittanceMemo("Ref: (a+b), #12 & co.?'", 'FEDWIRE_DOMESTIC')).toEqual([]);
  });

  it.each(forbiddenCharacters)('refuses %j and names it', (character) => {
    const violations = checkRemittanceMemo(`Pay ${character} now`, 'SWIFT');
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'remittanceMemo' });
    expect(violations[0]?.message).toMatch(/^contains characters that are not allowed \(/);
    const shown = character.charCodeAt(0) < 0x20 ? `U+${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}` : JSON.stringify(character);
    expect(violations[0]?.message).toContain(shown);
  });

  it('counts characters, not bytes or UTF-16 units', () => {
    const [violation] = checkRemittanceMemo(`${'A'.repeat(19)}😀`, 'ACH_DOMESTIC');
    expect(violation?.message).toMatch(/not allowed/);
    expect(checkRemittanceMemo(`${'A'.repeat(19)}😀`, 'ACH_DOMESTIC')).toHaveLength(1);
  });

  it('refuses an empty or blank memo (leave the field out instead)', () => {
    for (const memo of ['', '   ']) {
      expect(checkRemittanceMemo(memo, 'SWIFT')).toEqual([
        { code: 'VALIDATION_ERROR', field: 'remittanceMemo', message: 'must not be empty or only spaces; leave the field out for no memo' },
      ]);
    }
  });

  it('any memo of allowed characters within the limit passes; any memo with another character is refused', () => {
    const allowedAlphabet = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', ...allowedSymbols];
    fc.assert(
      fc.property(
        fc.constantFrom(...transferNetworks),
        fc.array(fc.constantFrom(...allowedAlphabet), { minLength: 1, maxLength: 120 }),
        (network, characters) => {
          const memo = `X${characters.join('')}`.slice(0, remittanceMemoLimit(network));
          expect(checkRemittanceMemo(memo, network)).toEqual([]);
        },
      ),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 5 }), (inserted, position) => {
        fc.pre([...inserted].some((character) => !allowedAlphabet.includes(character)));
        const memo = `ABCDE`.slice(0, position) + inserted + `ABCDE`.slice(position);
        expect(checkRemittanceMemo(memo, 'SWIFT').map((violation) => violation.message)).toContainEqual(expect.stringMatching(/not allowed/));
      }),
    );
  });
});

describe('intermediaryBankBic', () => {
  it('absent is fine', () => {
    expect(checkIntermediaryBankBic(undefined, 'SWIFT')).toEqual([]);
    expect(checkIntermediaryBankBic(null, 'SWIFT')).toEqual([]);
  });

  it('accepts an 8- or 11-character BIC on the cross-border networks', () => {
    for (const network of ['ACH_CROSSBORDER', 'FEDWIRE_CROSSBORDER', 'SWIFT'] as const) {
      expect(checkIntermediaryBankBic('CHASUS33', network)).toEqual([]);
      expect(checkIntermediaryBankBic('CHASUS33XXX', network)).toEqual([]);
    }
  });

  it('refuses more than 11 characters, naming the limit', () => {
    expect(checkIntermediaryBankBic('CHASUS33XXXX', 'SWIFT')).toEqual([
      { code: 'VALIDATION_ERROR', field: 'intermediaryBankBic', message: 'must be at most 11 characters; got 12' },
    ]);
  });

  it('refuses a code that is not a valid BIC', () => {
    expect(checkIntermediaryBankBic('CHASUS3', 'SWIFT')).toEqual([
      { code: 'INVALID_SWIFT_CODE', field: 'intermediaryBankBic', message: 'a SWIFT/BIC code is 8 or 11 characters long; got 7' },
    ]);
    expect(checkIntermediaryBankBic('CHASQQ33', 'SWIFT')[0]?.code).toBe('INVALID_SWIFT_CODE');
  });

  it('is refused on the domestic networks, which have no intermediary bank', () => {
    for (const network of ['ACH_DOMESTIC', 'FEDWIRE_DOMESTIC'] as const) {
      expect(checkIntermediaryBankBic('CHASUS33', network)).toEqual([
        { code: 'VALIDATION_ERROR', field: 'intermediaryBankBic', message: expect.stringMatching(`^is not allowed for ${network}`) },
      ]);
    }
  });
});

describe('personTypeCode', () => {
  it('accepts P and L', () => {
    expect(checkPersonTypeCode('P')).toEqual([]);
    expect(checkPersonTypeCode('L')).toEqual([]);
  });

  it.each([['p'], ['l'], ['X'], [''], ['PRIVATE'], [1], [true]])('refuses %j, saying what P and L mean', (value) => {
    expect(checkPersonTypeCode(value)).toEqual([
      { code: 'VALIDATION_ERROR', field: 'personTypeCode', message: expect.stringMatching(/^must be P \(private person, an individual\) or L \(legal person, a business\)/) },
    ]);
  });

  it('is required', () => {
    expect(checkPersonTypeCode(undefined)[0]?.message).toMatch(/^is required/);
    expect(checkPersonTypeCode(null)[0]?.message).toMatch(/^is required/);
  });
});

describe('account number', () => {
  it('accepts a basic account number and a valid IBAN', () => {
    expect(checkAccountNumber('000123456789')).toEqual([]);
    expect(checkAccountNumber('DE89370400440532013000')).toEqual([]);
    expect(checkAccountNumber('A'.repeat(34))).toEqual([]);
  });

  it('validates an account number that starts like an IBAN as an IBAN', () => {
    expect(checkAccountNumber('DE89370400440532013001')).toEqual([
      { code: 'INVALID_IBAN', field: 'accountNumber', message: 'looks like an IBAN but is not a valid one: the check digits do not match (the mod-97 checksum failed)' },
    ]);
  });

  it('refuses spaces, dashes, other symbols, more than 34 characters and an empty value', () => {
    expect(checkAccountNumber('1234 5678')[0]?.message).toMatch(/only letters and digits/);
    expect(checkAccountNumber('1234-5678')[0]?.message).toMatch(/only letters and digits/);
    expect(checkAccountNumber('1'.repeat(35))[0]?.message).toBe('must be at most 34 characters; got 35');
    expect(checkAccountNumber('')[0]?.message).toBe('must not be empty');
    expect(checkAccountNumber(undefined)[0]?.message).toBe('is required');
  });

  it('names the field it was given', () => {
    expect(checkAccountNumber('', 'accountNumberValue')[0]?.field).toBe('accountNumberValue');
  });
});

describe('removed fields', () => {
  it.each([
    ['destination', /flat/],
    ['details', /remittanceMemo/],
    ['preferredPaymentScheme', /renamed transferNetwork/],
    ['bankName', /derived from the routingNumber or bicSwiftCode/],
    ['bankAddress', /derived from the routingNumber or bicSwiftCode/],
  ])('withdrawal %s is refused, naming its replacement', (field, replacement) => {
    const violations = checkRemovedFields({ walletId: 'w', [field]: 'x' }, removedWithdrawalFields);
    expect(violations).toEqual([{ code: 'FIELD_REMOVED', field, message: expect.stringMatching(/^was removed: /) }]);
    expect(violations[0]?.message).toMatch(replacement);
  });

  it.each([
    ['accountNumberType', /accountNumberValue/],
    ['financialInstitutionId', /renamed routingNumber/],
  ])('counterparty %s is refused, naming its replacement', (field, replacement) => {
    const violations = checkRemovedFields({ [field]: null }, removedCounterpartyFields);
    expect(violations).toEqual([{ code: 'FIELD_REMOVED', field, message: expect.stringMatching(replacement) }]);
  });

  it('reports every removed field of a body, and nothing for a clean body or a non-object', () => {
    expect(checkRemovedFields({ bankName: 'x', bankAddress: 'y', preferredPaymentScheme: 'ACH' }, removedWithdrawalFields).map((violation) => violation.field)).toEqual([
      'preferredPaymentScheme',
      'bankName',
      'bankAddress',
    ]);
    expect(checkRemovedFields({ transferNetwork: 'SWIFT' }, removedWithdrawalFields)).toEqual([]);
    expect(checkRemovedFields(null, removedWithdrawalFields)).toEqual([]);
    expect(checkRemovedFields(['bankName'], removedWithdrawalFields)).toEqual([]);
  });

  it('counterparty removals are not withdrawal removals, and the other way round', () => {
    expect(checkRemovedFields({ financialInstitutionId: '1' }, removedWithdrawalFields)).toEqual([]);
    expect(checkRemovedFields({ bankName: 'x' }, removedCounterpartyFields)).toEqual([]);
  });
});

describe('whole withdrawal input', () => {
  const good = {
    transferNetwork: 'SWIFT' as const,
    personTypeCode: 'L',
    bicSwiftCode: 'DEUTDEFF',
    accountNumber: 'DE89370400440532013000',
    remittanceMemo: 'Invoice 42',
    intermediaryBankBic: 'CHASUS33',
  };

  it('a correct input has no violations', () => {
    expect(checkWithdrawalInput(good)).toEqual([]);
    expect(() => assertNoViolations(checkWithdrawalInput(good))).not.toThrow();
  });

  it('reports every violation in the documented order; the error carries the first code and all details', () => {
    const violations = checkWithdrawalInput({
      ...good,
      personTypeCode: 'X',
      routingNumber: validRoutingNumber,
      bicSwiftCode: undefined,
      remittanceMemo: 'a@b',
      intermediaryBankBic: 'CHASUS3',
    });
    expect(violations.map((violation) => violation.field)).toEqual(['personTypeCode', 'routingNumber', 'bicSwiftCode', 'intermediaryBankBic', 'remittanceMemo']);
    const error = violationsError(violations);
    expect(error).toBeInstanceOf(AppError);
    expect(error.statusCode).toBe(400);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toHaveLength(5);
    expect(error.message).toMatch(/^personTypeCode: must be P .*; routingNumber: is not allowed for SWIFT/);
  });

  it('the code is the first violation\'s', () => {
    const error = violationsError(checkWithdrawalInput({ ...good, transferNetwork: 'ACH_DOMESTIC', routingNumber: '021000022', bicSwiftCode: undefined, intermediaryBankBic: undefined, accountNumber: '000123456789' }));
    expect(error.code).toBe('INVALID_ROUTING_NUMBER');
    expect(error.details).toEqual([{ field: 'routingNumber', message: 'the ABA check digit does not match (checksum failed)' }]);
    expect(error.message).toBe('routingNumber: the ABA check digit does not match (checksum failed)');
  });

  it('violationsError refuses an empty list (a bug, not a client error)', () => {
    expect(() => violationsError([])).toThrow(/at least one/);
  });
});

describe('account number per network', () => {
  it('ACH_DOMESTIC takes at most 17 characters (the ACH entry\'s field), so no IBAN; the other networks take 34', () => {
    const ach = { personTypeCode: 'P', routingNumber: validRoutingNumber, transferNetwork: 'ACH_DOMESTIC' as const };
    expect(checkWithdrawalInput({ ...ach, accountNumber: '1'.repeat(17) })).toEqual([]);
    expect(checkWithdrawalInput({ ...ach, accountNumber: '1'.repeat(18) })).toEqual([
      { code: 'VALIDATION_ERROR', field: 'accountNumber', message: 'must be at most 17 characters on ACH_DOMESTIC (the ACH entry\'s account number field); got 18' },
    ]);
    expect(checkWithdrawalInput({ ...ach, accountNumber: 'DE89370400440532013000' })[0]?.message).toMatch(/an IBAN: an account abroad goes by SWIFT or ACH_CROSSBORDER/);
    // IBANs short enough for the field are refused all the same (Norway's has 15 characters, Belgium's 16).
    for (const iban of ['NO9386011117947', 'BE68539007547034', 'be68539007547034']) {
      expect(checkWithdrawalInput({ ...ach, accountNumber: iban }), iban).toEqual([
        { code: 'VALIDATION_ERROR', field: 'accountNumber', message: 'is not an ACH account number but an IBAN: an account abroad goes by SWIFT or ACH_CROSSBORDER' },
      ]);
      expect(checkCounterpartyInput({ transferNetwork: 'ACH_DOMESTIC', routingNumber: validRoutingNumber, accountNumberValue: iban })[0]?.field, iban).toBe('accountNumberValue');
      expect(checkWithdrawalInput({ ...ach, transferNetwork: 'ACH_CROSSBORDER', accountNumber: iban }), iban).toEqual([]);
    }
    expect(checkCounterpartyInput({ transferNetwork: 'ACH_DOMESTIC', routingNumber: validRoutingNumber, accountNumberValue: 'DE89370400440532013000' })[0]?.field).toBe('accountNumberValue');
    expect(checkWithdrawalInput({ ...ach, transferNetwork: 'ACH_CROSSBORDER', accountNumber: 'DE89370400440532013000' })).toEqual([]);
    expect(checkWithdrawalInput({ ...ach, transferNetwork: 'FEDWIRE_DOMESTIC', accountNumber: '1'.repeat(34) })).toEqual([]);
  });

  it('FEDWIRE_DOMESTIC takes no IBAN (a US bank has none); FEDWIRE_CROSSBORDER and SWIFT do', () => {
    const wire = { personTypeCode: 'P', routingNumber: validRoutingNumber, transferNetwork: 'FEDWIRE_DOMESTIC' as const };
    for (const iban of ['DE89370400440532013000', 'de89370400440532013000', 'NO9386011117947']) {
      expect(checkWithdrawalInput({ ...wire, accountNumber: iban }), iban).toEqual([
        { code: 'VALIDATION_ERROR', field: 'accountNumber', message: 'is not a US account number but an IBAN: an account abroad goes by SWIFT or FEDWIRE_CROSSBORDER' },
      ]);
      expect(checkCounterpartyInput({ transferNetwork: 'FEDWIRE_DOMESTIC', routingNumber: validRoutingNumber, accountNumberValue: iban })[0]?.field, iban).toBe('accountNumberValue');
    }
    expect(checkWithdrawalInput({ personTypeCode: 'P', bicSwiftCode: validBic, transferNetwork: 'FEDWIRE_CROSSBORDER', accountNumber: 'DE89370400440532013000' })).toEqual([]);
    expect(checkWithdrawalInput({ personTypeCode: 'P', bicSwiftCode: validBic, transferNetwork: 'SWIFT', accountNumber: 'DE89370400440532013000' })).toEqual([]);
    expect(checkWithdrawalInput({ ...wire, accountNumber: '000123456789' })).toEqual([]);
  });
});

describe('counterparty input', () => {
  it('uses the same network table and checks accountNumberValue when given', () => {
    expect(checkCounterpartyInput({ transferNetwork: 'FEDWIRE_DOMESTIC', routingNumber: validRoutingNumber, accountNumberValue: '12345' })).toEqual([]);
    expect(checkCounterpartyInput({ transferNetwork: 'SWIFT', bicSwiftCode: validBic })).toEqual([]);
    expect(checkCounterpartyInput({ transferNetwork: 'FEDWIRE_CROSSBORDER', routingNumber: validRoutingNumber, accountNumberValue: 'GB29NWBK60161331926818' }).map((violation) => [violation.code, violation.field])).toEqual([
      ['VALIDATION_ERROR', 'routingNumber'],
      ['VALIDATION_ERROR', 'bicSwiftCode'],
      ['INVALID_IBAN', 'accountNumberValue'],
    ]);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { abaChecksumIsValid, checkRoutingNumber } from './routing-number.js';
import { checkBic, countryName, isCountryCode } from './bic.js';
import { checkIban, looksLikeIban } from './iban.js';
import { builtInDirectory } from './built-in.js';

function reasonOf<T>(check: { ok: true; value: T } | { ok: false; reason: string }): string {
  if (check.ok) throw new Error(`accepted: ${JSON.stringify(check.value)}`);
  return check.reason;
}

describe('ABA routing numbers', () => {
  it('accepts real routing numbers', () => {
    for (const routingNumber of ['021000021', '026009593', '121000248', '011000015', '655060042', '154000008']) {
      expect(checkRoutingNumber(routingNumber)).toEqual({ ok: true, value: routingNumber });
    }
  });

  it('refuses a wrong check digit, naming the checksum', () => {
    expect(reasonOf(checkRoutingNumber('021000022'))).toMatch(/check digit/);
    expect(reasonOf(checkRoutingNumber('123456789'))).toMatch(/checksum/);
  });

  it('catches every single-digit change of a valid number (the 3-7-1 weights are coprime to 10)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 1, max: 9 }), (position, delta) => {
        const original = '021000021';
        const digit = (Number(original[position]) + delta) % 10;
        const changed = `${original.slice(0, position)}${digit}${original.slice(position + 1)}`;
        expect(abaChecksumIsValid(changed)).toBe(false);
      }),
    );
  });

  it('the last digit completes any eight digits to exactly one valid number', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{8}$/), (prefix) => {
        const valid = [...'0123456789'].filter((digit) => abaChecksumIsValid(`${prefix}${digit}`));
        expect(valid).toHaveLength(1);
      }),
    );
  });

  it('refuses wrong lengths and non-digits with the reason', () => {
    expect(reasonOf(checkRoutingNumber(''))).toMatch(/empty/);
    expect(reasonOf(checkRoutingNumber('02100002'))).toBe('a routing number is exactly 9 digits; got 8');
    expect(reasonOf(checkRoutingNumber('0210000210'))).toBe('a routing number is exactly 9 digits; got 10');
    expect(reasonOf(checkRoutingNumber('02100002A'))).toMatch(/digits only/);
    expect(reasonOf(checkRoutingNumber('021 000 021'))).toMatch(/digits only/);
    expect(reasonOf(checkRoutingNumber('０２１００００２１'))).toMatch(/digits only/);
  });
});

describe('SWIFT/BIC codes (ISO 9362)', () => {
  it('accepts 8- and 11-character codes and gives the 11-character form', () => {
    const eight = checkBic('DEUTDEFF');
    expect(eight).toEqual({
      ok: true,
      value: { code: 'DEUTDEFF', bic11: 'DEUTDEFFXXX', institutionCode: 'DEUT', countryCode: 'DE', locationCode: 'FF', branchCode: 'XXX' },
    });
    const eleven = checkBic('DEUTDEFF500');
    expect(eleven.ok && eleven.value.bic11).toBe('DEUTDEFF500');
  });

  it('compares letters without case', () => {
    const check = checkBic('chasus33');
    expect(check.ok && check.value.code).toBe('CHASUS33');
  });

  it('accepts digits in the party prefix and Kosovo (XK)', () => {
    expect(checkBic('ABN4NL2A').ok).toBe(true);
    expect(checkBic('TEBKXKPR').ok).toBe(true);
  });

  it('refuses malformed codes with the reason', () => {
    expect(reasonOf(checkBic('DEUTDEF'))).toBe('a SWIFT/BIC code is 8 or 11 characters long; got 7');
    expect(reasonOf(checkBic('DEUTDEFF5000'))).toBe('a SWIFT/BIC code is 8 or 11 characters long; got 12');
    expect(reasonOf(checkBic('DEUTDEFF50'))).toMatch(/8 or 11/);
    expect(reasonOf(checkBic('DEUT-EFF'))).toMatch(/only letters and digits/);
    expect(reasonOf(checkBic('DEUT1EFF'))).toMatch(/country code of two letters/);
    expect(reasonOf(checkBic('DEUTZZFF'))).toMatch(/"ZZ" .* not an ISO 3166-1 country code/);
    expect(reasonOf(checkBic('DEUTDEFFX12'))).toMatch(/branch code starting with X must be XXX/);
  });

  it('checks the code as sent, before upper case: characters that case mapping would turn into ASCII letters are refused', () => {
    expect(reasonOf(checkBic('DEUTDE\ufb00'))).toBe('a SWIFT/BIC code is 8 or 11 characters long; got 7');
    expect(reasonOf(checkBic('C\u0131TIUS33'))).toMatch(/only letters and digits/);
    expect(reasonOf(checkBic('DEUTDEF\u00df'))).toMatch(/only letters and digits/);
    expect(reasonOf(checkBic('DEUTDE\u{1D400}F'))).toMatch(/only letters and digits/);
  });

  it('names countries in English', () => {
    expect(countryName('DE')).toBe('Germany');
    expect(countryName('US')).toBe('United States of America');
    expect(isCountryCode('XK')).toBe(true);
    expect(isCountryCode('ZZ')).toBe(false);
    expect(isCountryCode('de')).toBe(false);
  });
});

describe('IBANs (ISO 13616)', () => {
  it('accepts valid IBANs of several countries, in print or electronic form', () => {
    const cases: [string, string, string | undefined][] = [
      ['DE89370400440532013000', 'DE', '37040044'],
      ['DE89 3704 0044 0532 0130 00', 'DE', '37040044'],
      ['gb29nwbk60161331926819', 'GB', 'NWBK'],
      ['NL91ABNA0417164300', 'NL', 'ABNA'],
      ['FR1420041010050500013M02606', 'FR', '20041'],
      ['ES9121000418450200051332', 'ES', '2100'],
      ['IT60X0542811101000000123456', 'IT', '05428'],
      ['CH9300762011623852957', 'CH', '00762'],
      ['NO9386011117947', 'NO', '8601'],
    ];
    for (const [input, countryCode, bankCode] of cases) {
      const check = checkIban(input);
      expect(check.ok, input).toBe(true);
      if (!check.ok) continue;
      expect(check.value.iban).toBe(input.replace(/ /g, '').toUpperCase());
      expect(check.value.countryCode).toBe(countryCode);
      expect(check.value.bankCode).toBe(bankCode);
    }
  });

  it('accepts the registry\'s own examples of the countries added since 2021 (BI, DJ, FK, HN), and refuses a wrong one of theirs', () => {
    for (const iban of ['BI4210000100010000332045181', 'DJ2100010000000154000100186', 'FK88SC123456789012', 'HN88CABF00000000000250005469']) {
      expect(checkIban(iban).ok, iban).toBe(true);
      expect(looksLikeIban(iban.toLowerCase())).toBe(true);
    }
    expect(reasonOf(checkIban('BI4210000100010000332045182'))).toMatch(/mod-97/);
    expect(reasonOf(checkIban('fk88sc123456789013'))).toMatch(/mod-97/);
  });

  it('refuses a wrong national check digit where ibantools does not look (the CIN of Italy and San Marino, the Luhn digit of Finland)', () => {
    for (const iban of ['IT60X0542811101000000123456', 'SM86U0322509800000000270100', 'FI2112345600000785', 'FI1410093000123458']) expect(checkIban(iban).ok, iban).toBe(true);
    // Each with its mod-97 digits made right again: only the national check is wrong.
    expect(reasonOf(checkIban('IT33X0542811101000000123457'))).toBe('the national check digits of the account part do not match (Italy)');
    expect(reasonOf(checkIban('SM59U0322509800000000270101'))).toMatch(/national check digits .*San Marino/);
    expect(reasonOf(checkIban('FI9112345600000786'))).toBe('the national check digits of the account part do not match (Finland)');
  });

  it('refuses a wrong check digit (mod-97)', () => {
    expect(reasonOf(checkIban('DE89370400440532013001'))).toMatch(/mod-97/);
    expect(reasonOf(checkIban('DE88370400440532013000'))).toMatch(/mod-97/);
  });

  it('refuses a wrong length for the country, naming both lengths', () => {
    expect(reasonOf(checkIban('DE8937040044053201300'))).toBe('an IBAN from Germany is 22 characters long; got 21');
  });

  it('refuses countries outside the IBAN registry and non-letters in the country position', () => {
    expect(reasonOf(checkIban('US12345678901234'))).toBe('US is not a country of the IBAN registry');
    expect(reasonOf(checkIban('XX89370400440532013000'))).toMatch(/not a country of the IBAN registry/);
    expect(reasonOf(checkIban('1289370400440532013000'))).toMatch(/two-letter country code/);
  });

  it('refuses non-numeric check digits, a bad BBAN format and forbidden characters', () => {
    expect(reasonOf(checkIban('DEAB370400440532013000'))).toMatch(/check digits/);
    expect(reasonOf(checkIban('GB29NWBK6016133192681X'))).toMatch(/BBAN/);
    expect(reasonOf(checkIban('DE89-3704-0044-0532-0130-00'))).toMatch(/only letters, digits and spaces/);
    expect(reasonOf(checkIban('DE8'))).toMatch(/at least 15/);
    expect(reasonOf(checkIban(`DE89${'0'.repeat(40)}`))).toMatch(/at most 34/);
  });

  it('recognises account numbers meant as IBANs', () => {
    expect(looksLikeIban('DE89370400440532013000')).toBe(true);
    expect(looksLikeIban('de89370400440532013000')).toBe(true);
    expect(looksLikeIban('000123456789')).toBe(false);
    expect(looksLikeIban('US12345678')).toBe(false);
    expect(looksLikeIban('DEAB1234')).toBe(false);
  });
});

describe('built-in directory data', () => {
  it('every routing number passes the checksum and appears once per kind', () => {
    for (const kind of ['FEDACH', 'FEDWIRE'] as const) {
      const records = builtInDirectory[kind].records as { routingNumber: string }[];
      expect(records.length).toBeGreaterThan(20);
      for (const record of records) expect(checkRoutingNumber(record.routingNumber).ok, record.routingNumber).toBe(true);
      expect(new Set(records.map((record) => record.routingNumber)).size).toBe(records.length);
    }
  });

  it('every BIC is well-formed, stored in its 11-character form, and its country matches the code', () => {
    const records = builtInDirectory.BIC.records;
    expect(records.length).toBeGreaterThan(50);
    for (const record of records) {
      const check = checkBic(record.bic);
      expect(check.ok && check.value.bic11, record.bic).toBe(record.bic);
      expect(record.countryCode).toBe(record.bic.slice(4, 6));
    }
    expect(new Set(records.map((record) => record.bic)).size).toBe(records.length);
  });

  it('every national bank code has the length its country\'s IBANs carry, and a well-formed BIC when given', () => {
    const bankCodeLength: Record<string, number> = { DE: 8, FR: 5, ES: 4, IT: 5, AT: 5, CH: 5 };
    for (const record of builtInDirectory.IBAN_BANK_CODE.records) {
      expect(record.bankCode.length, `${record.countryCode} ${record.bankCode}`).toBe(bankCodeLength[record.countryCode]);
      if (record.bic !== null) expect(checkBic(record.bic).ok, record.bic).toBe(true);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { directorySources, ensureBuiltInDirectory } from './bank-directory.service.js';
import { builtInDirectory } from './built-in.js';

// These tests run on the built-in directory only (nothing imported), as a fresh install would.
let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const routing = (value: string) => t.request({ url: `/v1/payments/validate/routing/${value}` });
const swift = (value: string) => t.request({ url: `/v1/payments/validate/swift/${value}` });
const iban = (value: string) => t.request({ url: `/v1/payments/validate/iban/${value}` });

describe('built-in directory loading', () => {
  it('is loaded at start, one source row per kind, marked BUILT_IN with the built-in version', async () => {
    const sources = await directorySources(t.deps.db);
    expect(sources.map((source) => [source.kind, source.origin, source.version, source.recordCount])).toEqual(
      (['BIC', 'FEDACH', 'FEDWIRE', 'IBAN_BANK_CODE'] as const).map((kind) => [
        kind,
        'BUILT_IN',
        builtInDirectory[kind].version,
        builtInDirectory[kind].records.length,
      ]),
    );
  });

  it('is not loaded again when it is current', async () => {
    expect(await ensureBuiltInDirectory(t.deps.db, t.clock.now())).toEqual([]);
  });

  it('replaces data from an older built-in directory, kind by kind', async () => {
    await t.deps.db.deleteFrom('bank_directory_bics').where('bic', '=', 'DEUTDEFFXXX').execute();
    await t.deps.db.updateTable('bank_directory_sources').set({ version: 'f'.repeat(64) }).where('kind', '=', 'BIC').execute();
    expect((await swift('DEUTDEFF')).status).toBe(404);
    expect(await ensureBuiltInDirectory(t.deps.db, t.clock.now())).toEqual(['BIC']);
    expect((await swift('DEUTDEFF')).status).toBe(200);
  });
});

describe('GET /v1/payments/validate/routing/:routingNumber', () => {
  describe('200', () => {
    it('returns the bank of a routing number that takes ACH and Fedwire', async () => {
      const response = await routing('021000021');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        message: 'Routing number is valid',
        data: {
          routingNumber: '021000021',
          bankName: 'JPMorgan Chase Bank, N.A.',
          address: '1111 Polaris Parkway',
          city: 'Columbus',
          state: 'OH',
          zipCode: '43240',
          supportsAch: true,
          supportsFedwire: true,
        },
        traceId: response.headers['x-trace-id'],
      });
    });

    it('says when a number takes ACH only', async () => {
      const response = await routing('011000138');
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ bankName: 'Bank of America, N.A.', supportsAch: true, supportsFedwire: false });
    });

    it('says when a number takes Fedwire only', async () => {
      const response = await routing('031101266');
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ bankName: 'TD Bank, N.A.', state: 'NJ', supportsAch: false, supportsFedwire: true });
    });
  });

  describe('400', () => {
    it.each([
      ['021000022', 'the ABA check digit does not match (checksum failed)'],
      ['02100002', 'a routing number is exactly 9 digits; got 8'],
      ['0210000210', 'a routing number is exactly 9 digits; got 10'],
      ['02100002X', 'a routing number holds digits only (no spaces, dashes or letters)'],
      ['021-000-021', 'a routing number holds digits only (no spaces, dashes or letters)'],
    ])('%s: INVALID_ROUTING_NUMBER with the reason', async (value, reason) => {
      const response = await routing(value);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        code: 'INVALID_ROUTING_NUMBER',
        message: `Invalid routing number: ${reason}.`,
        details: [{ field: 'routingNumber', message: reason }],
      });
    });
  });

  describe('404', () => {
    it('a well-formed number that no bank in the directory uses: BANK_NOT_FOUND', async () => {
      const response = await routing('123456780');
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'BANK_NOT_FOUND', details: [{ field: 'routingNumber' }] });
    });
  });
});

describe('GET /v1/payments/validate/swift/:swiftCode', () => {
  describe('200', () => {
    it('returns the bank of an 8-character code (its primary office)', async () => {
      const response = await swift('DEUTDEFF');
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({
        swiftCode: 'DEUTDEFF',
        bankName: 'Deutsche Bank AG',
        address: 'Taunusanlage 12',
        city: 'Frankfurt am Main',
        country: 'Germany',
        countryCode: 'DE',
      });
    });

    it('an 11-character code ending in XXX names the same office; lower case is accepted', async () => {
      const response = await swift('chasus33xxx');
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ swiftCode: 'CHASUS33XXX', bankName: 'JPMorgan Chase Bank, N.A.', country: 'United States of America' });
    });

    it('an 11-character branch code listed in the directory', async () => {
      const response = await swift('UBSWCHZH80A');
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ bankName: 'UBS Switzerland AG', city: 'Zurich', countryCode: 'CH', country: 'Switzerland' });
    });
  });

  describe('400', () => {
    it.each([
      ['DEUTDEF', /8 or 11 characters long; got 7/],
      ['DEUTDEFF5', /8 or 11 characters long; got 9/],
      ['DEUTZZFF', /"ZZ" \(characters 5 and 6\) is not an ISO 3166-1 country code/],
      ['DEUT1EFF', /country code of two letters/],
      ['DEUTDEFFX12', /branch code starting with X must be XXX/],
      ['DEUT%20EFF', /only letters and digits/],
    ])('%s: INVALID_SWIFT_CODE with the reason', async (value, reason) => {
      const response = await swift(value);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_SWIFT_CODE');
      expect(response.body.message).toMatch(reason);
      expect(response.body.details).toEqual([{ field: 'swiftCode', message: expect.stringMatching(reason) }]);
    });
  });

  describe('404', () => {
    it('a well-formed code not in the directory: BANK_NOT_FOUND', async () => {
      const response = await swift('ZZZZDEFF');
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'BANK_NOT_FOUND', message: 'SWIFT/BIC code ZZZZDEFF is not in the bank directory.' });
    });

    it('a branch the directory does not list is unknown even when its head office is listed', async () => {
      const response = await swift('DEUTDEFF123');
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('BANK_NOT_FOUND');
    });
  });
});

describe('GET /v1/payments/validate/iban/:iban', () => {
  describe('200', () => {
    it('names the bank from the national bank code (Germany)', async () => {
      const response = await iban('DE89370400440532013000');
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({
        iban: 'DE89370400440532013000',
        valid: true,
        country: 'Germany',
        countryCode: 'DE',
        bankCode: '37040044',
        bankName: 'Commerzbank AG',
        bic: 'COBADEFFXXX',
      });
    });

    it('names the bank through the BIC directory where the IBAN carries the BIC\'s letters (GB, NL)', async () => {
      const british = await iban('GB29NWBK60161331926819');
      expect(british.body.data).toMatchObject({ countryCode: 'GB', country: 'United Kingdom', bankCode: 'NWBK', bankName: 'National Westminster Bank Plc', bic: 'NWBKGB2LXXX' });
      const dutch = await iban('NL91ABNA0417164300');
      expect(dutch.body.data).toMatchObject({ bankName: 'ABN AMRO Bank N.V.', bic: 'ABNANL2AXXX' });
    });

    it('accepts the print form with spaces and lower case, and answers in electronic form', async () => {
      const response = await iban('es91%202100%200418%204502%200005%201332');
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ iban: 'ES9121000418450200051332', bankName: 'CaixaBank, S.A.' });
    });

    it('a valid IBAN of a bank the directory does not know: 200 without bankName', async () => {
      const response = await iban('CH9300762011623852957');
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({ iban: 'CH9300762011623852957', valid: true, country: 'Switzerland', countryCode: 'CH', bankCode: '00762' });
    });
  });

  describe('400', () => {
    it.each([
      ['DE89370400440532013001', 'the check digits do not match (the mod-97 checksum failed)'],
      ['DE8937040044053201300', 'an IBAN from Germany is 22 characters long; got 21'],
      ['US12345678901234', 'US is not a country of the IBAN registry'],
      ['GB29NWBK6016133192681X', 'the account part (BBAN) does not have the format of GB IBANs'],
      ['DE89-3704-0044-0532-0130-00', 'an IBAN holds only letters, digits and spaces'],
    ])('%s: INVALID_IBAN with the reason', async (value, reason) => {
      const response = await iban(value);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'INVALID_IBAN', message: `Invalid IBAN: ${reason}.`, details: [{ field: 'iban', message: reason }] });
    });
  });
});

describe('401', () => {
  it('the validation endpoints need an API key', async () => {
    const response = await t.request({ url: '/v1/payments/validate/routing/021000021', key: null });
    expect(response.status).toBe(401);
  });
});

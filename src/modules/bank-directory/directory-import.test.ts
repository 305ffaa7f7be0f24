import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { packageRoot } from '../../paths.js';
import { DirectoryFileError, fileVersion, parseBicList, parseFedAchDirectory, parseFedwireDirectory } from './directory-files.js';
import { directorySources, ensureBuiltInDirectory, importDirectoryFiles } from './bank-directory.service.js';
import { builtInDirectory } from './built-in.js';

/** A FedACH line built field by field, so a test shows exactly what it changes. */
function fedAchLine(fields: Partial<Record<'routingNumber' | 'office' | 'recordType' | 'newRoutingNumber' | 'name' | 'phone', string>> = {}): string {
  return [
    (fields.routingNumber ?? '021000021').padEnd(9),
    fields.office ?? 'O',
    '011000015',
    fields.recordType ?? '1',
    '082416',
    (fields.newRoutingNumber ?? '000000000').padEnd(9),
    (fields.name ?? 'EXAMPLE BANK').padEnd(36),
    '1 MAIN STREET'.padEnd(36),
    'SPRINGFIELD'.padEnd(20),
    'IL',
    '62701',
    '0000',
    fields.phone ?? '2175550100',
    '1',
    '1',
    '     ',
  ].join('');
}

function fedwireLine(fields: Partial<Record<'routingNumber' | 'status' | 'date', string>> = {}): string {
  return `${(fields.routingNumber ?? '021000021').padEnd(9)}${'EXAMPLE BK'.padEnd(18)}${'EXAMPLE BANK'.padEnd(36)}IL${'SPRINGFIELD'.padEnd(25)}${fields.status ?? 'Y Y'}${(fields.date ?? '20200131').padEnd(8)}`;
}

function parseError(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(DirectoryFileError);
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

describe('FedACH directory parser', () => {
  it('reads every field of a line, trims names and formats ZIP and phone', () => {
    expect(fedAchLine()).toHaveLength(155);
    expect(parseFedAchDirectory(`${fedAchLine({ name: 'EXAMPLE   BANK, N.A.' })}\r\n`)).toEqual([
      {
        routingNumber: '021000021',
        bankName: 'EXAMPLE BANK, N.A.',
        address: '1 MAIN STREET',
        city: 'SPRINGFIELD',
        state: 'IL',
        zipCode: '62701',
        phoneNumber: '217-555-0100',
        newRoutingNumber: null,
      },
    ]);
  });

  it('keeps the new routing number of record type 2 only', () => {
    const [moved] = parseFedAchDirectory(fedAchLine({ recordType: '2', newRoutingNumber: '026009593' }));
    expect(moved?.newRoutingNumber).toBe('026009593');
    const [kept] = parseFedAchDirectory(fedAchLine({ recordType: '1', newRoutingNumber: '000000000' }));
    expect(kept?.newRoutingNumber).toBeNull();
  });

  it('accepts lines whose trailing blanks were stripped, and skips blank lines', () => {
    expect(parseFedAchDirectory(`${fedAchLine().trimEnd()}\n\n${fedAchLine({ routingNumber: '026009593' })}\n`)).toHaveLength(2);
  });

  it('refuses a file of another layout, naming the line', () => {
    expect(parseError(() => parseFedAchDirectory(`${fedAchLine()}\n${fedwireLine()}`))).toMatch(/^line 2: a FedACH directory line is 155 characters long, this one has 101/);
  });

  it('refuses a bad routing number, office code, record type, empty name or duplicate', () => {
    expect(parseError(() => parseFedAchDirectory(fedAchLine({ routingNumber: '021000022' })))).toMatch(/line 1: routing number "021000022" is not valid: the ABA check digit/);
    expect(parseError(() => parseFedAchDirectory(fedAchLine({ office: 'X' })))).toMatch(/office code must be O or B/);
    expect(parseError(() => parseFedAchDirectory(fedAchLine({ recordType: '7' })))).toMatch(/record type code must be 0, 1 or 2/);
    expect(parseError(() => parseFedAchDirectory(fedAchLine({ name: '' })))).toMatch(/customer name is empty/);
    expect(parseError(() => parseFedAchDirectory(fedAchLine({ recordType: '2', newRoutingNumber: '123' })))).toMatch(/new routing number/);
    expect(parseError(() => parseFedAchDirectory(`${fedAchLine()}\n${fedAchLine()}`))).toBe('line 2: routing number 021000021 already appears on line 1');
  });

  it('refuses a file with no records: empty, or only blank lines', () => {
    for (const content of ['', '\n', ' \r\n\t\n']) expect(parseError(() => parseFedAchDirectory(content))).toBe('the file holds no records');
  });

  it('leaves out a phone number of zeros', () => {
    expect(parseFedAchDirectory(fedAchLine({ phone: '0000000000' }))[0]?.phoneNumber).toBeNull();
  });
});

describe('Fedwire directory parser', () => {
  it('reads the flags and the revision date', () => {
    expect(parseFedwireDirectory(fedwireLine({ status: 'YSN' }))).toEqual([
      {
        routingNumber: '021000021',
        telegraphicName: 'EXAMPLE BK',
        bankName: 'EXAMPLE BANK',
        address: null,
        city: 'SPRINGFIELD',
        state: 'IL',
        zipCode: null,
        fundsTransferEligible: true,
        settlementOnly: true,
        bookEntrySecuritiesEligible: false,
        revisedOn: '2020-01-31',
      },
    ]);
  });

  it('accepts a blank revision date, stripped or not', () => {
    expect(parseFedwireDirectory(fedwireLine({ date: '' }))[0]?.revisedOn).toBeNull();
    expect(parseFedwireDirectory(fedwireLine({ date: '' }).trimEnd())[0]?.revisedOn).toBeNull();
  });

  it('refuses flags other than Y/N and S, a bad date and a FedACH file', () => {
    expect(parseError(() => parseFedwireDirectory(fedwireLine({ status: 'X Y' })))).toMatch(/funds transfer status must be Y or N/);
    expect(parseError(() => parseFedwireDirectory(fedwireLine({ status: 'YXY' })))).toMatch(/settlement-only status must be S or blank/);
    expect(parseError(() => parseFedwireDirectory(fedwireLine({ date: '2020-1-1' })))).toMatch(/YYYYMMDD/);
    expect(parseError(() => parseFedwireDirectory(fedAchLine()))).toMatch(/line 1: a Fedwire directory line is 101 characters long, this one has 155/);
  });

  it('refuses a file with no records: empty, or only blank lines', () => {
    for (const content of ['', '\n', ' \r\n\t\n']) expect(parseError(() => parseFedwireDirectory(content))).toBe('the file holds no records');
  });
});

describe('BIC list parser', () => {
  const header = '\uFEFFCOUNTRY ISO2 CODE,SWIFT CODE,CODE TYPE,NAME,ADDRESS,TOWN NAME,COUNTRY NAME,TIME ZONE,,,';

  it('reads a list with a byte order mark, quoted fields and blank trailing columns', () => {
    const csv = `${header}\nDE,DEUTDEFFXXX,BIC11,DEUTSCHE BANK AG,"TAUNUSANLAGE 12, FRANKFURT",FRANKFURT AM MAIN,GERMANY,Europe/Berlin,,,\nPL,ALBPPLP1,BIC8,ALIOR BANK,  ,WARSZAWA,POLAND,Europe/Warsaw,,,\n`;
    expect(parseBicList(csv)).toEqual([
      { bic: 'DEUTDEFFXXX', bankName: 'DEUTSCHE BANK AG', address: 'TAUNUSANLAGE 12, FRANKFURT', city: 'FRANKFURT AM MAIN', countryCode: 'DE' },
      { bic: 'ALBPPLP1XXX', bankName: 'ALIOR BANK', address: null, city: 'WARSZAWA', countryCode: 'PL' },
    ]);
  });

  it('accepts other usual header names', () => {
    expect(parseBicList('BIC,Bank Name,City\nCOBADEFF,Commerzbank AG,Frankfurt\n')).toEqual([
      { bic: 'COBADEFFXXX', bankName: 'Commerzbank AG', address: null, city: 'Frankfurt', countryCode: 'DE' },
    ]);
  });

  it('refuses a missing code or name column, a bad code, a country that does not match, a duplicate', () => {
    expect(parseError(() => parseBicList('CODE,NAME\nDEUTDEFF,X\n'))).toMatch(/header row needs a SWIFT code column/);
    expect(parseError(() => parseBicList(`${header}\nDE,DEUTDEF,BIC11,X,,,,,,,\n`))).toMatch(/line 2: SWIFT code "DEUTDEF" is not valid: .*8 or 11/);
    expect(parseError(() => parseBicList(`${header}\nFR,DEUTDEFFXXX,BIC11,X,,,,,,,\n`))).toMatch(/line 2: country code FR does not match DEUTDEFFXXX/);
    expect(parseError(() => parseBicList(`${header}\nDE,DEUTDEFF,BIC8,X,,,,,,,\nDE,DEUTDEFFXXX,BIC11,Y,,,,,,,\n`))).toMatch(/line 3: SWIFT code DEUTDEFFXXX already appears on line 2/);
    expect(parseError(() => parseBicList(''))).toMatch(/empty/);
    expect(parseError(() => parseBicList(`BIC,NAME\nDEUTDEFF,${'X'.repeat(201)}\n`))).toMatch(/line 2: the name of DEUTDEFFXXX is longer than 200/);
    expect(parseError(() => parseBicList('BIC,NAME\n"DEUTDEFF,X\n'))).toMatch(/not a readable CSV/);
  });

  it('refuses a file with no records: empty, blank, or only its header row', () => {
    for (const content of ['', '\uFEFF', ' \n\n']) expect(parseError(() => parseBicList(content))).toBe('the file is empty');
    for (const content of [`${header}\n`, 'SWIFT CODE,NAME', 'BIC,NAME\r\n\r\n  \r\n']) {
      expect(parseError(() => parseBicList(content))).toBe('the file holds no records, only a header row');
    }
  });
});

describe('import of a file with no records', () => {
  let t: TestContext;
  let folder: string;

  beforeAll(async () => {
    t = await createTestApp();
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-directory-empty-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  // Imported, such a file emptied its kind and marked it imported, so the built-in data did not
  // come back at the next start and every routing number or BIC answered 404 BANK_NOT_FOUND.
  it('is refused and changes nothing, even beside a good file', async () => {
    const file = (name: string, content: string) => {
      fs.writeFileSync(path.join(folder, name), content);
      return path.join(folder, name);
    };
    const goodFedAch = file('FedACHdir.txt', `${fedAchLine({ routingNumber: '026009593' })}\n`);
    const before = await directorySources(t.deps.db);
    const refused: [Parameters<typeof importDirectoryFiles>[1], string][] = [
      [{ fedach: goodFedAch, fedwire: file('fpddir.txt', '') }, 'fpddir.txt: the file holds no records'],
      [{ fedach: file('blank-FedACHdir.txt', '\r\n  \r\n') }, 'blank-FedACHdir.txt: the file holds no records'],
      [{ bic: file('bics.csv', 'SWIFT CODE,NAME,TOWN NAME\n') }, 'bics.csv: the file holds no records, only a header row'],
      [{ bic: file('empty.csv', '') }, 'empty.csv: the file is empty'],
    ];
    for (const [files, message] of refused) {
      await expect(importDirectoryFiles(t.deps.db, files, t.clock.now())).rejects.toThrow(new DirectoryFileError(message));
    }
    expect(await directorySources(t.deps.db)).toEqual(before);
    expect(before.every((source) => source.origin === 'BUILT_IN')).toBe(true);
    // A server start has nothing to load again, and the built-in data still answers.
    expect(await ensureBuiltInDirectory(t.deps.db, t.clock.now())).toEqual([]);
    expect((await t.request({ url: '/v1/payments/validate/routing/021000021' })).body.data).toMatchObject({ bankName: 'JPMorgan Chase Bank, N.A.', supportsFedwire: true });
    expect((await t.request({ url: '/v1/payments/validate/swift/DEUTDEFF' })).status).toBe(200);
  });
});

// The official sample files live beside the repository (never committed); without them these
// tests cannot run, and say so.
const sampleFolder = path.resolve(packageRoot, '..', 'shared', 'data', 'bank-directory');
const samples = {
  fedach: path.join(sampleFolder, 'FedACHdir.txt'),
  fedwire: path.join(sampleFolder, 'fpddir.txt'),
  bic: path.join(sampleFolder, 'swift-codes-sample.csv'),
};
const samplesPresent = Object.values(samples).every((file) => fs.existsSync(file));

describe.skipIf(!samplesPresent)('import of the official sample files (skipped: ../shared/data/bank-directory is missing)', () => {
  let t: TestContext;
  const nonBlankLines = (file: string) => fs.readFileSync(file, 'latin1').split(/\r?\n/).filter((line) => line.trim() !== '').length;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a bad file changes nothing, even when the other files are good', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-directory-'));
    const badBic = path.join(folder, 'bics.csv');
    fs.writeFileSync(badBic, 'SWIFT CODE,NAME\nDEUTDEFF,Deutsche Bank\nNOT-A-BIC,Nobody\n');
    await expect(importDirectoryFiles(t.deps.db, { fedach: samples.fedach, bic: badBic }, t.clock.now())).rejects.toThrow(
      /bics\.csv: line 3: SWIFT code "NOT-A-BIC" is not valid/,
    );
    await expect(importDirectoryFiles(t.deps.db, { fedwire: path.join(folder, 'missing.txt') }, t.clock.now())).rejects.toThrow(/cannot read/);
    fs.rmSync(folder, { recursive: true });
    const sources = await directorySources(t.deps.db);
    expect(sources.every((source) => source.origin === 'BUILT_IN')).toBe(true);
    expect((await t.request({ url: '/v1/payments/validate/routing/021000021' })).body.data.bankName).toBe('JPMorgan Chase Bank, N.A.');
  });

  it('imports every record of the three files and records where they came from', async () => {
    t.clock.advance(60_000);
    const imported = await importDirectoryFiles(t.deps.db, samples, t.clock.now());
    expect(imported).toEqual([
      { kind: 'FEDACH', fileName: 'FedACHdir.txt', recordCount: nonBlankLines(samples.fedach) },
      { kind: 'FEDWIRE', fileName: 'fpddir.txt', recordCount: nonBlankLines(samples.fedwire) },
      { kind: 'BIC', fileName: 'swift-codes-sample.csv', recordCount: nonBlankLines(samples.bic) - 1 },
    ]);
    expect(imported[0]?.recordCount).toBeGreaterThan(15_000);

    const sources = Object.fromEntries((await directorySources(t.deps.db)).map((source) => [source.kind, source]));
    expect(sources.FEDACH).toMatchObject({ origin: 'IMPORT', fileName: 'FedACHdir.txt', version: fileVersion(fs.readFileSync(samples.fedach)) });
    expect(sources.FEDWIRE).toMatchObject({ origin: 'IMPORT', fileName: 'fpddir.txt', loadedAt: t.clock.now() });
    expect(sources.BIC).toMatchObject({ origin: 'IMPORT', recordCount: imported[2]?.recordCount });
    // No file replaces the national bank codes: they stay built-in.
    expect(sources.IBAN_BANK_CODE).toMatchObject({ origin: 'BUILT_IN', version: builtInDirectory.IBAN_BANK_CODE.version });

    const counts = await t.deps.db.selectFrom('bank_directory_ach_participants').select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
    expect(Number(counts.count)).toBe(imported[0]?.recordCount);
  });

  it('a server start keeps the imported data', async () => {
    expect(await ensureBuiltInDirectory(t.deps.db, t.clock.now())).toEqual([]);
    expect((await directorySources(t.deps.db)).find((source) => source.kind === 'FEDACH')?.origin).toBe('IMPORT');
  });

  it('looks up a real routing number with its FedACH address and phone and its Fedwire eligibility', async () => {
    const response = await t.request({ url: '/v1/payments/validate/routing/021000021' });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      routingNumber: '021000021',
      bankName: 'JPMORGAN CHASE',
      address: '3RD FLOOR',
      city: 'TAMPA',
      state: 'FL',
      zipCode: '33610',
      phoneNumber: '813-432-3700',
      supportsAch: true,
      supportsFedwire: true,
    });
  });

  it('the imported data replaced the built-in data of the same kind', async () => {
    const response = await t.request({ url: '/v1/payments/validate/routing/031101266' });
    expect(response.body.data).toEqual({
      routingNumber: '031101266',
      bankName: 'TD BANK, NA',
      address: null,
      city: 'WILMINGTON',
      state: 'DE',
      zipCode: null,
      supportsAch: false,
      supportsFedwire: true,
    });
  });

  it('reports the new routing number of a moved ACH number', async () => {
    const response = await t.request({ url: '/v1/payments/validate/routing/011001962' });
    expect(response.body.data).toMatchObject({ bankName: 'CATHAY BANK', city: 'ROSEMEAD', state: 'CA', newRoutingNumber: '122203950', supportsFedwire: false });
  });

  it('a Fedwire participant that is settlement-only, or not eligible for funds transfers, does not take Fedwire transfers', async () => {
    const settlementOnly = await t.request({ url: '/v1/payments/validate/routing/021053968' });
    expect(settlementOnly.body.data).toMatchObject({ bankName: 'RTPS PREFUNDED ACCOUNT', supportsAch: false, supportsFedwire: false });
    const notEligible = await t.request({ url: '/v1/payments/validate/routing/154000008' });
    expect(notEligible.body.data).toMatchObject({ bankName: 'TREASURY DEPT BUREAU OF PUBLIC DEBT', city: 'PARKERSBURG', state: 'WV', supportsFedwire: false });
  });

  it('looks up real BICs of the imported list, by their 8- and 11-character forms', async () => {
    for (const code of ['AAISALTR', 'AAISALTRXXX']) {
      const response = await t.request({ url: `/v1/payments/validate/swift/${code}` });
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({
        swiftCode: code,
        bankName: 'UNITED BANK OF ALBANIA SH.A',
        address: 'HYRJA 3 RR. DRITAN HOXHA ND. 11 TIRANA, TIRANA, 1023',
        city: 'TIRANA',
        country: 'Albania',
        countryCode: 'AL',
      });
    }
    const branch = await t.request({ url: '/v1/payments/validate/swift/ALBPPLP1BMW' });
    expect(branch.body.data).toMatchObject({ bankName: 'ALIOR BANK SPOLKA AKCYJNA', address: 'WARSZAWA, MAZOWIECKIE', countryCode: 'PL' });
    const blankAddress = await t.request({ url: '/v1/payments/validate/swift/BCCSCLR1' });
    expect(blankAddress.body.data).toMatchObject({ address: null, city: 'SANTIAGO', country: 'Chile' });
  });

  it('a built-in BIC missing from the imported list is now unknown; the built-in national bank codes still name IBAN banks', async () => {
    expect((await t.request({ url: '/v1/payments/validate/swift/DEUTDEFF' })).status).toBe(404);
    const german = await t.request({ url: '/v1/payments/validate/iban/DE89370400440532013000' });
    expect(german.body.data.bankName).toBe('Commerzbank AG');
    const british = await t.request({ url: '/v1/payments/validate/iban/GB29NWBK60161331926819' });
    expect(british.status).toBe(200);
    expect(british.body.data.bankName).toBeUndefined();
  });

  it('importing one kind again replaces only that kind', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-directory-'));
    const smallBic = path.join(folder, 'two-bics.csv');
    fs.writeFileSync(smallBic, 'SWIFT CODE,NAME,TOWN NAME\nNWBKGB2L,NATIONAL WESTMINSTER BANK PLC,LONDON\nDEUTDEFF,DEUTSCHE BANK AG,FRANKFURT\n');
    await importDirectoryFiles(t.deps.db, { bic: smallBic }, t.clock.now());
    fs.rmSync(folder, { recursive: true });
    expect((await t.request({ url: '/v1/payments/validate/swift/AAISALTR' })).status).toBe(404);
    expect((await t.request({ url: '/v1/payments/validate/swift/DEUTDEFF' })).body.data.city).toBe('FRANKFURT');
    expect((await t.request({ url: '/v1/payments/validate/iban/GB29NWBK60161331926819' })).body.data.bankName).toBe('NATIONAL WESTMINSTER BANK PLC');
    expect((await t.request({ url: '/v1/payments/validate/routing/021000021' })).body.data.city).toBe('TAMPA');
  });
});

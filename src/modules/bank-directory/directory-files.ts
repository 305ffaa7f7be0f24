import crypto from 'node:crypto';
import { parse as parseCsv } from 'csv-parse/sync';
import { checkBic } from './bic.js';
import { checkRoutingNumber } from './routing-number.js';
import type { AchRecord, BicRecord, FedwireRecord } from './directory-records.js';

/**
 * Parsers of the official directory files. Each reads a whole file and either returns every
 * record or throws a DirectoryFileError naming the first bad line, so an import never loads half
 * a file. A file with no records is refused too: imported, it would leave its kind of the
 * directory empty (every identifier unknown) and marked imported, so the built-in data would not
 * come back at the next start. The fixed-width layouts are the Federal Reserve's:
 *
 * FedACHdir.txt, 155 characters a line: routing number 1–9, office code 10, servicing FRB 11–19,
 * record type 20, change date 21–26, new routing number 27–35, customer name 36–71, address
 * 72–107, city 108–127, state 128–129, ZIP 130–134, ZIP extension 135–138, telephone area code
 * 139–141, prefix 142–144, suffix 145–148, institution status 149, data view 150, filler 151–155.
 *
 * fpddir.txt, 101 characters a line: routing number 1–9, telegraphic name 10–27, customer name
 * 28–63, state 64–65, city 66–90, funds transfer status 91 (Y/N), funds settlement-only status
 * 92 (S or blank), book-entry securities transfer status 93 (Y/N), date of last revision 94–101
 * (YYYYMMDD or blank).
 */
export class DirectoryFileError extends Error {
  override name = 'DirectoryFileError';
}

/** Upper bounds that keep a wrong file from filling memory or the database. */
export const directoryFileRecordsMax = 1_000_000;

export function fileVersion(content: string | Buffer): string {
  return crypto.createHash('sha256').update(content).digest('hex');
}

/** Collapses runs of spaces and trims; an empty field is null. */
function text(value: string): string | null {
  const cleaned = value.replace(/\s+/g, ' ').trim();
  return cleaned === '' ? null : cleaned;
}

function stateCode(value: string): string | null {
  const cleaned = value.trim();
  return /^[A-Z]{2}$/.test(cleaned) ? cleaned : null;
}

function lines(content: string): { line: string; lineNumber: number }[] {
  const result: { line: string; lineNumber: number }[] = [];
  content.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() !== '') result.push({ line, lineNumber: index + 1 });
  });
  if (result.length === 0) throw new DirectoryFileError('the file holds no records');
  if (result.length > directoryFileRecordsMax) throw new DirectoryFileError(`more than ${directoryFileRecordsMax} lines`);
  return result;
}

/** Pads a fixed-width line whose trailing blanks were stripped; refuses lines of another layout. */
function fixedWidth(line: string, lineNumber: number, length: number, lengthMin: number, fileKind: string): string {
  if (line.length > length || line.length < lengthMin) {
    throw new DirectoryFileError(
      `line ${lineNumber}: a ${fileKind} line is ${length} characters long, this one has ${line.length} (is this the right file?)`,
    );
  }
  return line.padEnd(length, ' ');
}

function routingNumberAt(line: string, lineNumber: number, start: number, label: string): string {
  const value = line.slice(start, start + 9);
  const check = checkRoutingNumber(value);
  if (!check.ok) throw new DirectoryFileError(`line ${lineNumber}: ${label} "${value}" is not valid: ${check.reason}`);
  return check.value;
}

function rejectDuplicate(seen: Map<string, number>, key: string, lineNumber: number, label: string): void {
  const earlier = seen.get(key);
  if (earlier !== undefined) throw new DirectoryFileError(`line ${lineNumber}: ${label} ${key} already appears on line ${earlier}`);
  seen.set(key, lineNumber);
}

const fedAchLineLength = 155;
/** Through the telephone number; the status codes and filler may have been stripped as blanks. */
const fedAchLineLengthMin = 148;

export function parseFedAchDirectory(content: string): AchRecord[] {
  const seen = new Map<string, number>();
  return lines(content).map(({ line: raw, lineNumber }) => {
    const line = fixedWidth(raw, lineNumber, fedAchLineLength, fedAchLineLengthMin, 'FedACH directory');
    const routingNumber = routingNumberAt(line, lineNumber, 0, 'routing number');
    rejectDuplicate(seen, routingNumber, lineNumber, 'routing number');
    const officeCode = line[9];
    const recordType = line[19];
    if (officeCode !== 'O' && officeCode !== 'B') {
      throw new DirectoryFileError(`line ${lineNumber}: office code must be O or B, found "${officeCode ?? ''}" (is this the right file?)`);
    }
    if (recordType !== '0' && recordType !== '1' && recordType !== '2') {
      throw new DirectoryFileError(`line ${lineNumber}: record type code must be 0, 1 or 2, found "${recordType ?? ''}"`);
    }
    const bankName = text(line.slice(35, 71));
    if (!bankName) throw new DirectoryFileError(`line ${lineNumber}: the customer name is empty`);
    const zip = line.slice(129, 134);
    const zipExtension = line.slice(134, 138);
    const phone = line.slice(138, 148);
    return {
      routingNumber,
      bankName,
      address: text(line.slice(71, 107)),
      city: text(line.slice(107, 127)),
      state: stateCode(line.slice(127, 129)),
      zipCode: /^\d{5}$/.test(zip) ? (/^\d{4}$/.test(zipExtension) && zipExtension !== '0000' ? `${zip}-${zipExtension}` : zip) : null,
      phoneNumber: /^\d{10}$/.test(phone) && phone !== '0000000000' ? `${phone.slice(0, 3)}-${phone.slice(3, 6)}-${phone.slice(6)}` : null,
      // Record type 2: the Federal Reserve sends this number's entries to the new routing number.
      newRoutingNumber: recordType === '2' ? routingNumberAt(line, lineNumber, 26, 'new routing number') : null,
    };
  });
}

const fedwireLineLength = 101;
/** Through the book-entry status; the revision date may be blank and stripped. */
const fedwireLineLengthMin = 93;

function yesNo(value: string | undefined, lineNumber: number, label: string): boolean {
  if (value === 'Y') return true;
  if (value === 'N') return false;
  throw new DirectoryFileError(`line ${lineNumber}: ${label} must be Y or N, found "${value ?? ''}" (is this the right file?)`);
}

export function parseFedwireDirectory(content: string): FedwireRecord[] {
  const seen = new Map<string, number>();
  return lines(content).map(({ line: raw, lineNumber }) => {
    const line = fixedWidth(raw, lineNumber, fedwireLineLength, fedwireLineLengthMin, 'Fedwire directory');
    const routingNumber = routingNumberAt(line, lineNumber, 0, 'routing number');
    rejectDuplicate(seen, routingNumber, lineNumber, 'routing number');
    const bankName = text(line.slice(27, 63));
    if (!bankName) throw new DirectoryFileError(`line ${lineNumber}: the customer name is empty`);
    const settlement = line[91];
    if (settlement !== 'S' && settlement !== ' ') {
      throw new DirectoryFileError(`line ${lineNumber}: funds settlement-only status must be S or blank, found "${settlement ?? ''}"`);
    }
    const revision = line.slice(93, 101).trim();
    let revisedOn: string | null = null;
    if (revision !== '') {
      const match = /^(\d{4})(\d{2})(\d{2})$/.exec(revision);
      if (!match) throw new DirectoryFileError(`line ${lineNumber}: date of last revision must be YYYYMMDD, found "${revision}"`);
      revisedOn = `${match[1]}-${match[2]}-${match[3]}`;
    }
    return {
      routingNumber,
      telegraphicName: text(line.slice(9, 27)),
      bankName,
      address: null,
      city: text(line.slice(65, 90)),
      state: stateCode(line.slice(63, 65)),
      zipCode: null,
      fundsTransferEligible: yesNo(line[90], lineNumber, 'funds transfer status'),
      settlementOnly: settlement === 'S',
      bookEntrySecuritiesEligible: yesNo(line[92], lineNumber, 'book-entry securities transfer status'),
      revisedOn,
    };
  });
}

/** Header names accepted for each column of a BIC list, compared without case or extra spaces. */
const bicColumns = {
  bic: ['SWIFT CODE', 'SWIFT', 'BIC', 'BIC CODE', 'SWIFT/BIC', 'SWIFT BIC'],
  bankName: ['NAME', 'BANK NAME', 'INSTITUTION NAME', 'INSTITUTION'],
  address: ['ADDRESS', 'BANK ADDRESS'],
  city: ['TOWN NAME', 'CITY', 'TOWN'],
  countryCode: ['COUNTRY ISO2 CODE', 'COUNTRY CODE', 'COUNTRY ISO CODE', 'ISO COUNTRY CODE'],
} as const;

/**
 * A BIC list as CSV with a header row (for example COUNTRY ISO2 CODE, SWIFT CODE, CODE TYPE,
 * NAME, ADDRESS, TOWN NAME, COUNTRY NAME, TIME ZONE). A byte order mark, blank trailing columns
 * and quoted fields are fine; columns other than those above are ignored.
 */
export function parseBicList(content: string): BicRecord[] {
  let rows: { record: string[]; info: { lines: number } }[];
  try {
    rows = parseCsv(content, { bom: true, info: true, relax_column_count: true, skip_empty_lines: true, trim: true }) as unknown as {
      record: string[];
      info: { lines: number };
    }[];
  } catch (error) {
    throw new DirectoryFileError(`not a readable CSV file: ${(error as Error).message}`);
  }
  const [header, ...body] = rows;
  if (!header) throw new DirectoryFileError('the file is empty');
  if (body.length > directoryFileRecordsMax) throw new DirectoryFileError(`more than ${directoryFileRecordsMax} rows`);
  const names = header.record.map((name) => name.replace(/\s+/g, ' ').trim().toUpperCase());
  const columnOf = (accepted: readonly string[]) => names.findIndex((name) => accepted.includes(name));
  const columns = {
    bic: columnOf(bicColumns.bic),
    bankName: columnOf(bicColumns.bankName),
    address: columnOf(bicColumns.address),
    city: columnOf(bicColumns.city),
    countryCode: columnOf(bicColumns.countryCode),
  };
  if (columns.bic < 0 || columns.bankName < 0) {
    throw new DirectoryFileError(
      `the header row needs a SWIFT code column (${bicColumns.bic.join(', ')}) and a name column (${bicColumns.bankName.join(', ')})`,
    );
  }
  if (body.length === 0) throw new DirectoryFileError('the file holds no records, only a header row');
  const cell = (record: string[], column: number) => (column < 0 ? '' : (record[column] ?? ''));
  const seen = new Map<string, number>();
  return body.map(({ record, info }) => {
    const lineNumber = info.lines;
    const given = cell(record, columns.bic);
    const check = checkBic(given);
    if (!check.ok) throw new DirectoryFileError(`line ${lineNumber}: SWIFT code "${given}" is not valid: ${check.reason}`);
    const bic = check.value.bic11;
    rejectDuplicate(seen, bic, lineNumber, 'SWIFT code');
    const bankName = text(cell(record, columns.bankName));
    if (!bankName) throw new DirectoryFileError(`line ${lineNumber}: the name of ${bic} is empty`);
    const address = text(cell(record, columns.address));
    const city = text(cell(record, columns.city));
    for (const [label, value, lengthMax] of [['name', bankName, 200], ['address', address, 300], ['town name', city, 100]] as const) {
      if (value !== null && value.length > lengthMax) {
        throw new DirectoryFileError(`line ${lineNumber}: the ${label} of ${bic} is longer than ${lengthMax} characters`);
      }
    }
    const countryColumn = cell(record, columns.countryCode).toUpperCase();
    if (countryColumn !== '' && countryColumn !== check.value.countryCode) {
      throw new DirectoryFileError(`line ${lineNumber}: country code ${countryColumn} does not match ${bic}, whose country is ${check.value.countryCode}`);
    }
    return {
      bic,
      bankName,
      address,
      city,
      countryCode: check.value.countryCode,
    };
  });
}

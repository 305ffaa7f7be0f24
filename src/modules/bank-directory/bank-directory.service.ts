import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../../platform/db/database.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { AppError } from '../../platform/http/errors.js';
import { checkBic, countryName } from './bic.js';
import { checkIban } from './iban.js';
import { checkRoutingNumber } from './routing-number.js';
import { builtInDirectory } from './built-in.js';
import { directoryKinds, type BankDirectorySourcesTable, type DirectoryKind } from './bank-directory.tables.js';
import type { DirectoryBatch } from './directory-records.js';
import { DirectoryFileError, fileVersion, parseBicList, parseFedAchDirectory, parseFedwireDirectory } from './directory-files.js';
import * as store from './bank-directory.store.js';

export interface RoutingNumberInfo {
  routingNumber: string;
  bankName: string;
  address: string | null;
  city: string | null;
  state: string | null;
  zipCode: string | null;
  phoneNumber: string | null;
  /** Listed in the FedACH directory: the number takes ACH entries. */
  supportsAch: boolean;
  /** Listed in the Fedwire directory as eligible for funds transfers, and not settlement-only. */
  supportsFedwire: boolean;
  /** FedACH sends this number's entries to another routing number. */
  newRoutingNumber: string | null;
}

export interface SwiftCodeInfo {
  swiftCode: string;
  bankName: string;
  address: string | null;
  city: string | null;
  country: string;
  countryCode: string;
}

export interface IbanInfo {
  iban: string;
  valid: true;
  country: string;
  countryCode: string;
  bankCode: string | null;
  bankName: string | null;
  bic: string | null;
}

/**
 * Looks a routing number up in both directories. The FedACH record supplies the bank's name and
 * address when there is one (it is the only one with a street address, ZIP and phone); a number
 * that only Fedwire knows is described by its Fedwire record.
 */
export async function lookupRoutingNumber(db: store.Queryable, routingNumber: string): Promise<RoutingNumberInfo | undefined> {
  const ach = await store.findAchParticipant(db, routingNumber);
  const fedwire = await store.findFedwireParticipant(db, routingNumber);
  const main = ach ?? fedwire;
  if (!main) return undefined;
  return {
    routingNumber,
    bankName: main.bank_name,
    address: main.address,
    city: main.city,
    state: main.state,
    zipCode: main.zip_code,
    phoneNumber: ach?.phone_number ?? null,
    supportsAch: ach !== undefined,
    supportsFedwire: fedwire !== undefined && fedwire.funds_transfer_eligible && !fedwire.settlement_only,
    newRoutingNumber: ach?.new_routing_number ?? null,
  };
}

/**
 * Validates a routing number: 400 INVALID_ROUTING_NUMBER when malformed or the checksum fails,
 * 404 BANK_NOT_FOUND when well-formed but in neither directory. `field` names the offending
 * field in the error details (a path parameter or a body field).
 */
export async function validateRoutingNumber(db: store.Queryable, input: string, field = 'routingNumber'): Promise<RoutingNumberInfo> {
  const check = checkRoutingNumber(input);
  if (!check.ok) {
    throw new AppError('INVALID_ROUTING_NUMBER', `Invalid routing number: ${check.reason}.`, { details: [{ field, message: check.reason }] });
  }
  const info = await lookupRoutingNumber(db, check.value);
  if (!info) {
    throw new AppError('BANK_NOT_FOUND', `Routing number ${check.value} is not in the bank directory.`, {
      details: [{ field, message: 'is not in the bank directory' }],
    });
  }
  return info;
}

/** Validates a SWIFT/BIC code: 400 INVALID_SWIFT_CODE when malformed, 404 BANK_NOT_FOUND when unknown. */
export async function validateSwiftCode(db: store.Queryable, input: string, field = 'swiftCode'): Promise<SwiftCodeInfo> {
  const check = checkBic(input);
  if (!check.ok) {
    throw new AppError('INVALID_SWIFT_CODE', `Invalid SWIFT/BIC code: ${check.reason}.`, { details: [{ field, message: check.reason }] });
  }
  const row = await store.findBic(db, check.value.bic11);
  if (!row) {
    throw new AppError('BANK_NOT_FOUND', `SWIFT/BIC code ${check.value.code} is not in the bank directory.`, {
      details: [{ field, message: 'is not in the bank directory' }],
    });
  }
  return {
    swiftCode: check.value.code,
    bankName: row.bank_name,
    address: row.address,
    city: row.city,
    country: countryName(row.country_code),
    countryCode: row.country_code,
  };
}

/**
 * Validates an IBAN: 400 INVALID_IBAN when malformed or a checksum fails. A valid IBAN is never
 * 404: its bank is named when the directory knows it, by the national bank code inside the IBAN
 * or, in countries whose IBANs carry the first four letters of the BIC (GB, IE, NL, ...), by the
 * BIC directory.
 */
export async function validateIban(db: store.Queryable, input: string, field = 'iban'): Promise<IbanInfo> {
  const check = checkIban(input);
  if (!check.ok) {
    throw new AppError('INVALID_IBAN', `Invalid IBAN: ${check.reason}.`, { details: [{ field, message: check.reason }] });
  }
  const { iban, countryCode, bankCode } = check.value;
  let bankName: string | null = null;
  let bic: string | null = null;
  if (bankCode) {
    const national = await store.findIbanBankCode(db, countryCode, bankCode);
    if (national) {
      bankName = national.bank_name;
      bic = national.bic;
    } else if (/^[A-Z]{4}$/.test(bankCode)) {
      const byBic = await store.findBicByInstitution(db, `${bankCode}${countryCode}`);
      if (byBic) {
        bankName = byBic.bank_name;
        bic = byBic.bic;
      }
    }
  }
  return { iban, valid: true, country: countryName(countryCode), countryCode, bankCode: bankCode ?? null, bankName, bic };
}

/**
 * Loads the built-in directory for every kind that has no data yet, or whose data came from an
 * older built-in directory; imported data is left alone. Runs when a server starts.
 */
export async function ensureBuiltInDirectory(db: Db, now: Date): Promise<DirectoryKind[]> {
  return withTransaction(db, async (tx) => {
    await store.lockDirectory(tx);
    const sources = new Map((await store.readSources(tx)).map((source) => [source.kind, source]));
    const loaded: DirectoryKind[] = [];
    for (const kind of directoryKinds) {
      const source = sources.get(kind);
      const builtIn = builtInDirectory[kind];
      if (source && (source.origin === 'IMPORT' || source.version === builtIn.version)) continue;
      await store.replaceKind(tx, builtIn, 'BUILT_IN', now);
      loaded.push(kind);
    }
    return loaded;
  });
}

export interface DirectoryImportFiles {
  fedach?: string | undefined;
  fedwire?: string | undefined;
  bic?: string | undefined;
}

export interface DirectoryImportResult {
  kind: DirectoryKind;
  fileName: string;
  recordCount: number;
}

async function readBatch(kind: 'FEDACH' | 'FEDWIRE' | 'BIC', file: string): Promise<DirectoryBatch> {
  const fileName = path.basename(file);
  let content: Buffer;
  try {
    content = await fs.readFile(file);
  } catch (error) {
    throw new DirectoryFileError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const version = fileVersion(content);
  try {
    // The Federal Reserve files are fixed-width ASCII: read byte for byte so columns never shift.
    if (kind === 'FEDACH') return { kind, records: parseFedAchDirectory(content.toString('latin1')), version, fileName };
    if (kind === 'FEDWIRE') return { kind, records: parseFedwireDirectory(content.toString('latin1')), version, fileName };
    return { kind, records: parseBicList(content.toString('utf8')), version, fileName };
  } catch (error) {
    if (error instanceof DirectoryFileError) throw new DirectoryFileError(`${fileName}: ${error.message}`);
    throw error;
  }
}

/**
 * Replaces the built-in (or earlier imported) data of each kind given a file. Every file is
 * read and checked before anything changes, and all kinds are replaced in one transaction: a
 * bad file leaves the directory exactly as it was.
 */
export async function importDirectoryFiles(db: Db, files: DirectoryImportFiles, now: Date): Promise<DirectoryImportResult[]> {
  return writeDirectoryFiles(db, await readDirectoryFiles(files), now);
}

/**
 * The files of an import read and checked, before any database is opened: the command refuses a
 * missing or bad file without creating a database where there was none (until 2026-12-07 it
 * created one, and the docs say a refused import changes nothing; found by an audit).
 */
export async function readDirectoryFiles(files: DirectoryImportFiles): Promise<DirectoryFilesRead> {
  const wanted: ['FEDACH' | 'FEDWIRE' | 'BIC', string][] = [];
  if (files.fedach) wanted.push(['FEDACH', files.fedach]);
  if (files.fedwire) wanted.push(['FEDWIRE', files.fedwire]);
  if (files.bic) wanted.push(['BIC', files.bic]);
  if (wanted.length === 0) throw new DirectoryFileError('give at least one of --fedach FILE, --fedwire FILE, --bic FILE');
  const batches: DirectoryBatch[] = [];
  for (const [kind, file] of wanted) batches.push(await readBatch(kind, file));
  return { batches };
}

/** What readDirectoryFiles read, for writeDirectoryFiles. */
export interface DirectoryFilesRead {
  readonly batches: readonly DirectoryBatch[];
}

/** Replaces each kind read by readDirectoryFiles, in one transaction. */
export async function writeDirectoryFiles(db: Db, { batches }: DirectoryFilesRead, now: Date): Promise<DirectoryImportResult[]> {
  await withTransaction(db, async (tx) => {
    await store.lockDirectory(tx);
    for (const batch of batches) await store.replaceKind(tx, batch, 'IMPORT', now);
  });
  return batches.map((batch) => ({ kind: batch.kind, fileName: batch.fileName ?? '', recordCount: batch.records.length }));
}

/** Where one kind of the directory came from, as `openbaas directory status` shows it. */
export interface DirectorySource {
  kind: DirectoryKind;
  origin: BankDirectorySourcesTable['origin'];
  /** The built-in data's version, or the SHA-256 of the imported file. */
  version: string;
  /** The imported file's name; null for built-in data. */
  fileName: string | null;
  recordCount: number;
  loadedAt: Date;
}

export async function directorySources(db: Db): Promise<DirectorySource[]> {
  return (await store.readSources(db)).map((source) => ({
    kind: source.kind,
    origin: source.origin,
    version: source.version,
    fileName: source.file_name,
    recordCount: source.record_count,
    loadedAt: source.loaded_at,
  }));
}

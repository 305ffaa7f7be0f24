import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { BankDirectorySourcesTable, DirectoryKind } from './bank-directory.tables.js';
import type { DirectoryBatch } from './directory-records.js';

/** Either the database or an open transaction: lookups work in both. */
export type Queryable = Kysely<Database>;

/** Any constant: every process that loads directory data takes this lock first. */
const directoryLockId = 7_300_151_005;
/** Rows per INSERT: well under PostgreSQL's 65,535 parameters with the widest table's 11 columns. */
const insertBatchSize = 1000;

const tableOf = {
  FEDACH: 'bank_directory_ach_participants',
  FEDWIRE: 'bank_directory_fedwire_participants',
  BIC: 'bank_directory_bics',
  IBAN_BANK_CODE: 'bank_directory_iban_bank_codes',
} as const satisfies Record<DirectoryKind, keyof Database>;

/** Serialises directory loads (several servers starting at once, an import during a start). */
export async function lockDirectory(tx: Tx): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${directoryLockId})`.execute(tx);
}

export async function readSources(db: Queryable): Promise<BankDirectorySourcesTable[]> {
  return db.selectFrom('bank_directory_sources').selectAll().orderBy('kind').execute();
}

function rowsOf(batch: DirectoryBatch): Record<string, unknown>[] {
  switch (batch.kind) {
    case 'FEDACH':
      return batch.records.map((record) => ({
        routing_number: record.routingNumber,
        bank_name: record.bankName,
        address: record.address,
        city: record.city,
        state: record.state,
        zip_code: record.zipCode,
        phone_number: record.phoneNumber,
        new_routing_number: record.newRoutingNumber,
      }));
    case 'FEDWIRE':
      return batch.records.map((record) => ({
        routing_number: record.routingNumber,
        telegraphic_name: record.telegraphicName,
        bank_name: record.bankName,
        address: record.address,
        city: record.city,
        state: record.state,
        zip_code: record.zipCode,
        funds_transfer_eligible: record.fundsTransferEligible,
        settlement_only: record.settlementOnly,
        book_entry_securities_eligible: record.bookEntrySecuritiesEligible,
        revised_on: record.revisedOn,
      }));
    case 'BIC':
      return batch.records.map((record) => ({
        bic: record.bic,
        bank_name: record.bankName,
        address: record.address,
        city: record.city,
        country_code: record.countryCode,
      }));
    case 'IBAN_BANK_CODE':
      return batch.records.map((record) => ({
        country_code: record.countryCode,
        bank_code: record.bankCode,
        bank_name: record.bankName,
        bic: record.bic,
      }));
  }
}

/** Replaces every row of one kind and records where the new rows came from. Call under lockDirectory. */
export async function replaceKind(tx: Tx, batch: DirectoryBatch, origin: 'BUILT_IN' | 'IMPORT', now: Date): Promise<void> {
  const table = tableOf[batch.kind];
  await tx.deleteFrom(table).execute();
  const rows = rowsOf(batch);
  for (let start = 0; start < rows.length; start += insertBatchSize) {
    // The rows are built per table above; Kysely cannot tie a table chosen at run time to its row type.
    await tx
      .insertInto(table)
      .values(rows.slice(start, start + insertBatchSize) as never)
      .execute();
  }
  const source = { origin, version: batch.version, file_name: batch.fileName, record_count: rows.length, loaded_at: now };
  await tx
    .insertInto('bank_directory_sources')
    .values({ kind: batch.kind, ...source })
    .onConflict((conflict) => conflict.column('kind').doUpdateSet(source))
    .execute();
}

export async function findAchParticipant(db: Queryable, routingNumber: string) {
  return db.selectFrom('bank_directory_ach_participants').selectAll().where('routing_number', '=', routingNumber).executeTakeFirst();
}

export async function findFedwireParticipant(db: Queryable, routingNumber: string) {
  return db
    .selectFrom('bank_directory_fedwire_participants')
    .select(['routing_number', 'telegraphic_name', 'bank_name', 'address', 'city', 'state', 'zip_code', 'funds_transfer_eligible', 'settlement_only'])
    .where('routing_number', '=', routingNumber)
    .executeTakeFirst();
}

export async function findBic(db: Queryable, bic11: string) {
  return db.selectFrom('bank_directory_bics').selectAll().where('bic', '=', bic11).executeTakeFirst();
}

/** The institution's primary office (branch XXX) when listed, else its first branch. */
export async function findBicByInstitution(db: Queryable, institutionAndCountry: string) {
  return db
    .selectFrom('bank_directory_bics')
    .selectAll()
    .where(sql<string>`substr(bic, 1, 6)`, '=', institutionAndCountry)
    .orderBy(sql`substr(bic, 9, 3) = 'XXX'`, 'desc')
    .orderBy('bic')
    .limit(1)
    .executeTakeFirst();
}

export async function findIbanBankCode(db: Queryable, countryCode: string, bankCode: string) {
  return db
    .selectFrom('bank_directory_iban_bank_codes')
    .selectAll()
    .where('country_code', '=', countryCode)
    .where('bank_code', '=', bankCode)
    .executeTakeFirst();
}

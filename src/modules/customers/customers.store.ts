import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type {
  BusinessPersonRelationsTable,
  CustomersTable,
  MembershipProgramsTable,
  PortfoliosTable,
  WalletsTable,
} from './customers.tables.js';
import './customers.tables.js';

/** The SQL of the customers module: its own tables only. Every query is scoped by client_id. */

type Queryable = Db | Tx;

export type MembershipProgramRow = Selectable<MembershipProgramsTable>;
export type CustomerRow = Selectable<CustomersTable>;
export type PortfolioRow = Selectable<PortfoliosTable>;
export type WalletRow = Selectable<WalletsTable>;
export type RelationRow = Selectable<BusinessPersonRelationsTable>;

// ---- membership programs ----

export async function insertMembershipProgram(db: Queryable, row: Insertable<MembershipProgramsTable>): Promise<void> {
  await db.insertInto('membership_programs').values(row).execute();
}

export function listMembershipPrograms(db: Queryable, clientId: string): Promise<MembershipProgramRow[]> {
  return db
    .selectFrom('membership_programs')
    .selectAll()
    .where('client_id', '=', clientId)
    .orderBy('is_default', 'desc')
    .orderBy('name')
    .execute();
}

export function findMembershipProgram(db: Queryable, clientId: string, id: string): Promise<MembershipProgramRow | undefined> {
  return db.selectFrom('membership_programs').selectAll().where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
}

export function findMembershipProgramByName(db: Queryable, clientId: string, name: string): Promise<MembershipProgramRow | undefined> {
  return db
    .selectFrom('membership_programs')
    .selectAll()
    .where('client_id', '=', clientId)
    .where(sql<boolean>`lower(name) = lower(${name})`)
    .executeTakeFirst();
}

export function findDefaultMembershipProgram(db: Queryable, clientId: string): Promise<MembershipProgramRow | undefined> {
  return db.selectFrom('membership_programs').selectAll().where('client_id', '=', clientId).where('is_default', '=', true).executeTakeFirst();
}

// ---- customers ----

/** Every customer column, with the date read as YYYY-MM-DD text rather than a local-time Date. */
const customerColumns = [
  'client_id',
  'id',
  'type',
  'email',
  'phone_number',
  'phone_country_code',
  'membership_program_id',
  'onboarding_id',
  'onboarding_status',
  'first_name',
  'middle_name',
  'last_name',
  'sex',
  sql<string | null>`to_char(birth_date, 'YYYY-MM-DD')`.as('birth_date'),
  'nationality',
  'tax_id_country',
  'occupation',
  'ip_address',
  'ssn_ciphertext',
  'ssn_last4',
  'document_id_card_ciphertext',
  'document_license_ciphertext',
  'document_passport_ciphertext',
  'kyb',
  'main_address',
  'billing_address',
  'delivery_address',
  'created_at',
  'updated_at',
] as const;

export function customersQuery(db: Queryable, clientId: string) {
  return db.selectFrom('customers').select(customerColumns).where('client_id', '=', clientId);
}

export function findCustomer(db: Queryable, clientId: string, id: string): Promise<CustomerRow | undefined> {
  return customersQuery(db, clientId).where('id', '=', id).executeTakeFirst();
}

/** Reads the customer and locks its row until the transaction ends (serialises writes that depend on it). */
export function lockCustomer(tx: Tx, clientId: string, id: string): Promise<CustomerRow | undefined> {
  return customersQuery(tx, clientId).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function findCustomerIdByEmail(db: Queryable, clientId: string, email: string, exceptId?: string): Promise<{ id: string } | undefined> {
  let query = db
    .selectFrom('customers')
    .select('id')
    .where('client_id', '=', clientId)
    .where(sql<boolean>`lower(email) = lower(${email})`);
  if (exceptId) query = query.where('id', '<>', exceptId);
  return query.executeTakeFirst();
}

export async function insertCustomer(tx: Tx, row: Insertable<CustomersTable>): Promise<void> {
  await tx.insertInto('customers').values(row).execute();
}

export async function updateCustomer(tx: Tx, clientId: string, id: string, changes: Updateable<CustomersTable>): Promise<void> {
  await tx.updateTable('customers').set(changes).where('client_id', '=', clientId).where('id', '=', id).execute();
}

// ---- portfolios and wallets ----

export async function insertPortfolio(tx: Tx, row: Insertable<PortfoliosTable>): Promise<void> {
  await tx.insertInto('portfolios').values(row).execute();
}

export async function insertWallet(tx: Tx, row: Insertable<WalletsTable>): Promise<void> {
  await tx.insertInto('wallets').values(row).execute();
}

export function portfoliosQuery(db: Queryable, clientId: string, customerId: string) {
  return db.selectFrom('portfolios').selectAll().where('client_id', '=', clientId).where('customer_id', '=', customerId);
}

export function findPortfolio(db: Queryable, clientId: string, customerId: string, portfolioId: string): Promise<PortfolioRow | undefined> {
  return portfoliosQuery(db, clientId, customerId).where('id', '=', portfolioId).executeTakeFirst();
}

export function findPortfolioById(db: Queryable, clientId: string, portfolioId: string): Promise<PortfolioRow | undefined> {
  return db.selectFrom('portfolios').selectAll().where('client_id', '=', clientId).where('id', '=', portfolioId).executeTakeFirst();
}

/** Every portfolio of the given customers, oldest first (the default portfolio leads). */
export function portfoliosOfCustomers(db: Queryable, clientId: string, customerIds: readonly string[]): Promise<PortfolioRow[]> {
  if (customerIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('portfolios')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('customer_id', 'in', customerIds)
    .orderBy('id')
    .execute();
}

/** The wallet ids of the given portfolios, oldest first. */
export function walletIdsOfPortfolios(db: Queryable, clientId: string, portfolioIds: readonly string[]): Promise<Array<{ id: string; portfolio_id: string }>> {
  if (portfolioIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('wallets')
    .select(['id', 'portfolio_id'])
    .where('client_id', '=', clientId)
    .where('portfolio_id', 'in', portfolioIds)
    .orderBy('id')
    .execute();
}

export async function countPortfolios(db: Queryable, clientId: string, customerId: string): Promise<number> {
  const row = await db
    .selectFrom('portfolios')
    .select(sql<string>`count(*)`.as('count'))
    .where('client_id', '=', clientId)
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export async function countWalletsOfPortfolio(db: Queryable, clientId: string, portfolioId: string): Promise<number> {
  const row = await db
    .selectFrom('wallets')
    .select(sql<string>`count(*)`.as('count'))
    .where('client_id', '=', clientId)
    .where('portfolio_id', '=', portfolioId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export function walletsQuery(db: Queryable, clientId: string) {
  return db.selectFrom('wallets').selectAll().where('client_id', '=', clientId);
}

export function findWallet(db: Queryable, clientId: string, walletId: string): Promise<WalletRow | undefined> {
  return walletsQuery(db, clientId).where('id', '=', walletId).executeTakeFirst();
}

export function primaryWalletOf(db: Queryable, clientId: string, customerId: string): Promise<WalletRow | undefined> {
  return walletsQuery(db, clientId).where('customer_id', '=', customerId).where('is_primary', '=', true).executeTakeFirst();
}

// ---- business person relations ----

const relationColumns = [
  'client_id',
  'id',
  'business_customer_id',
  'person_customer_id',
  'role',
  sql<string | null>`ownership_percentage::text`.as('ownership_percentage'),
  sql<string | null>`to_char(representing_start, 'YYYY-MM-DD')`.as('representing_start'),
  sql<string | null>`to_char(representing_end, 'YYYY-MM-DD')`.as('representing_end'),
  'created_at',
  'updated_at',
] as const;

export function relationsOfBusiness(db: Queryable, clientId: string, businessId: string): Promise<RelationRow[]> {
  return db
    .selectFrom('business_person_relations')
    .select(relationColumns)
    .where('client_id', '=', clientId)
    .where('business_customer_id', '=', businessId)
    .orderBy('id')
    .execute();
}

export async function insertRelation(tx: Tx, row: Insertable<BusinessPersonRelationsTable>): Promise<void> {
  await tx.insertInto('business_person_relations').values(row).execute();
}

export async function updateRelation(tx: Tx, clientId: string, id: string, changes: Updateable<BusinessPersonRelationsTable>): Promise<void> {
  await tx.updateTable('business_person_relations').set(changes).where('client_id', '=', clientId).where('id', '=', id).execute();
}

export async function deleteRelation(tx: Tx, clientId: string, id: string): Promise<void> {
  await tx.deleteFrom('business_person_relations').where('client_id', '=', clientId).where('id', '=', id).execute();
}

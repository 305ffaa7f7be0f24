import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { ComplianceDocumentsTable, OnboardingsTable } from './compliance.tables.js';
import type { OnboardingKind, OnboardingStatus, OnboardingStrategy } from './onboarding.js';
import { scheduleTimer } from '../timers/index.js';
import './compliance.tables.js';

/**
 * The SQL of the compliance module. Its own tables, plus the two columns of customers it owns
 * by contract (onboarding_id, onboarding_status), the row lock it needs on a customer, and a
 * read of business relations. Every query is scoped by client_id except the token lookup.
 */

type Queryable = Db | Tx;

export type OnboardingRow = Selectable<OnboardingsTable>;
export type DocumentRow = Omit<Selectable<ComplianceDocumentsTable>, 'content'>;

// ---- settings ----

export async function findStrategy(db: Queryable, clientId: string): Promise<OnboardingStrategy | undefined> {
  const row = await db.selectFrom('compliance_settings').select('onboarding_strategy').where('client_id', '=', clientId).executeTakeFirst();
  return row?.onboarding_strategy;
}

export async function saveStrategy(tx: Tx, clientId: string, strategy: OnboardingStrategy, now: Date): Promise<void> {
  await tx
    .insertInto('compliance_settings')
    .values({ client_id: clientId, onboarding_strategy: strategy, updated_at: now })
    .onConflict((conflict) => conflict.column('client_id').doUpdateSet({ onboarding_strategy: strategy, updated_at: now }))
    .execute();
}

// ---- customers (the columns compliance owns, and the row lock) ----

/** Locks the customer row for the rest of the transaction: every compliance write on a customer starts here. */
export async function lockCustomer(tx: Tx, clientId: string, customerId: string): Promise<boolean> {
  const row = await tx.selectFrom('customers').select('id').where('client_id', '=', clientId).where('id', '=', customerId).forUpdate().executeTakeFirst();
  return row !== undefined;
}

export async function setCustomerOnboarding(tx: Tx, clientId: string, customerId: string, onboardingId: string, status: OnboardingStatus, now: Date): Promise<void> {
  await tx
    .updateTable('customers')
    .set({ onboarding_id: onboardingId, onboarding_status: status, updated_at: now })
    .where('client_id', '=', clientId)
    .where('id', '=', customerId)
    .execute();
}

// ---- onboardings ----

/** The timer that expires an onboarding's SDK link when its deadline passes by the client's clock. */
export const linkExpiryTimerKind = 'kyc-link.expire';

/** Inserts the onboarding and, when it waits on an SDK link, the timer that expires the link. */
export async function insertOnboarding(tx: Tx, row: Insertable<OnboardingsTable>): Promise<void> {
  await tx.insertInto('onboardings').values(row).execute();
  if (row.status === 'PENDING' && row.sdk_expires_at) {
    await scheduleTimer(tx, { clientId: row.client_id, kind: linkExpiryTimerKind, subjectId: row.id, dueAt: new Date(row.sdk_expires_at), now: new Date(row.created_at) });
  }
}

export function findOnboarding(db: Queryable, clientId: string, id: string): Promise<OnboardingRow | undefined> {
  return db.selectFrom('onboardings').selectAll().where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
}

export function lockOnboarding(tx: Tx, clientId: string, id: string): Promise<OnboardingRow | undefined> {
  return tx.selectFrom('onboardings').selectAll().where('client_id', '=', clientId).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The onboarding behind a hosted-page token (any client: the token hash is 256 random bits). */
export function findOnboardingByTokenHash(db: Queryable, tokenSha256: Buffer): Promise<OnboardingRow | undefined> {
  return db.selectFrom('onboardings').selectAll().where('sdk_token_sha256', '=', tokenSha256).executeTakeFirst();
}

/** The customer's newest onboarding of a kind that was not archived by a re-run. */
export function latestOnboarding(db: Queryable, clientId: string, customerId: string, kind: OnboardingKind): Promise<OnboardingRow | undefined> {
  return db
    .selectFrom('onboardings')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('customer_id', '=', customerId)
    .where('kind', '=', kind)
    .where('status', '!=', 'ARCHIVED')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function updateOnboarding(tx: Tx, row: OnboardingRow, changes: Updateable<OnboardingsTable>): Promise<OnboardingRow> {
  const updated = await tx
    .updateTable('onboardings')
    .set(changes)
    .where('client_id', '=', row.client_id)
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return updated;
}


// ---- documents ----

export async function insertDocument(tx: Tx, row: Insertable<ComplianceDocumentsTable>): Promise<void> {
  await tx.insertInto('compliance_documents').values(row).execute();
}

export async function documentTypesOf(db: Queryable, clientId: string, customerId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('compliance_documents')
    .select('document_type')
    .distinct()
    .where('client_id', '=', clientId)
    .where('customer_id', '=', customerId)
    .execute();
  return new Set(rows.map((row) => row.document_type));
}

export function findDocument(db: Queryable, clientId: string, id: string) {
  return db.selectFrom('compliance_documents').selectAll().where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
}

// ---- sandbox overrides ----

export async function overridesOf(db: Queryable, clientId: string, customerId: string): Promise<Map<string, boolean>> {
  const rows = await db
    .selectFrom('compliance_check_overrides')
    .select(['check_name', 'passed'])
    .where('client_id', '=', clientId)
    .where('customer_id', '=', customerId)
    .execute();
  return new Map(rows.map((row) => [row.check_name, row.passed]));
}

export async function saveOverride(tx: Tx, clientId: string, customerId: string, checkName: string, passed: boolean, now: Date): Promise<void> {
  await tx
    .insertInto('compliance_check_overrides')
    .values({ client_id: clientId, customer_id: customerId, check_name: checkName, passed, updated_at: now })
    .onConflict((conflict) => conflict.columns(['client_id', 'customer_id', 'check_name']).doUpdateSet({ passed, updated_at: now }))
    .execute();
}

// ---- business relations (read only; the customers module owns them) ----

export interface RelatedPerson {
  personId: string;
  role: 'SHAREHOLDER' | 'REPRESENTATIVE';
  onboardingStatus: string | null;
  /** The relation's representingRange (`YYYY-MM-DD`), when it has one. */
  representingStart: string | null;
  representingEnd: string | null;
}

export function relatedPersonsOf(db: Queryable, clientId: string, businessId: string): Promise<RelatedPerson[]> {
  return db
    .selectFrom('business_person_relations as relation')
    .innerJoin('customers as person', (join) =>
      join.onRef('person.client_id', '=', 'relation.client_id').onRef('person.id', '=', 'relation.person_customer_id'),
    )
    .select([
      'relation.person_customer_id as personId',
      'relation.role as role',
      'person.onboarding_status as onboardingStatus',
      // A date column comes back as a JavaScript Date (midnight where the process runs); as text it is the day itself.
      sql<string | null>`to_char(relation.representing_start, 'YYYY-MM-DD')`.as('representingStart'),
      sql<string | null>`to_char(relation.representing_end, 'YYYY-MM-DD')`.as('representingEnd'),
    ])
    .where('relation.client_id', '=', clientId)
    .where('relation.business_customer_id', '=', businessId)
    .orderBy('relation.id')
    .execute();
}

/** Businesses the person is related to whose KYB is running: they are reviewed again when the person's KYC ends. */
export async function businessesWithLiveKybFor(db: Queryable, clientId: string, personId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('business_person_relations as relation')
    .innerJoin('onboardings as kyb', (join) =>
      join.onRef('kyb.client_id', '=', 'relation.client_id').onRef('kyb.customer_id', '=', 'relation.business_customer_id'),
    )
    .select('relation.business_customer_id as businessId')
    .distinct()
    .where('relation.client_id', '=', clientId)
    .where('relation.person_customer_id', '=', personId)
    .where('kyb.kind', '=', 'KYB')
    .where('kyb.status', 'in', ['PENDING', 'PROCESSING'])
    .orderBy('relation.business_customer_id')
    .execute();
  return rows.map((row) => row.businessId);
}

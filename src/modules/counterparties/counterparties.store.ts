import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { CounterpartiesTable } from './counterparties.tables.js';
import './counterparties.tables.js';

/** The SQL of the counterparties module: its own table only, every query scoped by client_id. */

type Queryable = Db | Tx;

export type CounterpartyRow = Selectable<CounterpartiesTable>;

export async function insertCounterparty(tx: Tx, row: Insertable<CounterpartiesTable>): Promise<void> {
  await tx.insertInto('counterparties').values(row).execute();
}

export async function updateCounterparty(tx: Tx, clientId: string, id: string, changes: Updateable<CounterpartiesTable>): Promise<void> {
  await tx.updateTable('counterparties').set(changes).where('client_id', '=', clientId).where('id', '=', id).execute();
}

export async function deleteCounterparty(tx: Tx, clientId: string, id: string): Promise<void> {
  await tx.deleteFrom('counterparties').where('client_id', '=', clientId).where('id', '=', id).execute();
}

export function findCounterparty(db: Queryable, clientId: string, id: string): Promise<CounterpartyRow | undefined> {
  return db.selectFrom('counterparties').selectAll().where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
}

/** Locks the row for an update or a delete. */
export function lockCounterparty(tx: Tx, clientId: string, id: string): Promise<CounterpartyRow | undefined> {
  return tx.selectFrom('counterparties').selectAll().where('client_id', '=', clientId).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function counterpartiesOfPortfolio(db: Queryable, clientId: string, portfolioId: string) {
  return db.selectFrom('counterparties').selectAll().where('client_id', '=', clientId).where('portfolio_id', '=', portfolioId);
}

/** Serialises creations in one portfolio for the rest of the transaction, so its count stays within the limit. */
export async function lockPortfolioCounterparties(tx: Tx, clientId: string, portfolioId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`counterparties/${clientId}/${portfolioId}`}, 0))`.execute(tx);
}

export async function countCounterpartiesOfPortfolio(tx: Tx, clientId: string, portfolioId: string): Promise<number> {
  const row = await tx
    .selectFrom('counterparties')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('client_id', '=', clientId)
    .where('portfolio_id', '=', portfolioId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

import type { Insertable, Selectable, Updateable } from 'kysely';
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

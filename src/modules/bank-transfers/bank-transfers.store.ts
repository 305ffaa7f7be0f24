import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { BankTransactionsTable, BankTransfersTable } from './bank-transfers.tables.js';
import { scheduleTimer } from '../timers/index.js';
import './bank-transfers.tables.js';

/** The SQL of the bank-transfers module: its own tables only, every query scoped by client_id. */

type Queryable = Db | Tx;

export type BankTransferRow = Selectable<BankTransfersTable>;
export type BankTransactionRow = Selectable<BankTransactionsTable>;

/** The timer that applies a pending payment's planned outcome when it is due by the client's clock. */
export const settlementTimerKind = 'bank-transfer.settle';

/** Inserts the transfer and, when the rail planned its outcome, the timer that applies it. */
export async function insertBankTransfer(tx: Tx, row: Insertable<BankTransfersTable>): Promise<void> {
  await tx.insertInto('bank_transfers').values(row).execute();
  if (row.status === 'PENDING' && row.settle_at) {
    await scheduleTimer(tx, { clientId: row.client_id, kind: settlementTimerKind, subjectId: row.id, dueAt: new Date(row.settle_at), now: new Date(row.created_at) });
  }
}

export async function insertBankTransaction(tx: Tx, row: Insertable<BankTransactionsTable>): Promise<void> {
  await tx.insertInto('bank_transactions').values(row).execute();
}

export async function updateBankTransfer(tx: Tx, clientId: string, id: string, changes: Updateable<BankTransfersTable>): Promise<void> {
  await tx.updateTable('bank_transfers').set(changes).where('client_id', '=', clientId).where('id', '=', id).execute();
}

export function findBankTransfer(db: Queryable, clientId: string, id: string): Promise<BankTransferRow | undefined> {
  return db.selectFrom('bank_transfers').selectAll().where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
}

/** Locks the bank transfer row for a change of state (settlement, failure). */
export function lockBankTransfer(tx: Tx, clientId: string, id: string): Promise<BankTransferRow | undefined> {
  return tx.selectFrom('bank_transfers').selectAll().where('client_id', '=', clientId).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function findBankTransaction(db: Queryable, clientId: string, id: string): Promise<BankTransactionRow | undefined> {
  return db.selectFrom('bank_transactions').selectAll().where('client_id', '=', clientId).where('id', '=', id).executeTakeFirst();
}

/** The children of the given transfers, oldest first. */
export function childrenOf(db: Queryable, clientId: string, transferIds: readonly string[]): Promise<BankTransactionRow[]> {
  if (transferIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('bank_transactions')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('bank_transfer_id', 'in', transferIds)
    .orderBy('id')
    .execute();
}

export function bankTransfersQuery(db: Queryable, clientId: string) {
  return db.selectFrom('bank_transfers').selectAll().where('client_id', '=', clientId);
}

/** The next value of the shared trace sequence (ACH trace numbers, Fedwire IMADs). */
export async function nextTraceSerial(tx: Tx): Promise<bigint> {
  const result = await sql<{ serial: string }>`SELECT nextval('bank_trace_serial')::text AS serial`.execute(tx);
  const serial = result.rows[0]?.serial;
  if (serial === undefined) throw new Error('the bank trace sequence returned no value');
  return BigInt(serial);
}

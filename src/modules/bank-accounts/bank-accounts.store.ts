import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { WalletRow } from '../customers/index.js';
import { accountNumberKinds, accountSerialFor, formatAccountNumber, type AccountNumberKind } from './account-numbers.js';

/**
 * The bank numbers of wallets. They live in the customers module's wallets table
 * (virtual_account_number is written by the virtual-accounts module; dedicated_account_number
 * and vrn by this one), and every query here is scoped by client_id but nextAccountNumber's
 * check that a number is free, which must look at every client's wallets.
 */

type Queryable = Db | Tx;

const columns: Record<AccountNumberKind, 'dedicated_account_number' | 'vrn'> = { DEDICATED: 'dedicated_account_number', VRN: 'vrn' };

/**
 * The next number of the kind: the next value of its shared sequence (outside the transaction's
 * rollback: never reused), through the kind's keyed permutation (account-numbers.ts). Permuted
 * numbers never repeat each other, but one may equal a number given before serials were permuted
 * (the bare sequence value), so a number some wallet of any client already holds is passed over
 * for the next value (a lookup on the unique index wallets_dedicated_account_number_key or
 * wallets_vrn_key). A number passed over is never shown, so looking across clients tells the
 * caller nothing about the others.
 */
export async function nextAccountNumber(tx: Tx, kind: AccountNumberKind, serialKey: Buffer): Promise<string> {
  const column = columns[kind];
  for (;;) {
    const result = await sql<{ serial: string }>`SELECT nextval(${accountNumberKinds[kind].sequence}::regclass)::text AS serial`.execute(tx);
    const serial = result.rows[0]?.serial;
    if (serial === undefined) throw new Error(`the ${kind} sequence returned no value`);
    const number = formatAccountNumber(kind, accountSerialFor(BigInt(serial), serialKey));
    const holder = await tx.selectFrom('wallets').select('id').where(column, '=', number).executeTakeFirst();
    if (!holder) return number;
  }
}

/** Sets the number when the wallet has none yet; false when another request set one first. */
export async function setAccountNumberIfUnset(tx: Tx, clientId: string, walletId: string, kind: AccountNumberKind, number: string): Promise<boolean> {
  const column = columns[kind];
  const updated = await tx
    .updateTable('wallets')
    .set({ [column]: number })
    .where('client_id', '=', clientId)
    .where('id', '=', walletId)
    .where(column, 'is', null)
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

export function findWalletByVirtualAccountNumber(db: Queryable, clientId: string, number: string): Promise<WalletRow | undefined> {
  return db.selectFrom('wallets').selectAll().where('client_id', '=', clientId).where('virtual_account_number', '=', number).executeTakeFirst();
}

/** The client's wallet that has this number as its virtual account number, dedicated account number or VRN. */
export function findWalletByAnyNumber(db: Queryable, clientId: string, number: string): Promise<WalletRow | undefined> {
  return db
    .selectFrom('wallets')
    .selectAll()
    .where('client_id', '=', clientId)
    .where((eb) => eb.or([eb('virtual_account_number', '=', number), eb('dedicated_account_number', '=', number), eb('vrn', '=', number)]))
    .executeTakeFirst();
}

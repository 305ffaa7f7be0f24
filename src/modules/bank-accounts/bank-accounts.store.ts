import type { Db } from '../../platform/db/database.js';
import { nextSequenceValue } from '../../platform/db/sequence.js';
import type { Tx } from '../../platform/db/transaction.js';
import { drawUnusedNumber } from '../../platform/unused-serial.js';
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
 * rollback: never reused), through the kind's keyed permutation (account-numbers.ts), passed over
 * while some wallet of any client already holds it (drawUnusedNumber says why; the lookup uses the
 * unique index wallets_dedicated_account_number_key or wallets_vrn_key).
 */
export function nextAccountNumber(tx: Tx, kind: AccountNumberKind, serialKey: Buffer): Promise<string> {
  const column = columns[kind];
  return drawUnusedNumber({
    nextSequenceValue: () => nextSequenceValue(tx, accountNumberKinds[kind].sequence, `the ${kind} sequence`),
    serialFor: (sequenceValue) => accountSerialFor(sequenceValue, serialKey),
    format: (serial) => formatAccountNumber(kind, serial),
    isTaken: async (number) => (await tx.selectFrom('wallets').select('id').where(column, '=', number).executeTakeFirst()) !== undefined,
    description: `${kind} number`,
  });
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

import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import '../ledger/index.js';

/**
 * Reads of the unified wallet transaction history. The records are written by the ledger, in the
 * same transaction as the money they describe; this module only reads them.
 */
export function walletTransactionsQuery(db: Db | Tx, clientId: string) {
  return db
    .selectFrom('wallet_transactions')
    .select([
      'id',
      'parent_transaction_id',
      'wallet_id',
      'type',
      'purpose',
      'operation',
      'balance_type',
      'status',
      'amount',
      'asset',
      'note',
      'card_transaction_id',
      'parent_card_transaction_id',
      'bank_transaction_id',
      'parent_bank_transaction_id',
      'crypto_transaction_id',
      'parent_crypto_transaction_id',
      'created_at',
    ])
    .where('client_id', '=', clientId);
}

export type WalletTransactionRow = Awaited<ReturnType<ReturnType<typeof walletTransactionsQuery>['executeTakeFirstOrThrow']>>;

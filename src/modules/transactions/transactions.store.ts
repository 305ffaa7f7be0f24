import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import '../ledger/index.js';
import type { LinkingColumn, WalletTransactionPurpose } from './transactions.js';

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

/** The filters of `GET /v1/transactions`, checked by the route. */
export interface WalletTransactionFilters {
  /** A wallet of the client (the route answers 404 for any other). */
  walletId?: string | undefined;
  /** Each linking filter given: its column and its id (the route refuses a value that is not an id). */
  links?: readonly { column: LinkingColumn; id: string }[];
  operation?: 'CREDIT' | 'DEBIT' | undefined;
  status?: 'PENDING' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | undefined;
  balanceType?: 'AVAILABLE' | 'RESERVED' | 'PENDING' | undefined;
  type?: string | undefined;
  /** A registry asset code (the route refuses any other). */
  asset?: string | undefined;
  purpose?: WalletTransactionPurpose | undefined;
}

/**
 * The client's records that pass the filters, for `paginate` to count and page (newest first, by
 * id). The route needs walletId or a linking filter, so each list is found through one index on
 * `(client_id, …)`: `wallet_transactions_by_wallet (client_id, wallet_id, id)` for a wallet, which
 * also gives the order, or the linking column's index. The other filters (asset and purpose
 * included) are checked on the rows that index finds, without an index of their own: one would
 * cost an entry for every record written, and a wallet's page is already read in id order from its
 * own entries (transactions-plans.test.ts).
 */
export function walletTransactionsListQuery(db: Db | Tx, clientId: string, filters: WalletTransactionFilters) {
  let select = walletTransactionsQuery(db, clientId);
  if (filters.walletId !== undefined) select = select.where('wallet_id', '=', filters.walletId);
  for (const { column, id } of filters.links ?? []) select = select.where(column, '=', id);
  if (filters.operation !== undefined) select = select.where('operation', '=', filters.operation);
  if (filters.status !== undefined) select = select.where('status', '=', filters.status);
  if (filters.balanceType !== undefined) select = select.where('balance_type', '=', filters.balanceType);
  if (filters.type !== undefined) select = select.where('type', '=', filters.type);
  if (filters.asset !== undefined) select = select.where('asset', '=', filters.asset);
  if (filters.purpose !== undefined) select = select.where('purpose', '=', filters.purpose);
  return select;
}

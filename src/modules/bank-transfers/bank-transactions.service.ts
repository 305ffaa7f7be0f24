import type { Db } from '../../platform/db/database.js';
import { notFound } from '../../platform/http/errors.js';
import { paginate, type ListQuery, type Pagination } from '../../platform/http/pagination.js';
import { isUuid } from '../../platform/ids.js';
import { findCustomer, findWallet } from '../customers/index.js';
import { bankTransactionView, bankTransferGroupView, type BankTransactionView, type BankTransferGroupView } from './bank-transfer.js';
import type { BankNetwork, BankTransactionType, BankTransferStatus } from './bank-transfers.tables.js';
import * as store from './bank-transfers.store.js';

/**
 * GET /v1/baas/transactions/:id: one child record. A parent id (parentBankTransactionId)
 * answers its latest child, that is the payment's current state. 404 for anything else,
 * including another client's ids and malformed ids.
 */
export async function getBankTransaction(db: Db, clientId: string, id: string): Promise<BankTransactionView> {
  if (!isUuid(id)) throw notFound('Bank transaction');
  const child = await store.findBankTransaction(db, clientId, id);
  const transfer = await store.findBankTransfer(db, clientId, child?.bank_transfer_id ?? id);
  if (!transfer) throw notFound('Bank transaction');
  if (child) return bankTransactionView(transfer, child);
  const children = await store.childrenOf(db, clientId, [transfer.id]);
  const latest = children[children.length - 1];
  if (!latest) throw notFound('Bank transaction');
  return bankTransactionView(transfer, latest);
}

export interface BankTransactionFilters extends ListQuery {
  walletId?: string | undefined;
  customerId?: string | undefined;
  userId?: string | undefined;
  portfolioId?: string | undefined;
  type?: BankTransactionType | 'DEPOSIT' | 'WITHDRAWAL' | undefined;
  status?: BankTransferStatus | undefined;
  bankNetwork?: BankNetwork | undefined;
}

/**
 * GET /v1/baas/transactions: bank transfers, newest first, each with its current state and its
 * children (oldest first). A walletId, customerId (or userId) or portfolioId that is not one of
 * the client's answers 404. `type` DEPOSIT or WITHDRAWAL selects a direction; one of the six
 * record types selects the payments whose latest record has that type.
 */
export async function listBankTransfers(db: Db, clientId: string, filters: BankTransactionFilters): Promise<{ data: BankTransferGroupView[]; pagination: Pagination }> {
  let query = store.bankTransfersQuery(db, clientId);
  if (filters.walletId !== undefined) {
    const wallet = await findWallet(db, clientId, filters.walletId);
    if (!wallet) throw notFound('Wallet', 'walletId');
    query = query.where('wallet_id', '=', wallet.id);
  }
  // customerId and userId name the same filter; two different customers match nothing (an empty
  // page rather than a guess), after each is checked like any filter and the paging too.
  for (const [field, id] of [['customerId', filters.customerId], ['userId', filters.userId]] as const) {
    if (id === undefined) continue;
    const customer = await findCustomer(db, clientId, id);
    if (!customer) throw notFound('Customer', field);
    query = query.where('customer_id', '=', customer.id);
  }
  if (filters.portfolioId !== undefined) {
    // An existence check only (the customers module offers no lookup of a portfolio by id alone).
    const portfolioId = filters.portfolioId.toLowerCase();
    const known = isUuid(portfolioId)
      ? await db.selectFrom('portfolios').select('id').where('client_id', '=', clientId).where('id', '=', portfolioId).executeTakeFirst()
      : undefined;
    if (!known) throw notFound('Portfolio', 'portfolioId');
    query = query.where('portfolio_id', '=', portfolioId);
  }
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.bankNetwork !== undefined) query = query.where('bank_network', '=', filters.bankNetwork);
  const type = filters.type;
  if (type === 'DEPOSIT' || type === 'WITHDRAWAL') {
    query = query.where('direction', '=', type);
  } else if (type !== undefined) {
    {
      query = query.where((eb) =>
        eb(
          eb
            .selectFrom('bank_transactions as latest')
            .select('latest.type')
            .whereRef('latest.client_id', '=', 'bank_transfers.client_id')
            .whereRef('latest.bank_transfer_id', '=', 'bank_transfers.id')
            .orderBy('latest.id', 'desc')
            .limit(1),
          '=',
          type,
        ),
      );
    }
  }
  const { rows, pagination } = await paginate(db, query, filters, { id: 'bank_transfers.id', createdAt: 'bank_transfers.created_at' });
  const children = await store.childrenOf(
    db,
    clientId,
    rows.map((row) => row.id),
  );
  const byTransfer = new Map<string, store.BankTransactionRow[]>();
  for (const child of children) {
    const list = byTransfer.get(child.bank_transfer_id) ?? [];
    list.push(child);
    byTransfer.set(child.bank_transfer_id, list);
  }
  return { data: rows.map((row) => bankTransferGroupView(row, byTransfer.get(row.id) ?? [])), pagination };
}

import { assert } from '../../platform/assert.js';
import { formatAmount } from '../../platform/money/amount.js';
import { findAsset } from '../../platform/money/assets.js';
import type { WalletTransactionRow } from './transactions.store.js';

/** The query filters that link a wallet transaction to its parent or to a bank, card or crypto record. */
export const linkingFilters = [
  ['parentTransactionId', 'parent_transaction_id'],
  ['cardTransactionId', 'card_transaction_id'],
  ['parentCardTransactionId', 'parent_card_transaction_id'],
  ['bankTransactionId', 'bank_transaction_id'],
  ['parentBankTransactionId', 'parent_bank_transaction_id'],
  ['cryptoTransactionId', 'crypto_transaction_id'],
  ['parentCryptoTransactionId', 'parent_crypto_transaction_id'],
] as const;

export type LinkingFilter = (typeof linkingFilters)[number][0];
export type LinkingColumn = (typeof linkingFilters)[number][1];

/** The purposes are the ledger's (the `purpose` filter takes them). */
export { walletTransactionPurposes, type WalletTransactionPurpose } from '../ledger/index.js';

export interface WalletTransactionView {
  id: string;
  parentTransactionId: string;
  walletId: string;
  type: string;
  purpose: string;
  operation: 'CREDIT' | 'DEBIT';
  balanceType: 'AVAILABLE' | 'RESERVED' | 'PENDING';
  status: 'PENDING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
  amount: string;
  asset: string;
  note: string | null;
  cardTransactionId: string | null;
  parentCardTransactionId: string | null;
  bankTransactionId: string | null;
  parentBankTransactionId: string | null;
  cryptoTransactionId: string | null;
  parentCryptoTransactionId: string | null;
  createdAt: string;
}

export function walletTransactionView(row: WalletTransactionRow): WalletTransactionView {
  // Records hold registry assets only; the sandbox registry is the complete one.
  const asset = findAsset(row.asset, 'sandbox');
  assert(asset, `wallet transaction ${row.id} holds an unknown asset ${row.asset}`);
  return {
    id: row.id,
    parentTransactionId: row.parent_transaction_id,
    walletId: row.wallet_id,
    type: row.type,
    purpose: row.purpose,
    operation: row.operation,
    balanceType: row.balance_type,
    status: row.status,
    amount: formatAmount(BigInt(row.amount), asset),
    asset: row.asset,
    note: row.note,
    cardTransactionId: row.card_transaction_id,
    parentCardTransactionId: row.parent_card_transaction_id,
    bankTransactionId: row.bank_transaction_id,
    parentBankTransactionId: row.parent_bank_transaction_id,
    cryptoTransactionId: row.crypto_transaction_id,
    parentCryptoTransactionId: row.parent_crypto_transaction_id,
    createdAt: row.created_at.toISOString(),
  };
}

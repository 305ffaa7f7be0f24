import type { Numeric } from '../../platform/db/schema.js';
import type { AccountKind, BalanceType, HoldStatus, LedgerTransferKind, PendingCreditStatus, SystemAccountKind } from './ledger.js';

export interface LedgerAccountsTable {
  client_id: string;
  id: string;
  kind: AccountKind;
  wallet_id: string | null;
  shard: number;
  asset: string;
  available: Numeric;
  reserved: Numeric;
  pending: Numeric;
  overdrawn: Numeric;
  created_at: Date;
}

export interface LedgerHoldsTable {
  client_id: string;
  id: string;
  account_id: string;
  asset: string;
  status: HoldStatus;
  amount_placed: Numeric;
  amount_remaining: Numeric;
  amount_captured: Numeric;
  amount_over_captured: Numeric;
  amount_released: Numeric;
  shortfall: Numeric;
  expires_at: Date | null;
  parent_transaction_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface LedgerPendingCreditsTable {
  client_id: string;
  id: string;
  account_id: string;
  asset: string;
  source_kind: SystemAccountKind;
  status: PendingCreditStatus;
  amount: Numeric;
  parent_transaction_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface LedgerTransfersTable {
  client_id: string;
  id: string;
  kind: LedgerTransferKind;
  parent_transaction_id: string | null;
  hold_id: string | null;
  pending_credit_id: string | null;
  description: string | null;
  /** The trace id of the request or job that made it (NULL for transfers written before migration 0031). */
  trace_id: string | null;
  created_at: Date;
}

export interface LedgerEntriesTable {
  client_id: string;
  transfer_id: string;
  entry_index: number;
  asset: string;
  amount: Numeric;
  debit_account_id: string;
  debit_balance: BalanceType;
  credit_account_id: string;
  credit_balance: BalanceType;
  created_at: Date;
}

export interface WalletTransactionsTable {
  client_id: string;
  id: string;
  parent_transaction_id: string;
  wallet_id: string;
  ledger_transfer_id: string;
  type: string;
  purpose: string;
  operation: 'CREDIT' | 'DEBIT';
  balance_type: BalanceType;
  status: 'PENDING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
  amount: Numeric;
  asset: string;
  note: string | null;
  card_transaction_id: string | null;
  parent_card_transaction_id: string | null;
  bank_transaction_id: string | null;
  parent_bank_transaction_id: string | null;
  crypto_transaction_id: string | null;
  parent_crypto_transaction_id: string | null;
  created_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    ledger_accounts: LedgerAccountsTable;
    ledger_holds: LedgerHoldsTable;
    ledger_pending_credits: LedgerPendingCreditsTable;
    ledger_transfers: LedgerTransfersTable;
    ledger_entries: LedgerEntriesTable;
    wallet_transactions: WalletTransactionsTable;
  }
}

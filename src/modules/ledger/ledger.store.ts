import { sql } from 'kysely';
import type { Tx } from '../../platform/db/transaction.js';
import type { AccountKind, BalanceType, HoldStatus, LedgerTransferKind, PendingCreditStatus, SystemAccountKind } from './ledger.js';
import './ledger.tables.js';

/**
 * The ledger's SQL. Every statement works on many rows at once (arrays passed as parameters and
 * expanded with unnest), so a batch of operations costs the same number of round trips as one.
 */

export interface AccountRow {
  client_id: string;
  id: string;
  kind: AccountKind;
  wallet_id: string | null;
  asset: string;
  available: string;
  reserved: string;
  pending: string;
  overdrawn: string;
}

export interface AccountKey {
  clientId: string;
  id: string;
}

/** Locks the accounts (in id order, so concurrent transactions never wait on each other in a cycle) and reads them. */
export async function lockAccounts(tx: Tx, keys: readonly AccountKey[]): Promise<AccountRow[]> {
  if (keys.length === 0) return [];
  const result = await sql<AccountRow>`
    SELECT client_id, id, kind, wallet_id, asset, available, reserved, pending, overdrawn
    FROM ledger_accounts
    WHERE (client_id, id) IN (SELECT * FROM unnest(${keys.map((key) => key.clientId)}::uuid[], ${keys.map((key) => key.id)}::uuid[]))
    ORDER BY id
    FOR NO KEY UPDATE`.execute(tx);
  return result.rows;
}

export interface NewWalletAccount {
  clientId: string;
  id: string;
  walletId: string;
  asset: string;
}

/** Creates wallet accounts that do not exist yet; an account created meanwhile by another transaction is left as is. */
export async function insertWalletAccounts(tx: Tx, accounts: readonly NewWalletAccount[], now: Date): Promise<void> {
  if (accounts.length === 0) return;
  const sorted = [...accounts].sort((a, b) => (a.id < b.id ? -1 : 1));
  await sql`
    INSERT INTO ledger_accounts (client_id, id, kind, wallet_id, shard, asset, created_at)
    SELECT client_id, id, 'WALLET', wallet_id, 0, asset, ${now}::timestamptz
    FROM unnest(
      ${sorted.map((account) => account.clientId)}::uuid[],
      ${sorted.map((account) => account.id)}::uuid[],
      ${sorted.map((account) => account.walletId)}::uuid[],
      ${sorted.map((account) => account.asset)}::text[]
    ) AS n (client_id, id, wallet_id, asset)
    ON CONFLICT DO NOTHING`.execute(tx);
}

export interface WalletAccountDelta {
  clientId: string;
  id: string;
  available: bigint;
  reserved: bigint;
  pending: bigint;
  /** The one explicit path that may take AVAILABLE below zero (a forced card completion). */
  forced: boolean;
}

/**
 * Applies balance changes to wallet accounts locked earlier in this transaction. Outside the
 * forced path, `overdrawn` can only shrink, so the table's CHECK refuses any other write that
 * would take AVAILABLE below zero. Returns the number of rows updated.
 */
export async function updateWalletAccounts(tx: Tx, deltas: readonly WalletAccountDelta[]): Promise<number> {
  if (deltas.length === 0) return 0;
  const result = await sql`
    UPDATE ledger_accounts a SET
      available = a.available + d.available,
      reserved = a.reserved + d.reserved,
      pending = a.pending + d.pending,
      overdrawn = CASE WHEN d.forced THEN GREATEST(0, -(a.available + d.available))
                       ELSE LEAST(a.overdrawn, GREATEST(0, -(a.available + d.available))) END
    FROM unnest(
      ${deltas.map((delta) => delta.clientId)}::uuid[],
      ${deltas.map((delta) => delta.id)}::uuid[],
      ${deltas.map((delta) => delta.available.toString())}::numeric[],
      ${deltas.map((delta) => delta.reserved.toString())}::numeric[],
      ${deltas.map((delta) => delta.pending.toString())}::numeric[],
      ${deltas.map((delta) => delta.forced)}::boolean[]
    ) AS d (client_id, id, available, reserved, pending, forced)
    WHERE a.client_id = d.client_id AND a.id = d.id AND a.kind = 'WALLET'`.execute(tx);
  return Number(result.numAffectedRows ?? 0n);
}

export interface SystemAccountDelta {
  clientId: string;
  id: string;
  kind: SystemAccountKind;
  shard: number;
  asset: string;
  available: bigint;
}

/**
 * Adds to system account shards, creating a shard on first use. Rows are written in id order so
 * two transactions touching the same shards lock them in the same order.
 */
export async function upsertSystemAccounts(tx: Tx, deltas: readonly SystemAccountDelta[], now: Date): Promise<void> {
  if (deltas.length === 0) return;
  const sorted = [...deltas].sort((a, b) => (a.id < b.id ? -1 : 1));
  await sql`
    INSERT INTO ledger_accounts AS a (client_id, id, kind, wallet_id, shard, asset, available, created_at)
    SELECT client_id, id, kind, NULL, shard, asset, available, ${now}::timestamptz
    FROM unnest(
      ${sorted.map((delta) => delta.clientId)}::uuid[],
      ${sorted.map((delta) => delta.id)}::uuid[],
      ${sorted.map((delta) => delta.kind)}::text[],
      ${sorted.map((delta) => delta.shard)}::smallint[],
      ${sorted.map((delta) => delta.asset)}::text[],
      ${sorted.map((delta) => delta.available.toString())}::numeric[]
    ) AS n (client_id, id, kind, shard, asset, available)
    ON CONFLICT (client_id, id) DO UPDATE SET available = a.available + EXCLUDED.available`.execute(tx);
}

export interface HoldRow {
  client_id: string;
  id: string;
  account_id: string;
  asset: string;
  status: HoldStatus;
  amount_placed: string;
  amount_remaining: string;
  amount_captured: string;
  amount_over_captured: string;
  amount_released: string;
  shortfall: string;
  expires_at: Date | null;
  parent_transaction_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function lockHolds(tx: Tx, keys: readonly AccountKey[]): Promise<HoldRow[]> {
  if (keys.length === 0) return [];
  const result = await sql<HoldRow>`
    SELECT * FROM ledger_holds
    WHERE (client_id, id) IN (SELECT * FROM unnest(${keys.map((key) => key.clientId)}::uuid[], ${keys.map((key) => key.id)}::uuid[]))
    ORDER BY id
    FOR NO KEY UPDATE`.execute(tx);
  return result.rows;
}

export interface HoldWrite {
  clientId: string;
  id: string;
  accountId: string;
  asset: string;
  status: HoldStatus;
  placed: bigint;
  remaining: bigint;
  captured: bigint;
  overCaptured: bigint;
  released: bigint;
  shortfall: bigint;
  expiresAt: Date | null;
  parentTransactionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Writes the new state of holds created or changed in this transaction (they are locked). */
export async function writeHolds(tx: Tx, holds: readonly HoldWrite[]): Promise<void> {
  if (holds.length === 0) return;
  const column = <T>(pick: (hold: HoldWrite) => T) => holds.map(pick);
  await sql`
    INSERT INTO ledger_holds AS h (client_id, id, account_id, asset, status, amount_placed, amount_remaining, amount_captured,
      amount_over_captured, amount_released, shortfall, expires_at, parent_transaction_id, created_at, updated_at)
    SELECT * FROM unnest(
      ${column((hold) => hold.clientId)}::uuid[],
      ${column((hold) => hold.id)}::uuid[],
      ${column((hold) => hold.accountId)}::uuid[],
      ${column((hold) => hold.asset)}::text[],
      ${column((hold) => hold.status)}::text[],
      ${column((hold) => hold.placed.toString())}::numeric[],
      ${column((hold) => hold.remaining.toString())}::numeric[],
      ${column((hold) => hold.captured.toString())}::numeric[],
      ${column((hold) => hold.overCaptured.toString())}::numeric[],
      ${column((hold) => hold.released.toString())}::numeric[],
      ${column((hold) => hold.shortfall.toString())}::numeric[],
      ${column((hold) => hold.expiresAt)}::timestamptz[],
      ${column((hold) => hold.parentTransactionId)}::uuid[],
      ${column((hold) => hold.createdAt)}::timestamptz[],
      ${column((hold) => hold.updatedAt)}::timestamptz[]
    )
    ON CONFLICT (client_id, id) DO UPDATE SET
      status = EXCLUDED.status,
      amount_placed = EXCLUDED.amount_placed,
      amount_remaining = EXCLUDED.amount_remaining,
      amount_captured = EXCLUDED.amount_captured,
      amount_over_captured = EXCLUDED.amount_over_captured,
      amount_released = EXCLUDED.amount_released,
      shortfall = EXCLUDED.shortfall,
      expires_at = EXCLUDED.expires_at,
      updated_at = EXCLUDED.updated_at`.execute(tx);
}

export interface PendingCreditRow {
  client_id: string;
  id: string;
  account_id: string;
  asset: string;
  source_kind: SystemAccountKind;
  status: PendingCreditStatus;
  amount: string;
  parent_transaction_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function lockPendingCredits(tx: Tx, keys: readonly AccountKey[]): Promise<PendingCreditRow[]> {
  if (keys.length === 0) return [];
  const result = await sql<PendingCreditRow>`
    SELECT * FROM ledger_pending_credits
    WHERE (client_id, id) IN (SELECT * FROM unnest(${keys.map((key) => key.clientId)}::uuid[], ${keys.map((key) => key.id)}::uuid[]))
    ORDER BY id
    FOR NO KEY UPDATE`.execute(tx);
  return result.rows;
}

export interface PendingCreditWrite {
  clientId: string;
  id: string;
  accountId: string;
  asset: string;
  sourceKind: SystemAccountKind;
  status: PendingCreditStatus;
  amount: bigint;
  parentTransactionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export async function writePendingCredits(tx: Tx, credits: readonly PendingCreditWrite[]): Promise<void> {
  if (credits.length === 0) return;
  const column = <T>(pick: (credit: PendingCreditWrite) => T) => credits.map(pick);
  await sql`
    INSERT INTO ledger_pending_credits AS p (client_id, id, account_id, asset, source_kind, status, amount, parent_transaction_id,
      created_at, updated_at)
    SELECT * FROM unnest(
      ${column((credit) => credit.clientId)}::uuid[],
      ${column((credit) => credit.id)}::uuid[],
      ${column((credit) => credit.accountId)}::uuid[],
      ${column((credit) => credit.asset)}::text[],
      ${column((credit) => credit.sourceKind)}::text[],
      ${column((credit) => credit.status)}::text[],
      ${column((credit) => credit.amount.toString())}::numeric[],
      ${column((credit) => credit.parentTransactionId)}::uuid[],
      ${column((credit) => credit.createdAt)}::timestamptz[],
      ${column((credit) => credit.updatedAt)}::timestamptz[]
    )
    ON CONFLICT (client_id, id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at`.execute(tx);
}

export interface TransferWrite {
  clientId: string;
  id: string;
  kind: LedgerTransferKind;
  parentTransactionId: string | null;
  holdId: string | null;
  pendingCreditId: string | null;
  description: string | null;
  createdAt: Date;
}

export async function insertTransfers(tx: Tx, transfers: readonly TransferWrite[]): Promise<void> {
  if (transfers.length === 0) return;
  const column = <T>(pick: (transfer: TransferWrite) => T) => transfers.map(pick);
  await sql`
    INSERT INTO ledger_transfers (client_id, id, kind, parent_transaction_id, hold_id, pending_credit_id, description, created_at)
    SELECT * FROM unnest(
      ${column((transfer) => transfer.clientId)}::uuid[],
      ${column((transfer) => transfer.id)}::uuid[],
      ${column((transfer) => transfer.kind)}::text[],
      ${column((transfer) => transfer.parentTransactionId)}::uuid[],
      ${column((transfer) => transfer.holdId)}::uuid[],
      ${column((transfer) => transfer.pendingCreditId)}::uuid[],
      ${column((transfer) => transfer.description)}::text[],
      ${column((transfer) => transfer.createdAt)}::timestamptz[]
    )`.execute(tx);
}

export interface EntryWrite {
  clientId: string;
  transferId: string;
  index: number;
  asset: string;
  amount: bigint;
  debitAccountId: string;
  debitBalance: BalanceType;
  creditAccountId: string;
  creditBalance: BalanceType;
  createdAt: Date;
}

export async function insertEntries(tx: Tx, entries: readonly EntryWrite[]): Promise<void> {
  if (entries.length === 0) return;
  const column = <T>(pick: (entry: EntryWrite) => T) => entries.map(pick);
  await sql`
    INSERT INTO ledger_entries (client_id, transfer_id, entry_index, asset, amount, debit_account_id, debit_balance,
      credit_account_id, credit_balance, created_at)
    SELECT * FROM unnest(
      ${column((entry) => entry.clientId)}::uuid[],
      ${column((entry) => entry.transferId)}::uuid[],
      ${column((entry) => entry.index)}::smallint[],
      ${column((entry) => entry.asset)}::text[],
      ${column((entry) => entry.amount.toString())}::numeric[],
      ${column((entry) => entry.debitAccountId)}::uuid[],
      ${column((entry) => entry.debitBalance)}::text[],
      ${column((entry) => entry.creditAccountId)}::uuid[],
      ${column((entry) => entry.creditBalance)}::text[],
      ${column((entry) => entry.createdAt)}::timestamptz[]
    )`.execute(tx);
}

export interface WalletTransactionWrite {
  clientId: string;
  id: string;
  parentTransactionId: string;
  walletId: string;
  ledgerTransferId: string;
  type: string;
  purpose: string;
  operation: 'CREDIT' | 'DEBIT';
  balanceType: BalanceType;
  status: 'PENDING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
  amount: bigint;
  asset: string;
  note: string | null;
  cardTransactionId: string | null;
  parentCardTransactionId: string | null;
  bankTransactionId: string | null;
  parentBankTransactionId: string | null;
  cryptoTransactionId: string | null;
  parentCryptoTransactionId: string | null;
  createdAt: Date;
}

export async function insertWalletTransactions(tx: Tx, records: readonly WalletTransactionWrite[]): Promise<void> {
  if (records.length === 0) return;
  const column = <T>(pick: (record: WalletTransactionWrite) => T) => records.map(pick);
  await sql`
    INSERT INTO wallet_transactions (client_id, id, parent_transaction_id, wallet_id, ledger_transfer_id, type, purpose, operation,
      balance_type, status, amount, asset, note, card_transaction_id, parent_card_transaction_id, bank_transaction_id,
      parent_bank_transaction_id, crypto_transaction_id, parent_crypto_transaction_id, created_at)
    SELECT * FROM unnest(
      ${column((record) => record.clientId)}::uuid[],
      ${column((record) => record.id)}::uuid[],
      ${column((record) => record.parentTransactionId)}::uuid[],
      ${column((record) => record.walletId)}::uuid[],
      ${column((record) => record.ledgerTransferId)}::uuid[],
      ${column((record) => record.type)}::text[],
      ${column((record) => record.purpose)}::text[],
      ${column((record) => record.operation)}::text[],
      ${column((record) => record.balanceType)}::text[],
      ${column((record) => record.status)}::text[],
      ${column((record) => record.amount.toString())}::numeric[],
      ${column((record) => record.asset)}::text[],
      ${column((record) => record.note)}::text[],
      ${column((record) => record.cardTransactionId)}::uuid[],
      ${column((record) => record.parentCardTransactionId)}::uuid[],
      ${column((record) => record.bankTransactionId)}::uuid[],
      ${column((record) => record.parentBankTransactionId)}::uuid[],
      ${column((record) => record.cryptoTransactionId)}::uuid[],
      ${column((record) => record.parentCryptoTransactionId)}::uuid[],
      ${column((record) => record.createdAt)}::timestamptz[]
    )`.execute(tx);
}

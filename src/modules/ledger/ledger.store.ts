import { sql, type RawBuilder } from 'kysely';
import type { Tx } from '../../platform/db/transaction.js';
import { prepared } from '../../platform/db/prepared-statements.js';
import type { RowsKind } from '../../platform/db/write-statement.js';
import type { StatementParameters } from '../../platform/db/text-statements.js';
import { walletAccountId, type AccountKind, type BalanceType, type HoldStatus, type LedgerTransferKind, type PendingCreditStatus, type SystemAccountKind } from './ledger.js';
import './ledger.tables.js';

/**
 * The ledger's SQL. Every statement works on many rows at once (arrays passed as parameters and
 * expanded with unnest), so a batch of operations costs the same number of round trips as one.
 */

export interface AccountRow {
  client_id: string;
  id: string;
  /** Where the row is: stable while this transaction holds its lock, used to update it without an index lookup. */
  ctid: string;
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
  return (await lockAccountsStatement(keys).execute(tx)).rows;
}

/**
 * The keys in lock order (by id, then client), each once. The lock statements below lock their
 * rows in the order of their keys.
 */
function inLockOrder(keys: readonly AccountKey[]): { clientIds: string[]; ids: string[] } {
  const unique = new Map<string, AccountKey>();
  for (const key of keys) unique.set(`${key.id.toLowerCase()}/${key.clientId.toLowerCase()}`, { clientId: key.clientId.toLowerCase(), id: key.id.toLowerCase() });
  const sorted = [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, key]) => key);
  return { clientIds: sorted.map((key) => key.clientId), ids: sorted.map((key) => key.id) };
}

/**
 * Each key's row, locked, looked up on its own: the locking subquery is never merged into a join,
 * so the plan is an index lookup per key whatever the table's size looked like when it was made.
 * (As `(client_id, id) IN (SELECT … unnest …)`, a generic plan made on a small table read the
 * table whole and hashed the keys.)
 */
function lockedByKey<Row>(table: string, columns: RawBuilder<unknown>, keys: readonly AccountKey[]): RawBuilder<Row> {
  const { clientIds, ids } = inLockOrder(keys);
  return prepared(sql<Row>`
    SELECT r.* FROM unnest(${clientIds}::uuid[], ${ids}::uuid[]) AS k (client_id, id)
    CROSS JOIN LATERAL (SELECT ${columns} FROM ${sql.table(table)} t WHERE t.client_id = k.client_id AND t.id = k.id FOR NO KEY UPDATE) AS r`);
}

/** An AccountRow's columns of `ledger_accounts t`; the amounts as text, exact in JSON too. */
const accountRowColumnsText = `t.client_id, t.id, t.ctid::text AS ctid, t.kind, t.wallet_id, t.asset, t.available::text AS available, t.reserved::text AS reserved,
  t.pending::text AS pending, t.overdrawn::text AS overdrawn`;
const accountRowColumns = sql.raw(accountRowColumnsText);

export function lockAccountsStatement(keys: readonly AccountKey[]): RawBuilder<AccountRow> {
  return lockedByKey<AccountRow>('ledger_accounts', accountRowColumns, keys);
}

/**
 * A subquery locking a wallet's account in one asset as `lockAccounts` does and giving its
 * AccountRow (no row when it does not exist yet), for a caller that reads it within a larger
 * statement and then passes it to the ledger (LoadOptions.locked). Written as text
 * (platform/db/text-statements.ts): its caller, the card processor's lookup, is one. The account
 * is named by its id and by what it is (the wallet, the asset), all true of the one row: on a
 * young table, where every index on client_id looks as cheap, whichever the plan takes finds the
 * wallet's few accounts, not the client's.
 */
export function lockWalletAccountText(parameters: StatementParameters, clientId: string, walletId: string, asset: string): string {
  const p = parameters.add;
  return `SELECT ${accountRowColumnsText} FROM ledger_accounts t
    WHERE t.client_id = ${p(clientId)} AND t.id = ${p(walletAccountId(clientId, walletId, asset))} AND t.kind = 'WALLET' AND t.wallet_id = ${p(walletId)} AND t.asset = ${p(asset)}
    FOR NO KEY UPDATE`;
}

export interface WalletAccountDelta {
  clientId: string;
  id: string;
  ctid: string;
  available: bigint;
  reserved: bigint;
  pending: bigint;
  /** The one explicit path that may take AVAILABLE below zero (a forced posting: a card's, a settled ACH deposit's return). */
  forced: boolean;
}

/**
 * Applies balance changes to wallet accounts locked earlier in this transaction. Outside the
 * forced path, `overdrawn` can only shrink, so the table's CHECK refuses any other write that
 * would take AVAILABLE below zero. Returns one row per account updated.
 */
export function updateWalletAccountsStatement(deltas: readonly WalletAccountDelta[]): RawBuilder<unknown> {
  return sql`
    UPDATE ledger_accounts a SET
      available = a.available + d.available,
      reserved = a.reserved + d.reserved,
      pending = a.pending + d.pending,
      overdrawn = CASE WHEN d.forced THEN GREATEST(0, -(a.available + d.available))
                       ELSE LEAST(a.overdrawn, GREATEST(0, -(a.available + d.available))) END
    FROM unnest(
      ${deltas.map((delta) => delta.ctid)}::tid[],
      ${deltas.map((delta) => delta.clientId)}::uuid[],
      ${deltas.map((delta) => delta.id)}::uuid[],
      ${deltas.map((delta) => delta.available.toString())}::numeric[],
      ${deltas.map((delta) => delta.reserved.toString())}::numeric[],
      ${deltas.map((delta) => delta.pending.toString())}::numeric[],
      ${deltas.map((delta) => delta.forced)}::boolean[]
    ) AS d (ctid, client_id, id, available, reserved, pending, forced)
    -- The rows are locked by this transaction, so their ctid cannot change under us; the id check
    -- makes any mistake a missing row (and the caller's row count check fails loudly).
    WHERE a.ctid = d.ctid AND a.client_id = d.client_id AND a.id = d.id
    RETURNING 1`;
}

/** A wallet account's AVAILABLE change in a batch that did not read it first (see `LedgerBatch.assumeLoaded`). */
export interface UncheckedWalletAccountDelta {
  clientId: string;
  id: string;
  /** The net change of AVAILABLE. */
  available: bigint;
  /**
   * The lowest point AVAILABLE reaches, relative to its balance before the batch, after each of the
   * batch's operations in order (zero or negative). The account must hold at least its opposite.
   */
  lowest: bigint;
  /**
   * Only credited (`lowest` is zero) and opened by this write if it does not exist yet
   * (`assumeLoaded({ openCredited: true })`); its balance is then not checked, and `opening` says
   * what the new row holds.
   */
  opening?: { walletId: string; asset: string; createdAt: Date };
}

/**
 * Applies AVAILABLE changes to wallet accounts that this transaction has not locked or read: the
 * statement locks them itself, in id order like `lockAccountsStatement` (so it waits on other
 * batches but never in a cycle with them), and updates only the accounts that exist and hold
 * enough for every operation of the batch in order (`AVAILABLE + lowest >= 0`, evaluated on the
 * latest version of the row once it is locked). An account that is missing or short (an overdrawn
 * one has AVAILABLE below zero, so it is short) is not updated; the caller's row count check then
 * fails the statement, and nothing commits. An account to open if missing (`opening`) is updated
 * whatever it holds (a credit can only shrink an overdraft), in the same pass and the same order as
 * the others, so that the batch takes every existing account it changes in one id-ordered pass;
 * until the thirty-fourth session those were written by a later part (the upsert below), so a trade batch could
 * hold an account it debits while waiting for one it credits with a lower id, and deadlock with a
 * transfer batch taking the two in id order.
 * Returns one row per account updated, with whether it was one to open.
 */
export function updateUncheckedWalletAccountsStatement(deltas: readonly UncheckedWalletAccountDelta[]): RawBuilder<unknown> {
  return sql`
    UPDATE ledger_accounts a SET
      available = a.available + d.available,
      overdrawn = CASE WHEN d.open THEN LEAST(a.overdrawn, GREATEST(0, -(a.available + d.available))) ELSE a.overdrawn END
    FROM (
      SELECT l.client_id, l.id, c.available, c.lowest, c.open
      FROM ledger_accounts l
      JOIN unnest(
        ${deltas.map((delta) => delta.clientId)}::uuid[],
        ${deltas.map((delta) => delta.id)}::uuid[],
        ${deltas.map((delta) => delta.available.toString())}::numeric[],
        ${deltas.map((delta) => delta.lowest.toString())}::numeric[],
        ${deltas.map((delta) => delta.opening !== undefined)}::boolean[]
      ) AS c (client_id, id, available, lowest, open) ON l.client_id = c.client_id AND l.id = c.id
      ORDER BY l.id
      FOR NO KEY UPDATE OF l
    ) d
    WHERE a.client_id = d.client_id AND a.id = d.id AND (d.open OR a.available + d.lowest >= 0)
    RETURNING a.id, d.open`;
}

/**
 * Opens the accounts to open (`opening`) that the update above did not find (it is named `updated`
 * here): each credited from zero, or, if another transaction opened it since this statement's
 * snapshot, added to (ON CONFLICT). Returns nothing the caller counts.
 */
function openUncheckedWalletAccountsStatement(deltas: readonly UncheckedWalletAccountDelta[], updated: string): RawBuilder<unknown> {
  const opened = deltas.filter((delta) => delta.opening !== undefined);
  return sql`
    INSERT INTO ledger_accounts AS a (client_id, id, kind, wallet_id, shard, asset, available, reserved, pending, overdrawn, created_at)
    SELECT n.client_id, n.id, 'WALLET', n.wallet_id, 0, n.asset, n.available, 0, 0, 0, n.created_at
    FROM unnest(
      ${opened.map((delta) => delta.clientId)}::uuid[],
      ${opened.map((delta) => delta.id)}::uuid[],
      ${opened.map((delta) => delta.opening?.walletId)}::uuid[],
      ${opened.map((delta) => delta.opening?.asset)}::text[],
      ${opened.map((delta) => delta.available.toString())}::numeric[],
      ${opened.map((delta) => delta.opening?.createdAt)}::timestamptz[]
    ) AS n (client_id, id, wallet_id, asset, available, created_at)
    WHERE NOT EXISTS (SELECT 1 FROM ${sql.raw(updated)} u WHERE u.id = n.id)
    ORDER BY n.id
    ON CONFLICT (client_id, id) DO UPDATE SET
      available = a.available + EXCLUDED.available,
      overdrawn = LEAST(a.overdrawn, GREATEST(0, -(a.available + EXCLUDED.available)))`;
}

export interface AccountUpsert {
  clientId: string;
  id: string;
  kind: AccountKind;
  walletId: string | null;
  shard: number;
  asset: string;
  available: bigint;
  reserved: bigint;
  pending: bigint;
  /** The account's creation moment, if this write opens it. */
  createdAt: Date;
}

/**
 * Adds to accounts this transaction has not locked, creating them on first use: system account
 * shards (which have no balance rule to check first) and wallet accounts opened by this batch
 * (credited from zero, so whatever a concurrent transaction put there meanwhile only adds to
 * them). Rows are written in id order so two transactions touching the same rows lock them in
 * the same order. Outside the forced path `overdrawn` only shrinks, as in the update above.
 */
export function upsertAccountsStatement(rows: readonly AccountUpsert[]): RawBuilder<unknown> {
  const sorted = [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));
  const column = <T>(pick: (row: AccountUpsert) => T) => sorted.map(pick);
  return sql`
    INSERT INTO ledger_accounts AS a (client_id, id, kind, wallet_id, shard, asset, available, reserved, pending, overdrawn, created_at)
    SELECT client_id, id, kind, wallet_id, shard, asset, available, reserved, pending,
      CASE WHEN kind = 'WALLET' THEN GREATEST(0, -available) ELSE 0 END, created_at
    FROM unnest(
      ${column((row) => row.clientId)}::uuid[],
      ${column((row) => row.id)}::uuid[],
      ${column((row) => row.kind)}::text[],
      ${column((row) => row.walletId)}::uuid[],
      ${column((row) => row.shard)}::smallint[],
      ${column((row) => row.asset)}::text[],
      ${column((row) => row.available.toString())}::numeric[],
      ${column((row) => row.reserved.toString())}::numeric[],
      ${column((row) => row.pending.toString())}::numeric[],
      ${column((row) => row.createdAt)}::timestamptz[]
    ) AS n (client_id, id, kind, wallet_id, shard, asset, available, reserved, pending, created_at)
    ORDER BY id
    ON CONFLICT (client_id, id) DO UPDATE SET
      available = a.available + EXCLUDED.available,
      reserved = a.reserved + EXCLUDED.reserved,
      pending = a.pending + EXCLUDED.pending,
      -- A wallet account opened overdrawn (a forced card posting, ledger operation forcePost) stays
      -- overdrawn by what it lacks; any other change can only reduce an overdraft.
      overdrawn = CASE WHEN EXCLUDED.overdrawn > 0 THEN GREATEST(0, -(a.available + EXCLUDED.available))
        ELSE LEAST(a.overdrawn, GREATEST(0, -(a.available + EXCLUDED.available))) END`;
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

/** A hold row in the shape the code works with (amounts as bigint). */
export function holdFromRow(row: HoldRow): HoldWrite {
  return {
    clientId: row.client_id,
    id: row.id,
    accountId: row.account_id,
    asset: row.asset,
    status: row.status,
    placed: BigInt(row.amount_placed),
    remaining: BigInt(row.amount_remaining),
    captured: BigInt(row.amount_captured),
    overCaptured: BigInt(row.amount_over_captured),
    released: BigInt(row.amount_released),
    shortfall: BigInt(row.shortfall),
    expiresAt: row.expires_at,
    parentTransactionId: row.parent_transaction_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function lockHolds(tx: Tx, keys: readonly AccountKey[]): Promise<HoldRow[]> {
  if (keys.length === 0) return [];
  return (await lockHoldsStatement(keys).execute(tx)).rows;
}

export function lockHoldsStatement(keys: readonly AccountKey[]): RawBuilder<HoldRow> {
  return lockedByKey<HoldRow>('ledger_holds', sql`t.*`, keys);
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
export function writeHoldsStatement(holds: readonly HoldWrite[]): RawBuilder<unknown> {
  const column = <T>(pick: (hold: HoldWrite) => T) => holds.map(pick);
  return sql`
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
      updated_at = EXCLUDED.updated_at`;
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
  return (await lockPendingCreditsStatement(keys).execute(tx)).rows;
}

export function lockPendingCreditsStatement(keys: readonly AccountKey[]): RawBuilder<PendingCreditRow> {
  return lockedByKey<PendingCreditRow>('ledger_pending_credits', sql`t.*`, keys);
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

export function writePendingCreditsStatement(credits: readonly PendingCreditWrite[]): RawBuilder<unknown> {
  const column = <T>(pick: (credit: PendingCreditWrite) => T) => credits.map(pick);
  return sql`
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
    ON CONFLICT (client_id, id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at`;
}

export interface TransferWrite {
  clientId: string;
  id: string;
  kind: LedgerTransferKind;
  parentTransactionId: string | null;
  holdId: string | null;
  pendingCreditId: string | null;
  description: string | null;
  traceId: string;
  createdAt: Date;
}

/**
 * A nullable column for a multi-array `unnest`: null instead of an array holding only nulls.
 * `unnest(a, b, …)` pads the shorter arrays with NULLs and reads a NULL array as empty, so the
 * rows are the same; PostgreSQL just has no array of nulls to parse. Most history records carry
 * none of the six link ids, and most transfers no hold, pending credit or description. Only for
 * an `unnest` that also takes a column that is never null (the ids), which sets the row count.
 */
function sparse<T>(values: (T | null)[]): (T | null)[] | null {
  return values.some((value) => value !== null) ? values : null;
}

export function insertTransfersStatement(transfers: readonly TransferWrite[]): RawBuilder<unknown> {
  const column = <T>(pick: (transfer: TransferWrite) => T) => transfers.map(pick);
  return sql`
    INSERT INTO ledger_transfers (client_id, id, kind, parent_transaction_id, hold_id, pending_credit_id, description, trace_id, created_at)
    SELECT * FROM unnest(
      ${column((transfer) => transfer.clientId)}::uuid[],
      ${column((transfer) => transfer.id)}::uuid[],
      ${column((transfer) => transfer.kind)}::text[],
      ${column((transfer) => transfer.parentTransactionId)}::uuid[],
      ${sparse(column((transfer) => transfer.holdId))}::uuid[],
      ${sparse(column((transfer) => transfer.pendingCreditId))}::uuid[],
      ${sparse(column((transfer) => transfer.description))}::text[],
      ${column((transfer) => transfer.traceId)}::text[],
      ${column((transfer) => transfer.createdAt)}::timestamptz[]
    )`;
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

export function insertEntriesStatement(entries: readonly EntryWrite[]): RawBuilder<unknown> {
  const column = <T>(pick: (entry: EntryWrite) => T) => entries.map(pick);
  return sql`
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
    )`;
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

export function insertWalletTransactionsStatement(records: readonly WalletTransactionWrite[]): RawBuilder<unknown> {
  const column = <T>(pick: (record: WalletTransactionWrite) => T) => records.map(pick);
  return sql`
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
      ${sparse(column((record) => record.note))}::text[],
      ${sparse(column((record) => record.cardTransactionId))}::uuid[],
      ${sparse(column((record) => record.parentCardTransactionId))}::uuid[],
      ${sparse(column((record) => record.bankTransactionId))}::uuid[],
      ${sparse(column((record) => record.parentBankTransactionId))}::uuid[],
      ${sparse(column((record) => record.cryptoTransactionId))}::uuid[],
      ${sparse(column((record) => record.parentCryptoTransactionId))}::uuid[],
      ${column((record) => record.createdAt)}::timestamptz[]
    )`;
}

// ---- the ledger's writes as kinds of rows (WriteStatement.addRows) ---------------------------

/** Changes to wallet accounts this transaction locked: each updated exactly once, or the statement fails. */
export const walletAccountDeltas: RowsKind<WalletAccountDelta> = {
  name: 'ledger_wallet_accounts',
  parts: (rows) => [{ name: 'ledger_wallet_accounts', statement: updateWalletAccountsStatement(rows), expectRows: rows.length }],
};

/** Changes to wallet accounts read by nobody first (`LedgerBatch.assumeLoaded`): each updated exactly once, or the statement fails. */
export const uncheckedWalletAccountDeltas: RowsKind<UncheckedWalletAccountDelta> = {
  name: 'ledger_unchecked_wallet_accounts',
  parts: (rows) => {
    const update = { name: 'ledger_unchecked_wallet_accounts', statement: updateUncheckedWalletAccountsStatement(rows) };
    const toOpen = rows.filter((row) => row.opening !== undefined).length;
    if (toOpen === 0) return [{ ...update, expectRows: rows.length }];
    return [
      update,
      // Every account not to open must have been updated (it exists and held enough).
      { name: 'ledger_unchecked_checked', statement: sql`SELECT 1 FROM ledger_unchecked_wallet_accounts WHERE NOT open`, expectRows: rows.length - toOpen },
      { name: 'ledger_unchecked_opened', statement: openUncheckedWalletAccountsStatement(rows, 'ledger_unchecked_wallet_accounts') },
    ];
  },
};

/** Additions to accounts not locked first (system account shards, accounts opened); one row per account, summed when merged. */
export const accountUpserts: RowsKind<AccountUpsert> = {
  name: 'ledger_opened_accounts',
  parts: (rows) => [{ name: 'ledger_opened_accounts', statement: upsertAccountsStatement(rows) }],
  merge: (rows) => {
    const byAccount = new Map<string, AccountUpsert>();
    for (const row of rows) {
      const key = `${row.clientId}/${row.id}`;
      const seen = byAccount.get(key);
      byAccount.set(
        key,
        seen ? { ...seen, available: seen.available + row.available, reserved: seen.reserved + row.reserved, pending: seen.pending + row.pending } : row,
      );
    }
    return [...byAccount.values()];
  },
};

export const holdWrites: RowsKind<HoldWrite> = { name: 'ledger_holds', parts: (rows) => [{ name: 'ledger_holds', statement: writeHoldsStatement(rows) }] };
export const pendingCreditWrites: RowsKind<PendingCreditWrite> = {
  name: 'ledger_pending_credits',
  parts: (rows) => [{ name: 'ledger_pending_credits', statement: writePendingCreditsStatement(rows) }],
};
export const transferWrites: RowsKind<TransferWrite> = { name: 'ledger_transfers', parts: (rows) => [{ name: 'ledger_transfers', statement: insertTransfersStatement(rows) }] };
export const entryWrites: RowsKind<EntryWrite> = { name: 'ledger_entries', parts: (rows) => [{ name: 'ledger_entries', statement: insertEntriesStatement(rows) }] };
export const walletTransactionWrites: RowsKind<WalletTransactionWrite> = {
  name: 'wallet_transactions',
  parts: (rows) => [{ name: 'wallet_transactions', statement: insertWalletTransactionsStatement(rows) }],
};

import { sql } from 'kysely';
import { prepared } from '../../platform/db/prepared-statements.js';
import { compiledOnce, compileOnly, preparedTextStatement } from '../../platform/db/text-statements.js';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import { LedgerBatch, type LoadOptions } from './ledger-batch.js';
import { holdFromRow, lockAccounts, lockWalletAccountText, type AccountRow } from './ledger.store.js';
import type {
  CaptureHoldOperation,
  ForcePostOperation,
  ClearPendingCreditOperation,
  ExpireHoldOperation,
  FailPendingCreditOperation,
  IncrementHoldOperation,
  LedgerOperation,
  PlaceHoldOperation,
  RecordPendingCreditOperation,
  ReleaseHoldOperation,
  ResultOf,
  TransferOperation,
} from './ledger-operations.js';
import { walletAccountId, type HoldStatus, type PendingCreditStatus, type SystemAccountKind, type WalletBalance } from './ledger.js';
import { assert } from '../../platform/assert.js';
import './ledger.tables.js';

/**
 * Runs one ledger operation inside the caller's transaction: lock what it touches, check it,
 * write it. Throws an AppError (and writes nothing) when the operation is refused.
 */
export async function runLedgerOperation<O extends LedgerOperation>(tx: Tx, operation: O, options: LoadOptions = {}): Promise<ResultOf<O>> {
  const [result] = await runLedgerOperations(tx, operation.now, [operation], options);
  assert(result !== undefined, 'one operation, one result');
  return result;
}

/**
 * Runs many ledger operations as one: everything they touch is locked and read together, each is
 * checked and applied in order, and all are written in one flush (a blocks call completing
 * thousands of deposits). All or nothing, like one operation.
 */
export async function runLedgerOperations<O extends LedgerOperation>(tx: Tx, now: Date, operations: readonly O[], options: LoadOptions = {}): Promise<ResultOf<O>[]> {
  const batch = new LedgerBatch(tx, now);
  for (const operation of operations) batch.declare(operation);
  await batch.load(options);
  const results = operations.map((operation) => batch.apply(operation));
  await batch.flush(options.write);
  return results;
}

type Input<O> = Omit<O, 'operation'>;

export const postTransfer = (tx: Tx, input: Input<TransferOperation>, options?: LoadOptions) =>
  runLedgerOperation(tx, { operation: 'transfer', ...input }, options);
export const placeHold = (tx: Tx, input: Input<PlaceHoldOperation>, options?: LoadOptions) =>
  runLedgerOperation(tx, { operation: 'placeHold', ...input }, options);
export const incrementHold = (tx: Tx, input: Input<IncrementHoldOperation>, options?: LoadOptions) =>
  runLedgerOperation(tx, { operation: 'incrementHold', ...input }, options);
export const captureHold = (tx: Tx, input: Input<CaptureHoldOperation>, options?: LoadOptions) =>
  runLedgerOperation(tx, { operation: 'captureHold', ...input }, options);
export const forcePost = (tx: Tx, input: Input<ForcePostOperation>, options?: LoadOptions) =>
  runLedgerOperation(tx, { operation: 'forcePost', ...input }, options);
export const releaseHold = (tx: Tx, input: Input<ReleaseHoldOperation>, options?: LoadOptions) =>
  runLedgerOperation(tx, { operation: 'releaseHold', ...input }, options);
export const expireHold = (tx: Tx, input: Input<ExpireHoldOperation>, options?: LoadOptions) =>
  runLedgerOperation(tx, { operation: 'expireHold', ...input }, options);
export const recordPendingCredit = (tx: Tx, input: Input<RecordPendingCreditOperation>, options?: LoadOptions) =>
  runLedgerOperation(tx, { operation: 'recordPendingCredit', ...input }, options);
export const clearPendingCredit = (tx: Tx, input: Input<ClearPendingCreditOperation>) =>
  runLedgerOperation(tx, { operation: 'clearPendingCredit', ...input });
export const failPendingCredit = (tx: Tx, input: Input<FailPendingCreditOperation>) =>
  runLedgerOperation(tx, { operation: 'failPendingCredit', ...input });

/** Prepared and compiled once: every card message reads its wallet's balances. */
const walletBalancesStatement = compiledOnce((clientId: string, walletId: string) =>
  compileOnly
    .selectFrom('ledger_accounts')
    .select(['asset', 'available', 'reserved', 'pending', 'overdrawn'])
    .where('client_id', '=', clientId)
    .where('kind', '=', 'WALLET')
    .where('wallet_id', '=', walletId)
    .orderBy('asset'),
);

/** Balances of a wallet in every asset it has ever held, sorted by asset. Empty when it never held any. */
export async function walletBalances(db: Db | Tx, clientId: string, walletId: string): Promise<WalletBalance[]> {
  const { rows } = await walletBalancesStatement(clientId, walletId).execute(db);
  return rows.map((row) => ({
    asset: row.asset,
    available: BigInt(row.available),
    reserved: BigInt(row.reserved),
    pending: BigInt(row.pending),
    overdrawn: BigInt(row.overdrawn),
  }));
}

/** Balances of many wallets in one query (same answer as walletBalances, per wallet, in the order given). */
export async function walletBalancesMany(db: Db | Tx, wallets: readonly { clientId: string; walletId: string }[]): Promise<WalletBalance[][]> {
  const result = await prepared(sql<{ position: number; asset: string; available: string; reserved: string; pending: string; overdrawn: string }>`
    SELECT w.position::int AS position, a.asset, a.available, a.reserved, a.pending, a.overdrawn
    FROM unnest(${wallets.map((wallet) => wallet.clientId)}::uuid[], ${wallets.map((wallet) => wallet.walletId)}::uuid[])
      WITH ORDINALITY AS w (client_id, wallet_id, position)
    JOIN ledger_accounts a ON a.client_id = w.client_id AND a.wallet_id = w.wallet_id AND a.kind = 'WALLET'
    ORDER BY w.position, a.asset`).execute(db);
  const balances: WalletBalance[][] = wallets.map(() => []);
  for (const row of result.rows) {
    balances[row.position - 1]?.push({
      asset: row.asset,
      available: BigInt(row.available),
      reserved: BigInt(row.reserved),
      pending: BigInt(row.pending),
      overdrawn: BigInt(row.overdrawn),
    });
  }
  return balances;
}

/** The balance of a system account: the sum of its shards. */
export async function systemAccountBalance(db: Db | Tx, clientId: string, kind: SystemAccountKind, asset: string): Promise<bigint> {
  const row = await db
    .selectFrom('ledger_accounts')
    .select(sql<string>`coalesce(sum(available), 0)`.as('total'))
    .where('client_id', '=', clientId)
    .where('kind', '=', kind)
    .where('asset', '=', asset)
    .executeTakeFirst();
  return BigInt(row?.total ?? '0');
}

export interface HoldView {
  id: string;
  walletId: string;
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

/**
 * A wallet's account in one asset, locked for the rest of the transaction (FOR NO KEY UPDATE), or
 * undefined when the wallet has none yet. For a caller that decides how much to move from what the
 * wallet has, then hands the row to the ledger (LoadOptions.locked): nothing changes in between.
 */
export async function lockWalletAccount(tx: Tx, clientId: string, walletId: string, asset: string): Promise<AccountRow | undefined> {
  const { rows } = await preparedTextStatement<AccountRow>((parameters) => lockWalletAccountText(parameters, clientId, walletId, asset)).execute(tx);
  return rows[0];
}

/**
 * Locks the wallet accounts of several (wallet, asset) pairs of one client at once, in the ledger's
 * lock order (by account id, as every ledger batch locks), for a transaction that then moves money
 * on them one operation at a time: taken one by one in another order, two such transactions, or
 * one and a batch, could each hold what the other waits for (a deadlock). Accounts that do not
 * exist yet are skipped.
 */
export async function lockWalletAccounts(tx: Tx, clientId: string, wallets: readonly { walletId: string; asset: string }[]): Promise<void> {
  await lockAccounts(
    tx,
    wallets.map(({ walletId, asset }) => ({ clientId, id: walletAccountId(clientId, walletId, asset) })),
  );
}

export async function findHold(db: Db | Tx, clientId: string, holdId: string): Promise<HoldView | undefined> {
  const row = await db
    .selectFrom('ledger_holds as h')
    .innerJoin('ledger_accounts as a', (join) => join.onRef('a.client_id', '=', 'h.client_id').onRef('a.id', '=', 'h.account_id'))
    .selectAll('h')
    .select('a.wallet_id')
    .where('h.client_id', '=', clientId)
    .where('h.id', '=', holdId)
    .executeTakeFirst();
  if (!row?.wallet_id) return undefined;
  const { clientId: _clientId, accountId: _accountId, ...hold } = holdFromRow(row);
  return { ...hold, walletId: row.wallet_id };
}

/** Open holds whose expiry has passed, oldest first (for the worker of the module that owns them). */
export async function findExpiredHolds(db: Db | Tx, now: Date, limit: number): Promise<{ clientId: string; holdId: string }[]> {
  const rows = await db
    .selectFrom('ledger_holds')
    .select(['client_id', 'id'])
    .where('status', '=', 'OPEN')
    .where('expires_at', 'is not', null)
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ clientId: row.client_id, holdId: row.id }));
}

export interface PendingCreditView {
  id: string;
  walletId: string;
  asset: string;
  status: PendingCreditStatus;
  amount: bigint;
  source: SystemAccountKind;
  parentTransactionId: string | null;
}

export async function findPendingCredit(db: Db | Tx, clientId: string, pendingCreditId: string): Promise<PendingCreditView | undefined> {
  const row = await db
    .selectFrom('ledger_pending_credits as p')
    .innerJoin('ledger_accounts as a', (join) => join.onRef('a.client_id', '=', 'p.client_id').onRef('a.id', '=', 'p.account_id'))
    .selectAll('p')
    .select('a.wallet_id')
    .where('p.client_id', '=', clientId)
    .where('p.id', '=', pendingCreditId)
    .executeTakeFirst();
  if (!row?.wallet_id) return undefined;
  return {
    id: row.id,
    walletId: row.wallet_id,
    asset: row.asset,
    status: row.status,
    amount: BigInt(row.amount),
    source: row.source_kind,
    parentTransactionId: row.parent_transaction_id,
  };
}

import type { Tx } from '../../platform/db/transaction.js';
import { WriteStatement } from '../../platform/db/write-statement.js';
import { transactionShard } from '../../platform/db/transaction-groups.js';
import { assert } from '../../platform/assert.js';
import { AppError, type ErrorDetail } from '../../platform/http/errors.js';
import { formatAmount } from '../../platform/money/amount.js';
import { findAsset, type Asset } from '../../platform/money/assets.js';
import { idAt } from '../../platform/ids.js';
import {
  systemAccountId,
  systemAccountShards,
  walletAccountId,
  type BalanceType,
  type HistoryInput,
  type LedgerTransferKind,
  type SystemAccountKind,
  type WalletTransactionStatus,
} from './ledger.js';
import type {
  AccountInput,
  CaptureHoldOperation,
  ForcePostOperation,
  CaptureResult,
  HoldResult,
  LedgerOperation,
  PendingCreditResult,
  ResultOf,
  TransferOperation,
  TransferResult,
  WrittenRecord,
} from './ledger-operations.js';
import * as store from './ledger.store.js';

/** Answers which of the given wallets exist (keys `${clientId}/${walletId}`). */
export type WalletsExist = (tx: Tx, wallets: { clientId: string; walletId: string }[]) => Promise<Set<string>>;

export interface LoadOptions {
  /**
   * Asked only about wallets that have no ledger account yet in the asset concerned. Without it,
   * the caller vouches that every wallet it names exists (the database's foreign key still checks).
   */
  walletsExist?: WalletsExist;
  /**
   * Where `runLedgerOperations` flushes: added to the caller's combined statement (which the caller
   * sends, with its own writes, in one round trip) instead of sent at once. Only for a caller that
   * reads nothing the batch writes before it sends the statement.
   */
  write?: WriteStatement;
  /**
   * Account rows this transaction has locked already (FOR NO KEY UPDATE or stronger) and not
   * changed since: `load()` takes them as they are instead of locking and reading them again.
   */
  locked?: { accounts?: readonly store.AccountRow[] };
}

interface WalletAccountState {
  clientId: string;
  id: string;
  /** Row location, known once the row is locked. */
  ctid: string | null;
  walletId: string;
  asset: string;
  /** The account row exists and is locked by this transaction. */
  exists: boolean;
  /** The wallet exists (an account that does not exist yet reads as all zeros). */
  walletExists: boolean;
  /** Not in the database yet, and may be opened by this batch if something is credited to it. */
  creatable: boolean;
  available: bigint;
  reserved: bigint;
  pending: bigint;
  overdrawn: bigint;
  deltaAvailable: bigint;
  deltaReserved: bigint;
  deltaPending: bigint;
  forced: boolean;
  /** An entry of this batch names the account (it must exist when the entries are written). */
  touched: boolean;
  /**
   * In a batch that did not read its accounts (`assumeLoaded`), `available` counts from zero and
   * this is the lowest it reached after any operation: the account must hold at least its opposite.
   */
  lowest: bigint;
}

interface SystemAccountState {
  clientId: string;
  id: string;
  kind: SystemAccountKind;
  shard: number;
  asset: string;
  deltaAvailable: bigint;
  touched: boolean;
}

/** A hold as this batch sees it: its row, plus whether the batch changed it. */
interface HoldState extends store.HoldWrite {
  changed: boolean;
}

/** A pending credit as this batch sees it: its row, plus whether the batch changed it. */
interface PendingCreditState extends store.PendingCreditWrite {
  changed: boolean;
}

type Side = { account: WalletAccountState; balance: BalanceType } | { account: SystemAccountState; balance: 'AVAILABLE' };

interface RecordSpec {
  wallet: WalletAccountState;
  operation: 'CREDIT' | 'DEBIT';
  balanceType: BalanceType;
  purpose: string;
  status: WalletTransactionStatus;
  amount: bigint;
}

const keyOf = (clientId: string, id: string) => `${clientId}/${id}`;

/**
 * The refusal of a movement larger than AVAILABLE. The offending field is the amount (the
 * request is well-formed; its amount is more than the wallet holds); `walletField` names the
 * wallet that lacks the money when the caller said which request field carries it.
 */
function insufficientFunds(walletField: string | undefined, asset: Asset, available: bigint, needed: bigint): AppError {
  const details: ErrorDetail[] = [
    { field: 'amount', message: walletField ? `exceeds the AVAILABLE balance of ${walletField}` : 'exceeds the AVAILABLE balance' },
  ];
  return new AppError('INSUFFICIENT_FUNDS', insufficientFundsMessage(asset, available, needed), { details });
}

/**
 * The message of every INSUFFICIENT_FUNDS refusal, for callers that check a balance without moving
 * money too: "Insufficient funds: 10.00 USD needed, 2.00 USD available." An overdrawn balance (AVAILABLE below
 * zero: a forced posting) says so, rather than "0.00 available" next to a negative balance (until
 * 2026-12-06; found by an audit).
 */
export function insufficientFundsMessage(asset: Asset, available: bigint, needed: bigint): string {
  const has = available < 0n ? `none available (the wallet is overdrawn by ${formatAmount(-available, asset)} ${asset.code})` : `${formatAmount(available, asset)} ${asset.code} available`;
  return `Insufficient funds: ${formatAmount(needed, asset)} ${asset.code} needed, ${has}.`;
}

function walletNotFound(field: string | undefined): AppError {
  return new AppError('NOT_FOUND', 'Wallet not found', field ? { details: [{ field, message: 'no such wallet' }] } : {});
}

function holdNotOpen(hold: HoldState): AppError {
  return new AppError('CONFLICT', `The hold is ${hold.status}; only an OPEN hold can change.`);
}

/**
 * A unit of work on the ledger inside the caller's transaction. Use it in four steps:
 *
 *   1. `declare(operation)` for every operation to run, so the batch knows what to lock;
 *   2. `load()` locks the holds, pending credits and wallet accounts concerned (in id order) and
 *      reads their balances;
 *   3. `apply(operation)` checks one operation against the in-memory balances and applies it, or
 *      throws an AppError and changes nothing (so one refused operation does not spoil the rest);
 *   4. `flush()` writes everything: balance changes, holds, transfers and entries, and the
 *      wallet transaction records, each kind in one statement.
 *
 * For transfers alone there is a faster way that reads nothing first: `assumeLoaded()` instead of
 * `load()`. The batch then cannot refuse anything; it assumes every wallet account exists and
 * holds enough, and `flush()` writes balance changes that the database applies only if that is
 * so, in the batch's order (`updateUncheckedWalletAccountsStatement`). If it is not, the write
 * fails as a whole and the caller runs the batch again the checked way.
 *
 * The checks are done in code first, and the database checks them again (CHECK constraints on
 * the balances and holds, foreign keys on the entries).
 */
export class LedgerBatch {
  private readonly wallets = new Map<string, WalletAccountState>();
  private readonly walletNeeds = new Map<string, { clientId: string; walletId: string; asset: string; create: boolean }>();
  private readonly systems = new Map<string, SystemAccountState>();
  private readonly holds = new Map<string, HoldState>();
  private readonly holdNeeds = new Map<string, { clientId: string; id: string }>();
  private readonly pendingCredits = new Map<string, PendingCreditState>();
  private readonly pendingCreditNeeds = new Map<string, { clientId: string; id: string }>();
  private readonly transfers: store.TransferWrite[] = [];
  private readonly entries: store.EntryWrite[] = [];
  private readonly records: store.WalletTransactionWrite[] = [];
  private readonly captureDestinations: { clientId: string; holdKey: string; walletId: string }[] = [];
  private readonly entryCounts = new Map<string, number>();
  private loaded = false;
  private flushed = false;
  /** Loaded by `assumeLoaded()`: balances are relative and checked by the database at flush. */
  private unchecked = false;
  /** Set by `assumeLoaded({ openCredited: true })`: accounts only credited are opened if missing. */
  private openCredited = false;

  /** `now` stamps the rows the batch creates besides the operations' own (accounts created on first use). */
  constructor(
    private readonly tx: Tx,
    private readonly now: Date,
  ) {}

  // ---- 1. declare -------------------------------------------------------------------------

  declare(operation: LedgerOperation): void {
    assert(!this.loaded, 'declare() must come before load()');
    assert(!this.unchecked || operation.operation === 'transfer', 'a batch that reads nothing runs transfers only');
    const { clientId } = operation;
    switch (operation.operation) {
      case 'transfer':
        for (const leg of operation.legs) {
          this.declareAccount(clientId, leg.from, operation.asset.code, false);
          this.declareAccount(clientId, leg.to, operation.asset.code, true);
        }
        break;
      case 'placeHold':
        this.needWallet(clientId, operation.wallet.walletId, operation.asset.code, false);
        break;
      case 'forcePost':
        // A wallet that never held the asset gets its account, opened overdrawn.
        this.needWallet(clientId, operation.wallet.walletId, operation.asset.code, true);
        this.declareAccount(clientId, operation.to, operation.asset.code, true);
        break;
      case 'recordPendingCredit':
        this.needWallet(clientId, operation.wallet.walletId, operation.asset.code, true);
        break;
      case 'captureHold': {
        const holdId = operation.holdId.toLowerCase();
        this.holdNeeds.set(keyOf(clientId, holdId), { clientId, id: holdId });
        // The destination's asset is the hold's, known once the hold is read: declared in load().
        if ('walletId' in operation.to) this.captureDestinations.push({ clientId, holdKey: keyOf(clientId, holdId), walletId: operation.to.walletId });
        break;
      }
      case 'incrementHold':
      case 'releaseHold':
      case 'expireHold': {
        const holdId = operation.holdId.toLowerCase();
        this.holdNeeds.set(keyOf(clientId, holdId), { clientId, id: holdId });
        break;
      }
      case 'clearPendingCredit':
      case 'failPendingCredit': {
        const id = operation.pendingCreditId.toLowerCase();
        this.pendingCreditNeeds.set(keyOf(clientId, id), { clientId, id });
        break;
      }
    }
  }

  private declareAccount(clientId: string, account: AccountInput, asset: string, create: boolean): void {
    if ('walletId' in account) this.needWallet(clientId, account.walletId, asset, create);
  }

  private needWallet(clientId: string, walletId: string, asset: string, create: boolean): void {
    const normalized = walletId.toLowerCase();
    const id = walletAccountId(clientId, normalized, asset);
    const existing = this.walletNeeds.get(id);
    this.walletNeeds.set(id, { clientId, walletId: normalized, asset, create: create || (existing?.create ?? false) });
  }

  // ---- 2. load ----------------------------------------------------------------------------

  async load(options: LoadOptions = {}): Promise<void> {
    assert(!this.loaded, 'load() runs once');
    this.loaded = true;
    const accountIdsFromRecords = new Map<string, { clientId: string; id: string }>();

    for (const row of await store.lockHolds(this.tx, [...this.holdNeeds.values()])) {
      this.holds.set(keyOf(row.client_id, row.id), { ...store.holdFromRow(row), changed: false });
      accountIdsFromRecords.set(row.account_id, { clientId: row.client_id, id: row.account_id });
    }
    for (const row of await store.lockPendingCredits(this.tx, [...this.pendingCreditNeeds.values()])) {
      this.pendingCredits.set(keyOf(row.client_id, row.id), {
        clientId: row.client_id,
        id: row.id,
        accountId: row.account_id,
        asset: row.asset,
        sourceKind: row.source_kind,
        status: row.status,
        amount: BigInt(row.amount),
        parentTransactionId: row.parent_transaction_id,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        changed: false,
      });
      accountIdsFromRecords.set(row.account_id, { clientId: row.client_id, id: row.account_id });
    }

    for (const destination of this.captureDestinations) {
      const hold = this.holds.get(destination.holdKey);
      if (hold) this.needWallet(destination.clientId, destination.walletId, hold.asset, true);
    }
    const keys = new Map<string, { clientId: string; id: string }>(accountIdsFromRecords);
    for (const [id, need] of this.walletNeeds) keys.set(id, { clientId: need.clientId, id });
    for (const row of options.locked?.accounts ?? []) {
      const key = keys.get(row.id);
      if (key?.clientId !== row.client_id) continue;
      keys.delete(row.id);
      this.adoptAccountRow(row);
    }
    const found = await store.lockAccounts(this.tx, [...keys.values()]);
    for (const row of found) this.adoptAccountRow(row);

    const missing = [...this.walletNeeds.entries()].filter(([id]) => !this.wallets.has(id));
    if (missing.length === 0) return;
    let existing: Set<string> | undefined;
    if (options.walletsExist) {
      const unique = new Map(missing.map(([, need]) => [keyOf(need.clientId, need.walletId), { clientId: need.clientId, walletId: need.walletId }]));
      existing = await options.walletsExist(this.tx, [...unique.values()]);
    }
    // Accounts that do not exist yet are opened at flush, and only if this batch credits them:
    // a refused transfer leaves no empty account behind.
    for (const [id, need] of missing) {
      const walletExists = existing ? existing.has(keyOf(need.clientId, need.walletId)) : true;
      this.wallets.set(id, this.emptyAccount(need.clientId, id, need.walletId, need.asset, walletExists, walletExists && need.create));
    }
  }

  /**
   * Instead of `load()`, for a batch of transfers only: locks and reads nothing, and assumes that
   * every declared wallet account exists (its balances then count from zero). `apply()` refuses
   * nothing for want of money; `flush()` makes the database check it instead.
   *
   * With `openCredited`, a wallet account the batch only credits (it never needed money the batch
   * did not give it) is written as an upsert instead: opened if it does not exist yet, the wallet's
   * existence checked by the account's foreign key. For batches that often credit an asset a
   * wallet never held (a trade's to-asset), which would otherwise fail and run the checked way.
   * An upsert costs a little more than the plain update, so transfers do not ask for it.
   */
  assumeLoaded(options: { openCredited?: boolean } = {}): void {
    assert(!this.loaded, 'assumeLoaded() runs once, instead of load()');
    this.loaded = true;
    this.unchecked = true;
    this.openCredited = options.openCredited ?? false;
    assert(this.holdNeeds.size === 0 && this.pendingCreditNeeds.size === 0, 'a batch that reads nothing runs transfers only');
    for (const [id, need] of this.walletNeeds) {
      this.wallets.set(id, { ...this.emptyAccount(need.clientId, id, need.walletId, need.asset, true, false), exists: true });
    }
  }

  private adoptAccountRow(row: store.AccountRow): void {
    assert(row.kind === 'WALLET' && row.wallet_id !== null, `account ${row.id} is not a wallet account`);
    this.wallets.set(row.id, {
      clientId: row.client_id,
      id: row.id,
      ctid: row.ctid,
      walletId: row.wallet_id,
      asset: row.asset,
      exists: true,
      walletExists: true,
      creatable: false,
      available: BigInt(row.available),
      reserved: BigInt(row.reserved),
      pending: BigInt(row.pending),
      overdrawn: BigInt(row.overdrawn),
      deltaAvailable: 0n,
      deltaReserved: 0n,
      deltaPending: 0n,
      forced: false,
      touched: false,
      lowest: 0n,
    });
  }

  private emptyAccount(clientId: string, id: string, walletId: string, asset: string, walletExists: boolean, creatable: boolean): WalletAccountState {
    return {
      clientId,
      id,
      ctid: null,
      walletId,
      asset,
      exists: false,
      walletExists,
      creatable,
      available: 0n,
      reserved: 0n,
      pending: 0n,
      overdrawn: 0n,
      deltaAvailable: 0n,
      deltaReserved: 0n,
      deltaPending: 0n,
      forced: false,
      touched: false,
      lowest: 0n,
    };
  }

  // ---- 3. apply ---------------------------------------------------------------------------

  apply<O extends LedgerOperation>(operation: O): ResultOf<O> {
    assert(this.loaded && !this.flushed, 'apply() runs between load() and flush()');
    assert(!this.unchecked || operation.operation === 'transfer', 'a batch that reads nothing runs transfers only');
    return this.dispatch(operation) as ResultOf<O>;
  }

  /**
   * The AVAILABLE balance of a declared wallet account as this batch sees it now (after the
   * operations applied so far), for a check that moves nothing. Only in a batch that read its
   * accounts (`load()`); a wallet that does not exist reads as zero.
   */
  availableOf(clientId: string, walletId: string, asset: string): bigint {
    assert(this.loaded && !this.unchecked && !this.flushed, 'availableOf() runs between load() and flush()');
    const account = this.wallets.get(walletAccountId(clientId, walletId.toLowerCase(), asset));
    assert(account, `wallet account ${walletId}/${asset} was not declared before load()`);
    return account.available;
  }

  private dispatch(operation: LedgerOperation): TransferResult | HoldResult | CaptureResult | PendingCreditResult {
    switch (operation.operation) {
      case 'transfer':
        return this.transfer(operation);
      case 'placeHold':
        return this.placeHold(operation.clientId, operation.now, operation.wallet, operation.asset, operation.amount, operation.expiresAt ?? null, operation.history);
      case 'incrementHold':
        return this.incrementHold(operation.clientId, operation.now, operation.holdId, operation.amount, operation.expiresAt, operation.history);
      case 'captureHold':
        return this.captureHold(operation);
      case 'forcePost':
        return this.forcePost(operation);
      case 'releaseHold':
        return this.releaseHold(operation.clientId, operation.now, operation.holdId, operation.amount, operation.history, 'RELEASED');
      case 'expireHold':
        return this.releaseHold(operation.clientId, operation.now, operation.holdId, undefined, operation.history, 'EXPIRED');
      case 'recordPendingCredit':
        return this.recordPendingCredit(operation.clientId, operation.now, operation.wallet, operation.asset, operation.amount, operation.source, operation.history);
      case 'clearPendingCredit':
        return this.settlePendingCredit(operation.clientId, operation.now, operation.pendingCreditId, operation.history, 'CLEARED');
      case 'failPendingCredit':
        return this.settlePendingCredit(operation.clientId, operation.now, operation.pendingCreditId, operation.history, 'FAILED');
    }
  }

  private walletAccount(clientId: string, walletId: string, asset: string, field: string | undefined): WalletAccountState {
    const account = this.wallets.get(walletAccountId(clientId, walletId.toLowerCase(), asset));
    assert(account, `wallet account ${walletId}/${asset} was not declared before load()`);
    if (!account.walletExists) throw walletNotFound(field);
    return account;
  }

  private systemAccount(clientId: string, kind: SystemAccountKind, asset: string): SystemAccountState {
    const key = `${clientId}/${kind}/${asset}`;
    let account = this.systems.get(key);
    if (!account) {
      // One shard per transaction (transactionShard): a transaction never locks two shards of one
      // system account. In a transaction group (transaction-groups.ts) every batch of the group
      // takes the group's; in any other transaction, every batch takes the one its first drew.
      // Until 2026-12-06 each batch drew its own, so a transaction of many operations (a sandbox
      // request seeding 40 funded customers) locked the settlement account's shards in a random
      // order, and two at once deadlocked, each retried until one answered 500 (found by an audit).
      const shard = transactionShard(this.tx) % systemAccountShards;
      account = { clientId, id: systemAccountId(clientId, kind, asset, shard), kind, shard, asset, deltaAvailable: 0n, touched: false };
      this.systems.set(key, account);
    }
    return account;
  }

  private side(clientId: string, input: AccountInput, asset: string): Side {
    if ('walletId' in input) return { account: this.walletAccount(clientId, input.walletId, asset, input.field), balance: 'AVAILABLE' };
    return { account: this.systemAccount(clientId, input.system, asset), balance: 'AVAILABLE' };
  }

  private hold(clientId: string, holdId: string): HoldState {
    const hold = this.holds.get(keyOf(clientId, holdId.toLowerCase()));
    if (!hold) {
      assert(this.holdNeeds.has(keyOf(clientId, holdId.toLowerCase())), `hold ${holdId} was not declared before load()`);
      throw new AppError('NOT_FOUND', 'Hold not found');
    }
    return hold;
  }

  private holdAccount(hold: HoldState): WalletAccountState {
    const account = this.wallets.get(hold.accountId);
    // A hold's account exists, but for forcePost's, whose account this batch may open.
    assert(account && (account.exists || account.creatable), `account ${hold.accountId} of hold ${hold.id} is not loaded`);
    return account;
  }

  private transfer(operation: TransferOperation): TransferResult {
    const { clientId, asset } = operation;
    assert(operation.legs.length > 0, 'a transfer needs at least one leg');
    const legs = operation.legs.map((leg) => {
      assert(leg.amount > 0n, 'transfer amounts are positive');
      return { from: this.side(clientId, leg.from, asset.code), to: this.side(clientId, leg.to, asset.code), amount: leg.amount, input: leg };
    });
    // Net effect per wallet: a wallet that ends up with less AVAILABLE must have had enough.
    const net = new Map<WalletAccountState, { change: bigint; field: string | undefined }>();
    for (const leg of legs) {
      if (isWallet(leg.from)) {
        const entry = net.get(leg.from.account) ?? { change: 0n, field: 'walletId' in leg.input.from ? leg.input.from.field : undefined };
        entry.change -= leg.amount;
        net.set(leg.from.account, entry);
      }
      if (isWallet(leg.to)) {
        const entry = net.get(leg.to.account) ?? { change: 0n, field: undefined };
        entry.change += leg.amount;
        net.set(leg.to.account, entry);
      }
    }
    for (const [account, { change, field }] of net) {
      if (this.unchecked) account.lowest = account.available + change < account.lowest ? account.available + change : account.lowest;
      else if (change < 0n && account.available + change < 0n) throw insufficientFunds(field, asset, account.available, -change);
    }

    const transferId = this.newTransfer(clientId, operation.now, 'TRANSFER', operation.history, { description: operation.description ?? null });
    const result: TransferResult = { transferId, legs: [] };
    for (const leg of legs) {
      this.move(transferId, clientId, asset.code, leg.amount, leg.from, leg.to, operation.now);
      const debit = isWallet(leg.from)
        ? this.record(transferId, operation.now, operation.history, { wallet: leg.from.account, operation: 'DEBIT', balanceType: 'AVAILABLE', purpose: leg.input.purpose ?? 'TRANSFER', status: 'COMPLETED', amount: leg.amount })
        : null;
      const credit = isWallet(leg.to)
        ? this.record(transferId, operation.now, operation.history, { wallet: leg.to.account, operation: 'CREDIT', balanceType: 'AVAILABLE', purpose: leg.input.purpose ?? 'TRANSFER', status: 'COMPLETED', amount: leg.amount })
        : null;
      result.legs.push({ debitTransactionId: debit?.id ?? null, creditTransactionId: credit?.id ?? null });
    }
    return result;
  }

  private placeHold(
    clientId: string,
    now: Date,
    wallet: { walletId: string; field?: string },
    asset: Asset,
    amount: bigint,
    expiresAt: Date | null,
    history: HistoryInput,
  ): HoldResult {
    assert(amount > 0n, 'hold amounts are positive');
    const account = this.walletAccount(clientId, wallet.walletId, asset.code, wallet.field);
    if (account.available < amount) throw insufficientFunds(wallet.field, asset, account.available, amount);
    const holdId = idAt(now);
    const hold: HoldState = {
      clientId,
      id: holdId,
      accountId: account.id,
      asset: asset.code,
      status: 'OPEN',
      placed: amount,
      remaining: amount,
      captured: 0n,
      overCaptured: 0n,
      released: 0n,
      shortfall: 0n,
      expiresAt,
      parentTransactionId: history.parentTransactionId,
      createdAt: now,
      updatedAt: now,
      changed: true,
    };
    this.holds.set(keyOf(clientId, holdId), hold);
    const transferId = this.newTransfer(clientId, now, 'HOLD_PLACE', history, { holdId });
    this.move(transferId, clientId, asset.code, amount, { account, balance: 'AVAILABLE' }, { account, balance: 'RESERVED' }, now);
    const record = this.record(transferId, now, history, { wallet: account, operation: 'DEBIT', balanceType: 'RESERVED', purpose: 'HOLD', status: 'PENDING', amount });
    return { holdId, transferId, records: [record] };
  }

  private incrementHold(clientId: string, now: Date, holdId: string, amount: bigint, expiresAt: Date | null | undefined, history: HistoryInput): HoldResult {
    assert(amount > 0n, 'hold increments are positive');
    const hold = this.hold(clientId, holdId);
    if (hold.status !== 'OPEN') throw holdNotOpen(hold);
    const account = this.holdAccount(hold);
    const asset = assetOfAccount(account);
    if (account.available < amount) throw insufficientFunds(undefined, asset, account.available, amount);
    hold.placed += amount;
    hold.remaining += amount;
    if (expiresAt !== undefined) hold.expiresAt = expiresAt;
    this.touchHold(hold, now);
    const transferId = this.newTransfer(clientId, now, 'HOLD_INCREMENT', history, { holdId: hold.id });
    this.move(transferId, clientId, hold.asset, amount, { account, balance: 'AVAILABLE' }, { account, balance: 'RESERVED' }, now);
    const record = this.record(transferId, now, history, { wallet: account, operation: 'DEBIT', balanceType: 'RESERVED', purpose: 'HOLD_INCREMENT', status: 'PENDING', amount });
    return { holdId: hold.id, transferId, records: [record] };
  }

  private captureHold(operation: CaptureHoldOperation): CaptureResult {
    const { clientId, now, history } = operation;
    assert(operation.amount > 0n, 'capture amounts are positive');
    const hold = this.hold(clientId, operation.holdId);
    if (hold.status !== 'OPEN') throw holdNotOpen(hold);
    const account = this.holdAccount(hold);
    const asset = assetOfAccount(account);
    const destination = this.side(clientId, operation.to, hold.asset);
    assert(!(isWallet(destination) && destination.account === account), 'a hold is never captured into its own wallet');

    const fromReserved = operation.amount < hold.remaining ? operation.amount : hold.remaining;
    const over = operation.amount - fromReserved;
    let shortfall = 0n;
    if (over > 0n) {
      const covered = account.available <= 0n ? 0n : account.available < over ? account.available : over;
      shortfall = over - covered;
      if (shortfall > 0n && !operation.force) throw insufficientFunds(undefined, asset, account.available, over);
    }
    const leftAfterCapture = hold.remaining - fromReserved;
    const release = operation.final ? leftAfterCapture : 0n;

    hold.captured += operation.amount;
    hold.overCaptured += over;
    hold.shortfall += shortfall;
    hold.remaining = leftAfterCapture - release;
    hold.released += release;
    if (hold.remaining === 0n) hold.status = 'CAPTURED';
    this.touchHold(hold, now);

    const purpose = operation.purpose ?? 'CAPTURE';
    const transferId = this.newTransfer(clientId, now, 'HOLD_CAPTURE', history, { holdId: hold.id, description: operation.description });
    if (fromReserved > 0n) this.move(transferId, clientId, hold.asset, fromReserved, { account, balance: 'RESERVED' }, destination, now);
    if (over > 0n) {
      if (shortfall > 0n) account.forced = true;
      this.move(transferId, clientId, hold.asset, over, { account, balance: 'AVAILABLE' }, destination, now);
    }
    if (release > 0n) this.move(transferId, clientId, hold.asset, release, { account, balance: 'RESERVED' }, { account, balance: 'AVAILABLE' }, now);

    // One record per balance the capture takes from: what the hold reserved, then what came from
    // AVAILABLE (an over-capture, or a force post's whole amount), so the records add up to the
    // balances they describe.
    const records: WrittenRecord[] = [];
    if (fromReserved > 0n) {
      records.push(this.record(transferId, now, history, { wallet: account, operation: 'DEBIT', balanceType: 'RESERVED', purpose, status: 'COMPLETED', amount: fromReserved }));
    }
    if (over > 0n) {
      records.push(this.record(transferId, now, history, { wallet: account, operation: 'DEBIT', balanceType: 'AVAILABLE', purpose, status: 'COMPLETED', amount: over }));
    }
    if (isWallet(destination)) {
      records.push(this.record(transferId, now, history, { wallet: destination.account, operation: 'CREDIT', balanceType: 'AVAILABLE', purpose, status: 'COMPLETED', amount: operation.amount }));
    }
    if (release > 0n) {
      records.push(this.record(transferId, now, history, { wallet: account, operation: 'CREDIT', balanceType: 'RESERVED', purpose: 'RELEASE', status: 'CANCELLED', amount: release }));
    }
    return { holdId: hold.id, transferId, records, captured: operation.amount, overCaptured: over, shortfall, released: release };
  }

  /** A hold placed at zero (no record: nothing was reserved) and captured at once, forced; its records take the operation's purpose. */
  private forcePost(operation: ForcePostOperation): CaptureResult {
    const { clientId, now } = operation;
    const account = this.walletAccount(clientId, operation.wallet.walletId, operation.asset.code, operation.wallet.field);
    const holdId = idAt(now);
    this.holds.set(keyOf(clientId, holdId), {
      clientId,
      id: holdId,
      accountId: account.id,
      asset: operation.asset.code,
      status: 'OPEN',
      placed: 0n,
      remaining: 0n,
      captured: 0n,
      overCaptured: 0n,
      released: 0n,
      shortfall: 0n,
      expiresAt: null,
      parentTransactionId: operation.history.parentTransactionId,
      createdAt: now,
      updatedAt: now,
      changed: true,
    });
    return this.captureHold({
      operation: 'captureHold',
      clientId,
      now,
      holdId,
      amount: operation.amount,
      to: operation.to,
      final: true,
      force: true,
      purpose: operation.purpose,
      description: operation.description,
      history: operation.history,
    });
  }

  private releaseHold(
    clientId: string,
    now: Date,
    holdId: string,
    amount: bigint | undefined,
    history: HistoryInput,
    closingStatus: 'RELEASED' | 'EXPIRED',
  ): HoldResult {
    const hold = this.hold(clientId, holdId);
    if (hold.status !== 'OPEN') throw holdNotOpen(hold);
    const account = this.holdAccount(hold);
    const release = amount ?? hold.remaining;
    assert(release >= 0n, 'release amounts are not negative');
    if (release > hold.remaining) {
      throw new AppError('CONFLICT', `Cannot release more than the hold still reserves (${formatAmount(hold.remaining, assetOfAccount(account))}).`);
    }
    hold.remaining -= release;
    hold.released += release;
    if (hold.remaining === 0n) hold.status = closingStatus;
    this.touchHold(hold, now);
    const transferId = this.newTransfer(clientId, now, closingStatus === 'EXPIRED' ? 'HOLD_EXPIRE' : 'HOLD_RELEASE', history, { holdId: hold.id });
    const records: WrittenRecord[] = [];
    if (release > 0n) {
      this.move(transferId, clientId, hold.asset, release, { account, balance: 'RESERVED' }, { account, balance: 'AVAILABLE' }, now);
      records.push(
        this.record(transferId, now, history, {
          wallet: account,
          operation: 'CREDIT',
          balanceType: 'RESERVED',
          purpose: closingStatus === 'EXPIRED' ? 'EXPIRY' : 'RELEASE',
          status: 'CANCELLED',
          amount: release,
        }),
      );
    }
    return { holdId: hold.id, transferId, records };
  }

  private recordPendingCredit(
    clientId: string,
    now: Date,
    wallet: { walletId: string; field?: string },
    asset: Asset,
    amount: bigint,
    source: SystemAccountKind,
    history: HistoryInput,
  ): PendingCreditResult {
    assert(amount > 0n, 'pending credits are positive');
    const account = this.walletAccount(clientId, wallet.walletId, asset.code, wallet.field);
    assert(account.exists || account.creatable, 'the account of a pending credit exists or is opened by this batch');
    const pendingCreditId = idAt(now);
    this.pendingCredits.set(keyOf(clientId, pendingCreditId), {
      clientId,
      id: pendingCreditId,
      accountId: account.id,
      asset: asset.code,
      sourceKind: source,
      status: 'PENDING',
      amount,
      parentTransactionId: history.parentTransactionId,
      createdAt: now,
      updatedAt: now,
      changed: true,
    });
    const transferId = this.newTransfer(clientId, now, 'PENDING_CREDIT', history, { pendingCreditId });
    this.move(transferId, clientId, asset.code, amount, { account: this.systemAccount(clientId, source, asset.code), balance: 'AVAILABLE' }, { account, balance: 'PENDING' }, now);
    const record = this.record(transferId, now, history, { wallet: account, operation: 'CREDIT', balanceType: 'PENDING', purpose: 'PENDING_CREDIT', status: 'PENDING', amount });
    return { pendingCreditId, transferId, records: [record] };
  }

  private settlePendingCredit(clientId: string, now: Date, pendingCreditId: string, history: HistoryInput, outcome: 'CLEARED' | 'FAILED'): PendingCreditResult {
    const credit = this.pendingCredits.get(keyOf(clientId, pendingCreditId.toLowerCase()));
    if (!credit) {
      assert(this.pendingCreditNeeds.has(keyOf(clientId, pendingCreditId.toLowerCase())), `pending credit ${pendingCreditId} was not declared before load()`);
      throw new AppError('NOT_FOUND', 'Pending credit not found');
    }
    if (credit.status !== 'PENDING') throw new AppError('CONFLICT', `The pending credit is already ${credit.status}.`);
    const account = this.wallets.get(credit.accountId);
    assert(account?.exists, `account ${credit.accountId} of pending credit ${credit.id} is not loaded`);
    credit.status = outcome;
    credit.updatedAt = now;
    credit.changed = true;
    const transferId = this.newTransfer(clientId, now, outcome === 'CLEARED' ? 'PENDING_CLEAR' : 'PENDING_FAIL', history, { pendingCreditId: credit.id });
    const to: Side = outcome === 'CLEARED' ? { account, balance: 'AVAILABLE' } : { account: this.systemAccount(clientId, credit.sourceKind, credit.asset), balance: 'AVAILABLE' };
    this.move(transferId, clientId, credit.asset, credit.amount, { account, balance: 'PENDING' }, to, now);
    const record =
      outcome === 'CLEARED'
        ? this.record(transferId, now, history, { wallet: account, operation: 'CREDIT', balanceType: 'AVAILABLE', purpose: 'CLEARING', status: 'COMPLETED', amount: credit.amount })
        : this.record(transferId, now, history, { wallet: account, operation: 'DEBIT', balanceType: 'PENDING', purpose: 'PENDING_FAILURE', status: 'FAILED', amount: credit.amount });
    return { pendingCreditId: credit.id, transferId, records: [record] };
  }

  private touchHold(hold: HoldState, now: Date): void {
    hold.updatedAt = now;
    hold.changed = true;
  }

  private newTransfer(
    clientId: string,
    now: Date,
    kind: LedgerTransferKind,
    history: HistoryInput,
    links: { holdId?: string; pendingCreditId?: string; description?: string | null },
  ): string {
    const id = idAt(now);
    this.transfers.push({
      clientId,
      id,
      kind,
      parentTransactionId: history.parentTransactionId,
      holdId: links.holdId ?? null,
      pendingCreditId: links.pendingCreditId ?? null,
      description: links.description ?? history.note ?? null,
      traceId: history.traceId,
      createdAt: now,
    });
    return id;
  }

  /** Applies one entry to the in-memory balances and queues it for writing. */
  private move(transferId: string, clientId: string, asset: string, amount: bigint, from: Side, to: Side, now: Date): void {
    assert(amount > 0n, 'entries move a positive amount');
    assert(from.account.asset === asset && to.account.asset === asset, 'an entry stays within one asset');
    assert(from.account.clientId === clientId && to.account.clientId === clientId, 'an entry stays within one client');
    changeBalance(from, -amount);
    changeBalance(to, amount);
    assert(from.account !== to.account || from.balance !== to.balance, 'an entry moves money between two different balances');
    const index = this.entryCounts.get(transferId) ?? 0;
    this.entryCounts.set(transferId, index + 1);
    this.entries.push({
      clientId,
      transferId,
      index,
      asset,
      amount,
      debitAccountId: from.account.id,
      debitBalance: from.balance,
      creditAccountId: to.account.id,
      creditBalance: to.balance,
      createdAt: now,
    });
  }

  private record(transferId: string, now: Date, history: HistoryInput, spec: RecordSpec): WrittenRecord {
    const id = idAt(now);
    const links = history.links ?? {};
    this.records.push({
      clientId: spec.wallet.clientId,
      id,
      parentTransactionId: history.parentTransactionId,
      walletId: spec.wallet.walletId,
      ledgerTransferId: transferId,
      type: history.type,
      purpose: spec.purpose,
      operation: spec.operation,
      balanceType: spec.balanceType,
      status: history.status ?? spec.status,
      amount: spec.amount,
      asset: spec.wallet.asset,
      note: history.note ?? null,
      cardTransactionId: links.cardTransactionId ?? null,
      parentCardTransactionId: links.parentCardTransactionId ?? null,
      bankTransactionId: links.bankTransactionId ?? null,
      parentBankTransactionId: links.parentBankTransactionId ?? null,
      cryptoTransactionId: links.cryptoTransactionId ?? null,
      parentCryptoTransactionId: links.parentCryptoTransactionId ?? null,
      createdAt: now,
    });
    return { id, walletId: spec.wallet.walletId, operation: spec.operation };
  }

  // ---- 4. flush ---------------------------------------------------------------------------

  /**
   * Writes everything the applied operations changed. With `write`, the statements are added to
   * the caller's combined statement (executed by the caller, together with its own writes, in one
   * round trip); without it they are executed here.
   */
  async flush(write?: WriteStatement): Promise<void> {
    assert(this.loaded && !this.flushed, 'flush() runs once, after load()');
    this.flushed = true;
    const statement = write ?? new WriteStatement();

    const walletDeltas: store.WalletAccountDelta[] = [];
    const uncheckedDeltas: store.UncheckedWalletAccountDelta[] = [];
    const upserts: store.AccountUpsert[] = [];
    for (const account of this.wallets.values()) {
      if (this.unchecked) {
        // Even an account whose changes cancel out is checked: it must have held enough on the way.
        assert(account.deltaReserved === 0n && account.deltaPending === 0n && !account.forced, `account ${account.id} changed more than AVAILABLE`);
        if (!account.touched) continue;
        // One part for every wallet account, opened or not, so they are taken in one id-ordered pass.
        const opening = this.openCredited && account.lowest >= 0n ? { walletId: account.walletId, asset: account.asset, createdAt: this.now } : undefined;
        uncheckedDeltas.push({ clientId: account.clientId, id: account.id, available: account.deltaAvailable, lowest: account.lowest, ...(opening ? { opening } : {}) });
        continue;
      }
      const changed = account.deltaAvailable !== 0n || account.deltaReserved !== 0n || account.deltaPending !== 0n;
      if (!changed && (account.exists || !account.touched)) continue;
      // Checked in code before the database checks it again.
      assert(account.reserved >= 0n && account.pending >= 0n, `account ${account.id} would go negative`);
      assert(account.available >= 0n || account.forced || account.deltaAvailable >= 0n, `account ${account.id} would go below zero outside the forced path`);
      if (account.exists) {
        assert(account.ctid !== null, `account ${account.id} changed but is not locked`);
        walletDeltas.push({
          clientId: account.clientId,
          id: account.id,
          ctid: account.ctid,
          available: account.deltaAvailable,
          reserved: account.deltaReserved,
          pending: account.deltaPending,
          forced: account.forced,
        });
      } else {
        // Only a forced posting (forcePost: a card's, or a settled deposit's return) may open an account below zero.
        assert(account.creatable && (account.available >= 0n || account.forced), `account ${account.id} may not be opened by this batch`);
        upserts.push({
          clientId: account.clientId,
          id: account.id,
          kind: 'WALLET',
          walletId: account.walletId,
          shard: 0,
          asset: account.asset,
          available: account.deltaAvailable,
          reserved: account.deltaReserved,
          pending: account.deltaPending,
          createdAt: this.now,
        });
      }
    }
    // Each kind of row is one part of the statement; rows of other batches written with these (a
    // transaction group's, WriteStatement.merge) join the same parts.
    statement.addRows(store.uncheckedWalletAccountDeltas, uncheckedDeltas);
    statement.addRows(store.walletAccountDeltas, walletDeltas);
    for (const account of this.systems.values()) {
      if (!account.touched) continue;
      upserts.push({
        clientId: account.clientId,
        id: account.id,
        kind: account.kind,
        walletId: null,
        shard: account.shard,
        asset: account.asset,
        available: account.deltaAvailable,
        reserved: 0n,
        pending: 0n,
        createdAt: this.now,
      });
    }
    statement.addRows(store.accountUpserts, upserts);
    statement.addRows(
      store.holdWrites,
      [...this.holds.values()].filter((hold) => hold.changed),
    );
    statement.addRows(
      store.pendingCreditWrites,
      [...this.pendingCredits.values()].filter((credit) => credit.changed),
    );
    statement.addRows(store.transferWrites, this.transfers);
    statement.addRows(store.entryWrites, this.entries);
    statement.addRows(store.walletTransactionWrites, this.records);
    if (!write) await statement.execute(this.tx);
  }

  /** How many ledger transfers this batch wrote (or will write). */
  get transferCount(): number {
    return this.transfers.length;
  }
}

function isWallet(side: Side): side is { account: WalletAccountState; balance: BalanceType } {
  return 'walletId' in side.account;
}

function changeBalance(side: Side, amount: bigint): void {
  side.account.touched = true;
  if (!isWallet(side)) {
    side.account.deltaAvailable += amount;
    return;
  }
  const account = side.account;
  switch (side.balance) {
    case 'AVAILABLE':
      account.available += amount;
      account.deltaAvailable += amount;
      break;
    case 'RESERVED':
      account.reserved += amount;
      account.deltaReserved += amount;
      break;
    case 'PENDING':
      account.pending += amount;
      account.deltaPending += amount;
      break;
  }
  if (account.forced) account.overdrawn = account.available < 0n ? -account.available : 0n;
  else if (account.overdrawn > 0n) account.overdrawn = account.available < 0n ? -account.available : 0n;
}

/** The registry entry of an account's asset (for the amounts printed in messages). */
function assetOfAccount(account: WalletAccountState): Asset {
  const asset = findAsset(account.asset, 'sandbox');
  assert(asset, `account ${account.id} holds an asset missing from the registry: ${account.asset}`);
  return asset;
}

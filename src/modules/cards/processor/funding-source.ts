import type { Tx } from '../../../platform/db/transaction.js';
import { AppError } from '../../../platform/http/errors.js';
import { findAsset, type Asset } from '../../../platform/money/assets.js';
import { assert } from '../../../platform/assert.js';
import {
  captureHold,
  expireHold,
  forcePost,
  incrementHold,
  placeHold,
  postTransfer,
  releaseHold,
  walletBalances,
  type AccountRow,
  type HistoryInput,
  type LoadOptions,
  type WalletsExist,
} from '../../ledger/index.js';
import type { RequestContext } from '../../../platform/http/context.js';
import type { WriteStatement } from '../../../platform/db/write-statement.js';
import { creditLineFunding } from '../../credit/index.js';
import type { DeclineReason } from '../network/index.js';
import type { CardRow } from '../cards.service.js';

/**
 * Where a card's money comes from. The processor decides and records; a funding source only moves
 * money, inside the processor's transaction. A DEBIT card spends from its wallet (below); a CREDIT
 * card spends from its credit line (src/modules/credit/credit-funding.ts), which implements this
 * same interface with the line's holds and postings. Every amount is a positive bigint in minor
 * units of `asset`.
 */
export interface FundingSource {
  readonly asset: Asset;
  /** The wallet-history `type` of each kind of posting (contract §12.3 purposes). */
  readonly historyTypes: { hold: string; capture: string; refund: string };
  /** What can be spent now (a debit wallet's AVAILABLE, a credit line's available credit); may be negative after forced postings. */
  available(tx: Tx): Promise<bigint>;
  /**
   * A reason to decline a purchase of `amount` that has the funds (a credit line at
   * PURCHASE_RESTRICTED or worse, or that the purchase would take there); absent or null: none.
   */
  refusal?(tx: Tx, amount: bigint): Promise<DeclineReason | null>;
  /**
   * Reserves `amount`; fails with INSUFFICIENT_FUNDS (and changes nothing) when it is not available.
   *
   * The hold methods take the caller's combined statement (`write`) as their last argument: a
   * source may add its writes to it (sent by the caller with its own, in one round trip) rather
   * than send them at once, so the caller must read nothing they change before sending it. A
   * source may also ignore it and write at once (the credit line does).
   */
  placeHold(tx: Tx, amount: bigint, expiresAt: Date, history: HistoryInput, write?: WriteStatement): Promise<string>;
  increaseHold(tx: Tx, holdId: string, amount: bigint, expiresAt: Date, history: HistoryInput, write?: WriteStatement): Promise<void>;
  /** Gives back `amount` (default: all that is left); `expired` marks an expiry rather than a release. */
  releaseHold(tx: Tx, holdId: string, amount: bigint | undefined, history: HistoryInput, expired?: boolean, write?: WriteStatement): Promise<void>;
  /** Posts `amount` against the hold and closes it; beyond the hold and AVAILABLE it is forced (never refused). */
  captureHold(tx: Tx, holdId: string, amount: bigint, history: HistoryInput, write?: WriteStatement): Promise<{ shortfall: bigint }>;
  /** Posts `amount` without a hold: checked (refused when not available) or forced (never refused, the wallet overdrawn). */
  post(tx: Tx, amount: bigint, options: { force: boolean }, history: HistoryInput): Promise<void>;
  /** Credits `amount` back (a refund). */
  refund(tx: Tx, amount: bigint, history: HistoryInput): Promise<void>;
  /** Takes back `amount` of a refund credited earlier (a reversal of it: never refused). */
  takeBackRefund(tx: Tx, amount: bigint, history: HistoryInput): Promise<void>;
}

/** The ledger's refusal of a movement larger than what is available. */
export function isInsufficientFunds(error: unknown): boolean {
  return error instanceof AppError && error.code === 'INSUFFICIENT_FUNDS';
}

/** The card's wallet pays for it: holds move AVAILABLE → RESERVED; postings go to CARD_SETTLEMENT. */
class DebitWalletFunding implements FundingSource {
  readonly historyTypes = { hold: 'DEBIT_CARD_HOLD', capture: 'DEBIT_CARD_CAPTURE', refund: 'DEBIT_CARD_REFUND' };

  constructor(
    private readonly clientId: string,
    private readonly walletId: string,
    readonly asset: Asset,
    private readonly now: Date,
    /**
     * The wallet's account in `asset`, locked by the caller in this transaction and unchanged
     * since (the processor's lookup); cleared by the first movement, after which it is stale.
     */
    private readonly locked: { account?: AccountRow | undefined },
  ) {}

  async available(tx: Tx): Promise<bigint> {
    if (this.locked.account) return BigInt(this.locked.account.available);
    const balances = await walletBalances(tx, this.clientId, this.walletId);
    return balances.find((balance) => balance.asset === this.asset.code)?.available ?? 0n;
  }

  /** The ledger's options for a movement: the caller's statement, and the locked account (once: the movement changes it). */
  private options(write: WriteStatement | undefined): LoadOptions {
    const account = this.locked.account;
    this.locked.account = undefined;
    return { write, ...(account ? { locked: { accounts: [account] } } : {}) };
  }

  async placeHold(tx: Tx, amount: bigint, expiresAt: Date, history: HistoryInput, write?: WriteStatement): Promise<string> {
    const result = await placeHold(tx, { clientId: this.clientId, now: this.now, wallet: { walletId: this.walletId }, asset: this.asset, amount, expiresAt, history }, this.options(write));
    return result.holdId;
  }

  async increaseHold(tx: Tx, holdId: string, amount: bigint, expiresAt: Date, history: HistoryInput, write?: WriteStatement): Promise<void> {
    await incrementHold(tx, { clientId: this.clientId, now: this.now, holdId, amount, expiresAt, history }, this.options(write));
  }

  async releaseHold(tx: Tx, holdId: string, amount: bigint | undefined, history: HistoryInput, expired = false, write?: WriteStatement): Promise<void> {
    if (expired) {
      await expireHold(tx, { clientId: this.clientId, now: this.now, holdId, history }, this.options(write));
      return;
    }
    await releaseHold(tx, { clientId: this.clientId, now: this.now, holdId, ...(amount === undefined ? {} : { amount }), history }, this.options(write));
  }

  async captureHold(tx: Tx, holdId: string, amount: bigint, history: HistoryInput, write?: WriteStatement): Promise<{ shortfall: bigint }> {
    const result = await captureHold(
      tx,
      { clientId: this.clientId, now: this.now, holdId, amount, to: { system: 'CARD_SETTLEMENT' }, final: true, force: true, history },
      this.options(write),
    );
    return { shortfall: result.shortfall };
  }

  async post(tx: Tx, amount: bigint, options: { force: boolean }, history: HistoryInput): Promise<void> {
    if (options.force && (await this.available(tx)) < amount) {
      // Never refused: what AVAILABLE cannot cover is a shortfall, the wallet overdrawn (contract §12.3).
      await forcePost(
        tx,
        { clientId: this.clientId, now: this.now, wallet: { walletId: this.walletId }, asset: this.asset, amount, to: { system: 'CARD_SETTLEMENT' }, history },
        this.options(undefined),
      );
      return;
    }
    // A forced posting is a capture (a completion after its hold expired, say) whether or not
    // AVAILABLE covers it: the same step has the same purpose (until 2026-12-02 it was TRANSFER
    // when the wallet could pay and CAPTURE when it could not; found by an audit).
    const leg = { from: { walletId: this.walletId }, to: { system: 'CARD_SETTLEMENT' as const }, amount, ...(options.force ? { purpose: 'CAPTURE' as const } : {}) };
    await postTransfer(tx, { clientId: this.clientId, now: this.now, asset: this.asset, legs: [leg], history }, this.options(undefined));
  }

  /** The wallet pays it back, overdrawn if it must be (a forced posting). */
  async takeBackRefund(tx: Tx, amount: bigint, history: HistoryInput): Promise<void> {
    await this.post(tx, amount, { force: true }, history);
  }

  async refund(tx: Tx, amount: bigint, history: HistoryInput): Promise<void> {
    this.locked.account = undefined;
    const cardWalletExists: WalletsExist = async () => new Set([`${this.clientId}/${this.walletId}`]);
    await postTransfer(
      tx,
      { clientId: this.clientId, now: this.now, asset: this.asset, legs: [{ from: { system: 'CARD_SETTLEMENT' }, to: { walletId: this.walletId }, amount }], history },
      // The card row's foreign key guarantees its wallet exists.
      { walletsExist: cardWalletExists },
    );
  }
}

/**
 * The funding source of a card: its wallet for DEBIT, its credit line for CREDIT. `locked.account`:
 * the DEBIT card's wallet account, locked in this transaction and unchanged since; the source
 * clears it once it moves money (a holder shared by every source of one message).
 */
export function fundingSourceOf(card: CardRow, currency: string, context: RequestContext, locked: { account?: AccountRow | undefined } = {}): FundingSource {
  if (card.card_type === 'CREDIT') return creditLineFunding(context, card, currency);
  const asset = findAsset(currency, 'sandbox');
  assert(asset, `card currency ${currency} is not in the asset registry`);
  return new DebitWalletFunding(card.client_id, card.wallet_id, asset, context.now, locked);
}

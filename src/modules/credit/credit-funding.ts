import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError } from '../../platform/http/errors.js';
import { assert } from '../../platform/assert.js';
import { idAt } from '../../platform/ids.js';
import { formatAmount } from '../../platform/money/amount.js';
import type { Asset } from '../../platform/money/assets.js';
import { lockWalletAccount, postTransfer, type HistoryInput, type WalletsExist } from '../ledger/index.js';
import { collateralAssetOf, collateralPriceOf, findCreditLine, usdAsset, type CreditLineRow } from './credit-lines.service.js';
import type { Price } from '../trades/index.js';
import { ltvAtLeast, purchaseRestrictedLevel, thresholdOf } from './ltv.js';
import { figuresOf, lineChangedAt, recomputeLtv } from './ltv-monitor.js';
import './credit.tables.js';

/**
 * What a credit card spends from: its credit line (contract §12.2, §12.10). It has the shape of the
 * card processor's FundingSource (src/modules/cards/processor/funding-source.ts), which plugs it in
 * for CREDIT cards, so debit and credit cards run through one processor.
 *
 * - available = credit limit − (principal + interest + pending holds); an authorization above it is
 *   declined 51 by the processor; `refusal` adds 57 LTV_PURCHASE_RESTRICTED for a RESTRICTED line
 *   or a purchase that would take the LTV to the purchase-restricted threshold (and 57 for a line
 *   that is not ACTIVE).
 * - holds are rows of credit_line_holds and count in the line's pending_holds (so in its LTV);
 * - a capture or posting adds to the principal and pays the merchant from the client's
 *   CREDIT_LENDING account (CREDIT_LENDING → CARD_SETTLEMENT, no wallet record: the customer's
 *   wallets do not move); a completion is never refused, even beyond the limit;
 * - a refund pays the principal back (CARD_SETTLEMENT → CREDIT_LENDING); what exceeds the
 *   principal is credited to the collateral wallet in USD (and counted in the line's
 *   excess_paid_out); so is a purchase reversed (the same credit);
 * - a refund reversed takes back from the collateral wallet first, up to excess_paid_out and the
 *   wallet's AVAILABLE USD; the rest is lent again (added to the principal).
 *
 * Every change recomputes the line's LTV in the same transaction (ltv-monitor.ts), so holds,
 * captures and refunds write their LTV events with the card transaction.
 */
export interface CreditLineFundingSource {
  readonly asset: Asset;
  readonly historyTypes: { hold: string; capture: string; refund: string };
  available(tx: Tx): Promise<bigint>;
  refusal(tx: Tx, amount: bigint): Promise<'LTV_PURCHASE_RESTRICTED' | 'TRANSACTION_NOT_PERMITTED' | null>;
  placeHold(tx: Tx, amount: bigint, expiresAt: Date, history: HistoryInput): Promise<string>;
  increaseHold(tx: Tx, holdId: string, amount: bigint, expiresAt: Date, history: HistoryInput): Promise<void>;
  releaseHold(tx: Tx, holdId: string, amount: bigint | undefined, history: HistoryInput, expired?: boolean): Promise<void>;
  captureHold(tx: Tx, holdId: string, amount: bigint, history: HistoryInput): Promise<{ shortfall: bigint }>;
  post(tx: Tx, amount: bigint, options: { force: boolean }, history: HistoryInput): Promise<void>;
  refund(tx: Tx, amount: bigint, history: HistoryInput): Promise<void>;
  takeBackRefund(tx: Tx, amount: bigint, history: HistoryInput): Promise<void>;
}

export const creditCardHistoryTypes = { hold: 'CREDIT_CARD_HOLD', capture: 'CREDIT_CARD_CAPTURE', refund: 'CREDIT_CARD_REFUND' } as const;

class CreditLineFunding implements CreditLineFundingSource {
  readonly historyTypes = creditCardHistoryTypes;
  readonly asset: Asset;

  constructor(
    private readonly context: RequestContext,
    private readonly creditLineId: string,
    private readonly walletId: string,
    currency: string,
  ) {
    assert(currency === 'USD', `credit card currency ${currency}: credit lines are in USD`);
    this.asset = usdAsset();
  }

  /** The line, locked; read once per transaction until this source changes it (the processor's checks and its hold share one read). */
  private locked: CreditLineRow | null = null;

  private async line(tx: Tx): Promise<CreditLineRow> {
    if (this.locked) return this.locked;
    const line = await findCreditLine(tx, this.context.clientId, this.creditLineId, { forUpdate: true });
    assert(line, `credit line ${this.creditLineId} of a card is missing`);
    this.locked = line;
    return line;
  }

  private static availableOf(line: CreditLineRow): bigint {
    return BigInt(line.credit_limit) - BigInt(line.principal) - BigInt(line.interest) - BigInt(line.pending_holds);
  }

  async available(tx: Tx): Promise<bigint> {
    return CreditLineFunding.availableOf(await this.line(tx));
  }

  /**
   * A line that is not ACTIVE refuses every purchase; an ACTIVE one refuses a purchase that would
   * take its LTV, with the purchase held, to its purchase-restricted threshold or beyond. The
   * available credit (limit − what is owed) does not look at the collateral, so without this one
   * authorization on a line whose collateral had fallen in value, or been partly sold by a
   * liquidation, could lend far beyond it (and be liquidated at its completion).
   */
  async refusal(tx: Tx, amount: bigint): Promise<'LTV_PURCHASE_RESTRICTED' | 'TRANSACTION_NOT_PERMITTED' | null> {
    const line = await this.line(tx);
    if (line.status !== 'ACTIVE') return line.status === 'RESTRICTED' ? 'LTV_PURCHASE_RESTRICTED' : 'TRANSACTION_NOT_PERMITTED';
    if (amount <= 0n) return null;
    const figures = figuresOf(line, collateralAssetOf(line.collateral_asset), await this.price(tx, line));
    const after = { ...figures, debt: figures.debt + amount };
    return ltvAtLeast(after, thresholdOf(line.thresholds, purchaseRestrictedLevel)) ? 'LTV_PURCHASE_RESTRICTED' : null;
  }

  /** The collateral's price, read once per transaction: the decision and the recompute after the hold see the same one. */
  private readPrice: Promise<Price> | null = null;

  private price(tx: Tx, line: CreditLineRow): Promise<Price> {
    this.readPrice ??= collateralPriceOf(tx, this.context.clientId, line.collateral_asset);
    return this.readPrice;
  }

  private async requireAvailable(line: CreditLineRow, amount: bigint): Promise<void> {
    const available = CreditLineFunding.availableOf(line);
    if (available < amount) {
      throw new AppError('INSUFFICIENT_FUNDS', `Insufficient credit: ${formatAmount(amount, this.asset)} USD needed, ${formatAmount(available > 0n ? available : 0n, this.asset)} USD available.`, {
        details: [{ field: 'amount', message: 'exceeds the available credit' }],
      });
    }
  }

  /** Applies deltas to the line's figures, then recomputes its LTV (and writes what that causes). */
  private async change(tx: Tx, line: CreditLineRow, delta: { principal?: bigint; pendingHolds?: bigint; excessPaidOut?: bigint }): Promise<void> {
    this.locked = null;
    await tx
      .updateTable('credit_lines')
      .set({
        principal: (BigInt(line.principal) + (delta.principal ?? 0n)).toString(),
        pending_holds: (BigInt(line.pending_holds) + (delta.pendingHolds ?? 0n)).toString(),
        excess_paid_out: (BigInt(line.excess_paid_out) + (delta.excessPaidOut ?? 0n)).toString(),
        updated_at: lineChangedAt(this.context.now),
      })
      .where('client_id', '=', this.context.clientId)
      .where('id', '=', line.id)
      .execute();
    const price = await this.price(tx, line);
    await recomputeLtv(tx, this.context, { collateralAsset: collateralAssetOf(line.collateral_asset), price, lineIds: [line.id] });
  }

  private async hold(tx: Tx, holdId: string) {
    const hold = await tx
      .selectFrom('credit_line_holds')
      .selectAll()
      .where('client_id', '=', this.context.clientId)
      .where('id', '=', holdId)
      .forUpdate()
      .executeTakeFirst();
    assert(hold && hold.credit_line_id === this.creditLineId, `credit line hold ${holdId} is missing`);
    if (hold.status !== 'OPEN') throw new AppError('CONFLICT', `The hold is ${hold.status}; only an OPEN hold can change.`);
    return { id: hold.id, amount: BigInt(hold.amount) };
  }

  private async setHold(tx: Tx, holdId: string, amount: bigint, status: 'OPEN' | 'CAPTURED' | 'RELEASED' | 'EXPIRED'): Promise<void> {
    await tx
      .updateTable('credit_line_holds')
      .set({ amount: amount.toString(), status, updated_at: this.context.now })
      .where('client_id', '=', this.context.clientId)
      .where('id', '=', holdId)
      .execute();
  }

  async placeHold(tx: Tx, amount: bigint, _expiresAt: Date, history: HistoryInput): Promise<string> {
    const line = await this.line(tx);
    await this.requireAvailable(line, amount);
    const id = idAt(this.context.now);
    await tx
      .insertInto('credit_line_holds')
      .values({ client_id: this.context.clientId, id, credit_line_id: line.id, status: 'OPEN', amount: amount.toString(), parent_transaction_id: history.parentTransactionId, created_at: this.context.now, updated_at: this.context.now })
      .execute();
    await this.change(tx, line, { pendingHolds: amount });
    return id;
  }

  async increaseHold(tx: Tx, holdId: string, amount: bigint, _expiresAt: Date, _history: HistoryInput): Promise<void> {
    const line = await this.line(tx);
    const hold = await this.hold(tx, holdId);
    await this.requireAvailable(line, amount);
    await this.setHold(tx, holdId, hold.amount + amount, 'OPEN');
    await this.change(tx, line, { pendingHolds: amount });
  }

  async releaseHold(tx: Tx, holdId: string, amount: bigint | undefined, _history: HistoryInput, expired = false): Promise<void> {
    const line = await this.line(tx);
    const hold = await this.hold(tx, holdId);
    const released = amount === undefined || amount > hold.amount ? hold.amount : amount;
    const left = hold.amount - released;
    await this.setHold(tx, holdId, left, left > 0n ? 'OPEN' : expired ? 'EXPIRED' : 'RELEASED');
    await this.change(tx, line, { pendingHolds: -released });
  }

  async captureHold(tx: Tx, holdId: string, amount: bigint, history: HistoryInput): Promise<{ shortfall: bigint }> {
    const line = await this.line(tx);
    const hold = await this.hold(tx, holdId);
    await this.setHold(tx, holdId, 0n, 'CAPTURED');
    await this.payMerchant(tx, amount, history);
    await this.change(tx, line, { pendingHolds: -hold.amount, principal: amount });
    // A completion above the hold is never refused: the line may go past its limit.
    return { shortfall: 0n };
  }

  async post(tx: Tx, amount: bigint, options: { force: boolean }, history: HistoryInput): Promise<void> {
    const line = await this.line(tx);
    if (!options.force) await this.requireAvailable(line, amount);
    await this.payMerchant(tx, amount, history);
    await this.change(tx, line, { principal: amount });
  }

  async refund(tx: Tx, amount: bigint, history: HistoryInput): Promise<void> {
    const line = await this.line(tx);
    const principal = BigInt(line.principal);
    const repaid = amount < principal ? amount : principal;
    const excess = amount - repaid;
    const legs = [
      { from: { system: 'CARD_SETTLEMENT' as const }, to: { system: 'CREDIT_LENDING' as const }, amount: repaid, purpose: creditCardHistoryTypes.refund },
      { from: { system: 'CARD_SETTLEMENT' as const }, to: { walletId: this.walletId }, amount: excess, purpose: creditCardHistoryTypes.refund },
    ].filter((leg) => leg.amount > 0n);
    // The card row's foreign key guarantees its wallet exists.
    const walletExists: WalletsExist = async () => new Set([`${this.context.clientId}/${this.walletId}`]);
    if (legs.length > 0) await postTransfer(tx, { clientId: this.context.clientId, now: this.context.now, asset: this.asset, legs, history }, { walletsExist: walletExists });
    await this.change(tx, line, { principal: -repaid, excessPaidOut: excess });
  }

  /**
   * A refund reversed. What credits paid into the collateral wallet beyond the principal and no
   * reversal took back yet (excess_paid_out) leaves the wallet first, as far as its AVAILABLE USD
   * covers it; the rest is lent again (added to the principal, CREDIT_LENDING → CARD_SETTLEMENT).
   * What the wallet could not pay is settled all the same: the principal owes it, and
   * excess_paid_out no longer counts it. Until 2026-12-03 all of it went on the principal and the
   * wallet kept the excess, so a purchase and its refund both reversed left the line owing what the
   * wallet had been paid (found by an audit).
   */
  async takeBackRefund(tx: Tx, amount: bigint, history: HistoryInput): Promise<void> {
    const line = await this.line(tx);
    const paidOut = BigInt(line.excess_paid_out);
    const settled = amount < paidOut ? amount : paidOut;
    // Locked before it is read: the wallet pays what it has when the ledger moves it.
    const account = settled > 0n ? await lockWalletAccount(tx, this.context.clientId, this.walletId, this.asset.code) : undefined;
    const walletAvailable = account === undefined ? 0n : BigInt(account.available);
    const fromWallet = walletAvailable <= 0n ? 0n : settled < walletAvailable ? settled : walletAvailable;
    const lent = amount - fromWallet;
    const legs = [
      { from: { walletId: this.walletId }, to: { system: 'CARD_SETTLEMENT' as const }, amount: fromWallet, purpose: creditCardHistoryTypes.capture },
      { from: { system: 'CREDIT_LENDING' as const }, to: { system: 'CARD_SETTLEMENT' as const }, amount: lent, purpose: creditCardHistoryTypes.capture },
    ].filter((leg) => leg.amount > 0n);
    await postTransfer(tx, { clientId: this.context.clientId, now: this.context.now, asset: this.asset, legs, history }, account === undefined ? {} : { locked: { accounts: [account] } });
    await this.change(tx, line, { principal: lent, excessPaidOut: -settled });
  }

  private async payMerchant(tx: Tx, amount: bigint, history: HistoryInput): Promise<void> {
    if (amount <= 0n) return;
    await postTransfer(tx, {
      clientId: this.context.clientId,
      now: this.context.now,
      asset: this.asset,
      legs: [{ from: { system: 'CREDIT_LENDING' }, to: { system: 'CARD_SETTLEMENT' }, amount, purpose: creditCardHistoryTypes.capture }],
      history,
    });
  }
}

/** The funding source of a credit card: its credit line. */
export function creditLineFunding(context: RequestContext, card: { credit_line_id: string | null; wallet_id: string }, currency: string): CreditLineFundingSource {
  assert(card.credit_line_id, 'a credit card without a credit line');
  return new CreditLineFunding(context, card.credit_line_id, card.wallet_id, currency);
}

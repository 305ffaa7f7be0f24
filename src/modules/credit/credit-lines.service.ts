import { sql, type Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { paginate, type ListQuery, type Pagination } from '../../platform/http/pagination.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { formatAmount, parseAmount } from '../../platform/money/amount.js';
import { requireAsset, type Asset } from '../../platform/money/assets.js';
import { findCustomer, findWallet } from '../customers/index.js';
import { incrementHold, placeHold, postTransfer, releaseHold, type HistoryInput } from '../ledger/index.js';
import { formatPrice, priceSymbolOf, storedSandboxPrice, type Price, type PriceChangedHook } from '../trades/index.js';
import { scheduleTimerNoLaterThan, type TimerKind } from '../timers/index.js';
import {
  collateralValueCents,
  defaultCreditSettings,
  formatE4,
  leastCollateralBelow,
  levelOf,
  liquidationLevel,
  ltvAbove,
  ltvAtLeast,
  ltvE4,
  thresholdNames,
  thresholdOf,
  interestCarryDenominator,
  type CreditSettings,
  type LtvLevel,
} from './ltv.js';
import { lineChangedAt, recomputeLtv } from './ltv-monitor.js';
import type { CreditLineStatus, CreditLinesTable } from './credit.tables.js';
import './credit.tables.js';

export type CreditLineRow = Selectable<CreditLinesTable>;
type Queryable = Db | Tx;

export const collateralAssets = ['BTC', 'ETH'] as const;
export const creditHistoryTypes = {
  lock: 'COLLATERAL_LOCK_SUCCESS',
  release: 'COLLATERAL_RELEASE',
  payment: 'CREDIT_LINE_PAYMENT',
} as const;

const dayMs = 86_400_000;
/** A client's daily interest: one timer per client (its subject is the client's id), due at the next UTC midnight of its lines. */
export const interestTimerKind = 'credit.interest';
/** One timer per line and midnight until 2026-12-06; those still scheduled run their client's accrual when due. */
const lineInterestTimerKind = 'credit-line.interest';

export function usdAsset(): Asset {
  return requireAsset('USD', 'sandbox');
}

export function collateralAssetOf(code: string): Asset {
  return requireAsset(code, 'sandbox');
}

/** The price a line's collateral is valued at now (the client's sandbox price, read in the caller's transaction). */
export function collateralPriceOf(db: Queryable, clientId: string, assetCode: string): Promise<Price> {
  return storedSandboxPrice(db, clientId, priceSymbolOf(assetCode));
}

// ---- settings ----------------------------------------------------------------------------------

export async function creditSettingsOf(db: Queryable, clientId: string): Promise<CreditSettings> {
  const row = await db.selectFrom('credit_settings').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  return row ? { thresholds: row.thresholds, opening: row.opening, liquidationPenalty: row.liquidation_penalty } : defaultCreditSettings;
}

export async function saveCreditSettings(tx: Tx, context: RequestContext, settings: CreditSettings): Promise<void> {
  await tx
    .insertInto('credit_settings')
    .values({ client_id: context.clientId, thresholds: settings.thresholds, opening: settings.opening, liquidation_penalty: settings.liquidationPenalty, updated_at: context.now })
    .onConflict((conflict) => conflict.column('client_id').doUpdateSet({ thresholds: settings.thresholds, opening: settings.opening, liquidation_penalty: settings.liquidationPenalty, updated_at: context.now }))
    .execute();
}

// ---- views -------------------------------------------------------------------------------------

export { thresholdNames };

export type ThresholdsView = Record<(typeof thresholdNames)[number] | 'opening', string>;

export function thresholdsView(thresholds: readonly number[], opening: number): ThresholdsView {
  const at = (level: number) => formatE4(BigInt(thresholdOf(thresholds, level)));
  return {
    opening: formatE4(BigInt(opening)),
    warning: at(0),
    purchaseRestricted: at(1),
    collateralNeeded: at(2),
    urgentCollateralNeeded: at(3),
    liquidationWarning: at(4),
    liquidation: at(5),
  };
}

/** An APR of ten-thousandths as a decimal string ("0.1250"). */
function formatApr(apr: number): string {
  return formatE4(BigInt(apr));
}

export interface CreditLineView {
  id: string;
  customerId: string;
  collateralWalletId: string;
  collateralAsset: 'BTC' | 'ETH';
  currency: 'USD';
  creditLimit: string;
  apr: string;
  status: CreditLineStatus;
  collateral: { asset: string; amount: string; price: string; value: string };
  outstanding: { principal: string; interest: string; pendingHolds: string; total: string };
  availableCredit: string;
  refundExcessPaidOut: string;
  ltv: string | null;
  ltvLevel: LtvLevel | 'HEALTHY';
  thresholds: ThresholdsView;
  liquidationPenaltyRate: string;
  lastLtvEventAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function creditLineView(row: CreditLineRow, price: Price): CreditLineView {
  const usd = usdAsset();
  const asset = collateralAssetOf(row.collateral_asset);
  const collateral = BigInt(row.collateral_amount);
  const principal = BigInt(row.principal);
  const interest = BigInt(row.interest);
  const holds = BigInt(row.pending_holds);
  const total = principal + interest + holds;
  const ltv = ltvE4({ debt: total, collateral, assetScale: asset.scale, price });
  const available = BigInt(row.credit_limit) - total;
  return {
    id: row.id,
    customerId: row.customer_id,
    collateralWalletId: row.collateral_wallet_id,
    collateralAsset: row.collateral_asset as 'BTC' | 'ETH',
    currency: row.currency as 'USD',
    creditLimit: formatAmount(BigInt(row.credit_limit), usd),
    apr: formatApr(row.apr),
    status: row.status,
    collateral: { asset: asset.code, amount: formatAmount(collateral, asset), price: formatPrice(price), value: formatAmount(collateralValueCents(collateral, asset.scale, price), usd) },
    outstanding: { principal: formatAmount(principal, usd), interest: formatAmount(interest, usd), pendingHolds: formatAmount(holds, usd), total: formatAmount(total, usd) },
    // Negative when forced card postings (completions above the hold) took the line past its limit.
    availableCredit: available < 0n ? `-${formatAmount(-available, usd)}` : formatAmount(available, usd),
    refundExcessPaidOut: formatAmount(BigInt(row.excess_paid_out), usd),
    ltv: ltv === null ? null : formatE4(ltv),
    ltvLevel: levelOf(row.ltv_fired) ?? 'HEALTHY',
    thresholds: thresholdsView(row.thresholds, row.opening),
    liquidationPenaltyRate: formatE4(BigInt(row.liquidation_penalty)),
    lastLtvEventAt: row.last_ltv_event_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

async function viewOf(db: Queryable, row: CreditLineRow): Promise<CreditLineView> {
  return creditLineView(row, await collateralPriceOf(db, row.client_id, row.collateral_asset));
}

// ---- reads -------------------------------------------------------------------------------------

export async function findCreditLine(db: Queryable, clientId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<CreditLineRow | undefined> {
  if (!isUuid(id)) return undefined;
  let query = db.selectFrom('credit_lines').selectAll().where('client_id', '=', clientId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

async function lockLine(tx: Tx, clientId: string, id: string): Promise<CreditLineRow> {
  const row = await findCreditLine(tx, clientId, id, { forUpdate: true });
  if (!row) throw notFound('Credit line');
  return row;
}

export async function getCreditLine(db: Db, clientId: string, id: string): Promise<CreditLineView> {
  const row = await findCreditLine(db, clientId, id);
  if (!row) throw notFound('Credit line');
  return viewOf(db, row);
}

export interface CreditLineListFilters extends ListQuery {
  customerId?: string | undefined;
  status?: CreditLineStatus | undefined;
}

export async function listCreditLines(db: Db, clientId: string, filters: CreditLineListFilters): Promise<{ data: CreditLineView[]; pagination: Pagination }> {
  let query = db.selectFrom('credit_lines').selectAll().where('client_id', '=', clientId);
  if (filters.customerId !== undefined) {
    // A customer the client does not have answers 404 naming the filter, as every list filtered by a resource does.
    const customer = await findCustomer(db, clientId, filters.customerId);
    if (!customer) throw notFound('Customer', 'customerId');
    query = query.where('customer_id', '=', customer.id);
  }
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  const { rows, pagination } = await paginate(db, query, filters, { id: 'id', createdAt: 'created_at' });
  const prices = new Map<string, Price>();
  const data: CreditLineView[] = [];
  for (const row of rows) {
    let price = prices.get(row.collateral_asset);
    if (!price) prices.set(row.collateral_asset, (price = await collateralPriceOf(db, clientId, row.collateral_asset)));
    data.push(creditLineView(row, price));
  }
  return { data, pagination };
}

// ---- writes ------------------------------------------------------------------------------------

export interface CreateCreditLineInput {
  customerId: string;
  collateralWalletId: string;
  collateralAsset: string;
  currency: string;
  creditLimit: string;
  apr?: string | undefined;
}

/** A rate from "0" to "1" with at most four decimals, in ten-thousandths ("0.1250" → 1250); 400 naming `field` otherwise. */
export function parseRatioE4(value: string, field: string): number {
  const match = /^(0|1)(?:\.(\d{1,4}))?$/.exec(value);
  const e4 = match ? Number(match[1]) * 10_000 + Number((match[2] ?? '').padEnd(4, '0')) : NaN;
  if (!(e4 >= 0 && e4 <= 10_000)) {
    throw new AppError('VALIDATION_ERROR', `${field} must be a decimal string from "0" to "1" with at most four decimals ("0.1250" is 12.5 %).`, {
      details: [{ field, message: 'not a rate from 0 to 1 with at most four decimals' }],
    });
  }
  return e4;
}

function startOfUtcDay(moment: Date): Date {
  return new Date(Math.floor(moment.getTime() / dayMs) * dayMs);
}

/**
 * POST /v1/credit-lines. Rules, first failing wins: creditLimit (400 INVALID_AMOUNT), apr (400);
 * the customer exists (404); the wallet is the customer's (404); KYC APPROVED (409
 * KYC_NOT_APPROVED). The line starts PENDING_COLLATERAL with the client's LTV ladder.
 */
export async function createCreditLine(tx: Tx, context: RequestContext, input: CreateCreditLineInput): Promise<CreditLineView> {
  const usd = usdAsset();
  const creditLimit = parseAmount(input.creditLimit, usd, 'creditLimit');
  const apr = input.apr === undefined ? 0 : parseRatioE4(input.apr, 'apr');
  const customer = await findCustomer(tx, context.clientId, input.customerId);
  if (!customer) throw notFound('Customer', 'customerId');
  const wallet = await findWallet(tx, context.clientId, input.collateralWalletId);
  if (!wallet || wallet.customer_id !== customer.id) {
    throw new AppError('NOT_FOUND', 'Wallet not found', { details: [{ field: 'collateralWalletId', message: 'no such wallet of this customer' }] });
  }
  if (customer.onboarding_status !== 'APPROVED') {
    throw new AppError('KYC_NOT_APPROVED', `A credit line needs the customer's ${customer.type === 'LEGAL' ? 'KYB' : 'KYC'} to be APPROVED; it is ${customer.onboarding_status ?? 'not started'}.`);
  }
  const settings = await creditSettingsOf(tx, context.clientId);
  const row = await tx
    .insertInto('credit_lines')
    .values({
      client_id: context.clientId,
      id: idAt(context.now),
      customer_id: customer.id,
      collateral_wallet_id: wallet.id,
      collateral_asset: input.collateralAsset,
      currency: input.currency,
      credit_limit: creditLimit,
      apr,
      status: 'PENDING_COLLATERAL',
      thresholds: settings.thresholds,
      opening: settings.opening,
      liquidation_penalty: settings.liquidationPenalty,
      collateral_amount: '0',
      collateral_hold_id: null,
      principal: '0',
      interest: '0',
      interest_carry: '0',
      pending_holds: '0',
      ltv_fired: 0,
      residual_debt: false,
      needs_cover: false,
      excess_paid_out: '0',
      last_ltv_event_at: null,
      interest_accrued_until: startOfUtcDay(context.now),
      created_at: context.now,
      updated_at: context.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (apr > 0) await scheduleInterest(tx, context, row.interest_accrued_until);
  return viewOf(tx, row);
}

function amountField(value: string, asset: Asset): bigint {
  return parseAmount(value, asset, 'amount');
}

/**
 * POST /v1/credit-lines/:id/collateral: moves `amount` of the collateral asset from the collateral
 * wallet's AVAILABLE to the line's hold (RESERVED; 422 INSUFFICIENT_FUNDS when short). A line
 * PENDING_COLLATERAL becomes ACTIVE once value × opening LTV covers the limit (the recompute
 * decides, so a price rise opens it too).
 */
export async function lockCollateral(tx: Tx, context: RequestContext, id: string, amountText: string): Promise<CreditLineView> {
  const line = await lockLine(tx, context.clientId, id);
  const asset = collateralAssetOf(line.collateral_asset);
  const amount = amountField(amountText, asset);
  if (line.status === 'CLOSED') throw notActive(line);
  // A lock that leaves a line owing principal or interest at or above its liquidation threshold
  // would be sold at once, less the penalty, and answered "Collateral locked" (a line left with debt
  // after a full liquidation, say; found by an audit, 2026-12-02): refused, naming what is enough.
  const price = await collateralPriceOf(tx, context.clientId, line.collateral_asset);
  const owed = BigInt(line.principal) + BigInt(line.interest);
  const after = { debt: owed + BigInt(line.pending_holds), collateral: BigInt(line.collateral_amount) + amount, assetScale: asset.scale, price };
  const liquidation = thresholdOf(line.thresholds, liquidationLevel);
  if (owed > 0n && ltvAtLeast(after, liquidation)) {
    const ltv = ltvE4(after, 'up');
    const enough = leastCollateralBelow(after, liquidation) - BigInt(line.collateral_amount);
    throw new AppError(
      'LTV_TOO_HIGH',
      `Locking ${formatAmount(amount, asset)} ${asset.code} would leave the LTV at ${ltv === null ? 'infinity' : formatE4(ltv)}, at or above the liquidation threshold ${formatE4(BigInt(liquidation))}: ` +
        `it would be sold at once, less the penalty. Lock at least ${formatAmount(enough, asset)} ${asset.code}, or repay first.`,
      { details: [{ field: 'amount', message: 'would leave the LTV at or above the liquidation threshold' }] },
    );
  }
  const history: HistoryInput = { parentTransactionId: idAt(context.now), type: creditHistoryTypes.lock, traceId: context.traceId };
  let holdId = line.collateral_hold_id;
  if (holdId === null) {
    holdId = (await placeHold(tx, { clientId: context.clientId, now: context.now, wallet: { walletId: line.collateral_wallet_id, field: 'collateralWalletId' }, asset, amount, expiresAt: null, history })).holdId;
  } else {
    await incrementHold(tx, { clientId: context.clientId, now: context.now, holdId, amount, history });
  }
  await tx
    .updateTable('credit_lines')
    .set({ collateral_amount: BigInt(line.collateral_amount) + amount, collateral_hold_id: holdId, updated_at: lineChangedAt(context.now) })
    .where('client_id', '=', context.clientId)
    .where('id', '=', line.id)
    .execute();
  // The recompute also opens a line waiting for collateral once it covers the limit.
  await recomputeLtv(tx, context, { collateralAsset: asset, price, lineIds: [line.id] });
  return viewOf(tx, await lockLine(tx, context.clientId, line.id));
}

function notActive(line: CreditLineRow): AppError {
  return new AppError('CREDIT_LINE_NOT_ACTIVE', `The credit line is ${line.status}.`);
}

/**
 * POST /v1/credit-lines/:id/collateral/release: gives `amount` back to the wallet's AVAILABLE, if
 * it is locked (422 INSUFFICIENT_FUNDS otherwise) and the LTV after it is at most the opening LTV
 * (422 LTV_TOO_HIGH otherwise).
 */
export async function releaseCollateral(tx: Tx, context: RequestContext, id: string, amountText: string): Promise<CreditLineView> {
  const line = await lockLine(tx, context.clientId, id);
  const asset = collateralAssetOf(line.collateral_asset);
  const amount = amountField(amountText, asset);
  const locked = BigInt(line.collateral_amount);
  if (amount > locked || line.collateral_hold_id === null) {
    throw new AppError('INSUFFICIENT_FUNDS', `Only ${formatAmount(locked, asset)} ${asset.code} is locked on this credit line.`, {
      details: [{ field: 'amount', message: 'exceeds the locked collateral' }],
    });
  }
  const price = await collateralPriceOf(tx, context.clientId, line.collateral_asset);
  const debt = BigInt(line.principal) + BigInt(line.interest) + BigInt(line.pending_holds);
  const after = { debt, collateral: locked - amount, assetScale: asset.scale, price };
  if (ltvAbove(after, line.opening)) {
    // Rounded up: rounded down, a figure just above the opening printed as the opening itself.
    const ltv = ltvE4(after, 'up');
    throw new AppError('LTV_TOO_HIGH', `Releasing ${formatAmount(amount, asset)} ${asset.code} would take the LTV to ${ltv === null ? 'infinity' : formatE4(ltv)}, above the opening LTV ${formatE4(BigInt(line.opening))}.`, {
      details: [{ field: 'amount', message: 'would take the LTV above the opening LTV' }],
    });
  }
  await releaseHold(tx, { clientId: context.clientId, now: context.now, holdId: line.collateral_hold_id, amount, history: { parentTransactionId: idAt(context.now), type: creditHistoryTypes.release, traceId: context.traceId } });
  await tx
    .updateTable('credit_lines')
    // All of it released: the hold is closed, and the next lock opens a new one.
    // Marked as needing cover: the recomputation below clears it when what stays locked still covers
    // the limit at the opening LTV; otherwise the line is RESTRICTED until collateral covers it again.
    .set({ collateral_amount: locked - amount, ...(locked === amount ? { collateral_hold_id: null } : {}), needs_cover: true, updated_at: lineChangedAt(context.now) })
    .where('client_id', '=', context.clientId)
    .where('id', '=', line.id)
    .execute();
  await recomputeLtv(tx, context, { collateralAsset: asset, price, lineIds: [line.id] });
  return viewOf(tx, await lockLine(tx, context.clientId, line.id));
}

/**
 * POST /v1/credit-lines/:id/payments: USD from a wallet of the line's customer (404 otherwise)
 * repays interest first, then principal. More than is owed (principal + interest; pending holds
 * are not owed yet) is 422 AMOUNT_EXCEEDS_OUTSTANDING; not enough AVAILABLE is 422
 * INSUFFICIENT_FUNDS.
 */
export async function repayCreditLine(tx: Tx, context: RequestContext, id: string, input: { walletId: string; amount: string }): Promise<CreditLineView & { payment: { parentTransactionId: string; interestPaid: string; principalPaid: string } }> {
  const usd = usdAsset();
  // The line first (404), then the amount, as the lock and release routes do.
  const line = await lockLine(tx, context.clientId, id);
  const amount = parseAmount(input.amount, usd, 'amount');
  const wallet = await findWallet(tx, context.clientId, input.walletId);
  if (!wallet || wallet.customer_id !== line.customer_id) {
    throw new AppError('NOT_FOUND', 'Wallet not found', { details: [{ field: 'walletId', message: 'no such wallet of the credit line\'s customer' }] });
  }
  const interest = BigInt(line.interest);
  const principal = BigInt(line.principal);
  if (amount > interest + principal) {
    throw new AppError('AMOUNT_EXCEEDS_OUTSTANDING', `The credit line owes ${formatAmount(interest + principal, usd)} USD (principal and interest); a payment cannot be more.`, {
      details: [{ field: 'amount', message: 'exceeds what the credit line owes' }],
    });
  }
  const interestPaid = amount < interest ? amount : interest;
  const principalPaid = amount - interestPaid;
  const parentTransactionId = idAt(context.now);
  const legs = [
    { from: { walletId: wallet.id, field: 'walletId' }, to: { system: 'FEES' as const }, amount: interestPaid, purpose: creditHistoryTypes.payment },
    { from: { walletId: wallet.id, field: 'walletId' }, to: { system: 'CREDIT_LENDING' as const }, amount: principalPaid, purpose: creditHistoryTypes.payment },
  ].filter((leg) => leg.amount > 0n);
  await postTransfer(tx, { clientId: context.clientId, now: context.now, asset: usd, legs, history: { parentTransactionId, type: creditHistoryTypes.payment, traceId: context.traceId } });
  await tx
    .updateTable('credit_lines')
    .set({ interest: interest - interestPaid, principal: principal - principalPaid, updated_at: lineChangedAt(context.now) })
    .where('client_id', '=', context.clientId)
    .where('id', '=', line.id)
    .execute();
  const price = await collateralPriceOf(tx, context.clientId, line.collateral_asset);
  await recomputeLtv(tx, context, { collateralAsset: collateralAssetOf(line.collateral_asset), price, lineIds: [line.id] });
  const view = await viewOf(tx, await lockLine(tx, context.clientId, line.id));
  return { ...view, payment: { parentTransactionId, interestPaid: formatAmount(interestPaid, usd), principalPaid: formatAmount(principalPaid, usd) } };
}

// ---- interest ----------------------------------------------------------------------------------

/** The client's interest timer, due at the next midnight after `accruedUntil` unless it is due sooner already. */
async function scheduleInterest(tx: Tx, context: RequestContext, accruedUntil: Date): Promise<void> {
  await scheduleTimerNoLaterThan(tx, { clientId: context.clientId, kind: interestTimerKind, subjectId: context.clientId, dueAt: new Date(accruedUntil.getTime() + dayMs), now: context.now });
}

/**
 * Daily interest (contract §12.10): at each UTC midnight of the client's clock, a day of interest
 * on each line's principal at that moment at `apr` / 365, the fraction of a cent carried to the
 * next day. One statement accrues every open line of the client with an APR that has a midnight
 * to count, in the lines' id order (their lock order), then their LTVs are recomputed and the
 * client's timer set for the next midnight. The clock's advance runs the timer at each midnight
 * in turn; the worker, when it runs late, accrues the days missed at once on the principal as it
 * is: `d` days of the daily rule are exactly `floor((carry + d × principal × apr) / 3,650,000)`
 * cents, the remainder carried (apr in hundredths of a percent, 365 days). Until 2026-12-06 each
 * line had a timer of its own per midnight: a transaction per line and day.
 */
async function accrueClientInterest(tx: Tx, context: RequestContext): Promise<void> {
  const accrued = await sql<{ id: string; collateral_asset: string }>`
    WITH due AS (
      SELECT id, principal, apr, interest_carry, interest_accrued_until,
        floor(extract(epoch FROM (${context.now}::timestamptz - interest_accrued_until)) / 86400)::integer AS days
      FROM credit_lines
      WHERE client_id = ${context.clientId} AND status <> 'CLOSED' AND apr > 0
        AND interest_accrued_until <= ${context.now}::timestamptz - interval '1 day'
      ORDER BY id
      FOR UPDATE
    ),
    totals AS (
      SELECT id, days, interest_accrued_until, interest_carry + days * principal * apr AS total FROM due
    )
    UPDATE credit_lines l
       SET interest = l.interest + div(t.total, ${interestCarryDenominator.toString()}::numeric),
           interest_carry = mod(t.total, ${interestCarryDenominator.toString()}::numeric)::bigint,
           interest_accrued_until = t.interest_accrued_until + t.days * interval '1 day',
           updated_at = ${lineChangedAt(context.now)}
      FROM totals t
     WHERE l.client_id = ${context.clientId} AND l.id = t.id
    RETURNING l.id, l.collateral_asset`.execute(tx);
  const assets = [...new Set(accrued.rows.map((row) => row.collateral_asset))].sort();
  for (const asset of assets) {
    const price = await collateralPriceOf(tx, context.clientId, asset);
    const lineIds = accrued.rows.filter((row) => row.collateral_asset === asset).map((row) => row.id);
    await recomputeLtv(tx, context, { collateralAsset: collateralAssetOf(asset), price, lineIds });
  }
  const next = await tx
    .selectFrom('credit_lines')
    .select(sql<Date | null>`min(interest_accrued_until)`.as('until'))
    .where('client_id', '=', context.clientId)
    .where('status', '<>', 'CLOSED')
    .where('apr', '>', 0)
    .executeTakeFirst();
  if (next?.until) await scheduleInterest(tx, context, next.until);
}

/** The timer kind of daily interest (src/modules/timer-kinds.ts): one per client. */
export const creditInterestTimer: TimerKind = {
  kind: interestTimerKind,
  run: (tx, context) => accrueClientInterest(tx, context),
};

/** A line's own interest timer, scheduled before 2026-12-06: runs its client's accrual (and sets the client's timer). */
export const lineInterestTimer: TimerKind = {
  kind: lineInterestTimerKind,
  run: (tx, context) => accrueClientInterest(tx, context),
};

/**
 * The trades module's price-changed hook: a change of a collateral asset's price recomputes every
 * open line on that asset, in bulk, in the transaction that sets the price.
 */
export const creditPriceChangedHook: PriceChangedHook = async (tx, change) => {
  const asset = collateralAssets.find((code) => priceSymbolOf(code) === change.symbol);
  if (!asset) return;
  const context = { clientId: change.clientId, traceId: change.traceId, now: change.changedAt };
  await recomputeLtv(tx, context, { collateralAsset: collateralAssetOf(asset), price: change.price });
};


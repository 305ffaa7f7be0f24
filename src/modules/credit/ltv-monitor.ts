import { sql, type RawBuilder } from 'kysely';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { assert } from '../../platform/assert.js';
import { idAt } from '../../platform/ids.js';
import { formatAmount } from '../../platform/money/amount.js';
import { requireAsset, type Asset } from '../../platform/money/assets.js';
import { runLedgerOperations, type LedgerOperation } from '../ledger/index.js';
import { formatPrice, type Price } from '../trades/index.js';
import { recordEvents, type EventToRecord } from '../webhooks/index.js';
import {
  collateralValueCents,
  formatE4,
  liquidationLevel,
  ltvAtLeast,
  ltvE4,
  eventTypeOf,
  thresholdOf,
  ltvScaleFactor,
  newlyFired,
  planLiquidation,
  purchaseRestrictedLevel,
  rearmGapE4,
  type LiquidationPlan,
  type LtvFigures,
} from './ltv.js';
import './credit.tables.js';

/** History types of the ledger records a liquidation writes (contract §12.10, OpenBaaS additions). */
export const liquidationHistoryType = 'COLLATERAL_LIQUIDATION' as const;
export const liquidationFeeHistoryType = 'LIQUIDATION_FEE';

/** Which lines to recompute: every open line of one collateral asset of a client, or some of them. */
export interface RecomputeTarget {
  collateralAsset: Asset;
  /** The collateral's current price (the one the change set, or the stored one). */
  price: Price;
  /** Only these lines (all of the asset when absent). */
  lineIds?: readonly string[];
}

interface RecomputedRow {
  id: string;
  customer_id: string;
  collateral_wallet_id: string;
  collateral_hold_id: string | null;
  currency: string;
  prev_mask: number;
  next_mask: number;
  liquidate: boolean;
  principal: string;
  interest: string;
  pending_holds: string;
  collateral_amount: string;
  thresholds: number[];
  opening: number;
  liquidation_penalty: number;
  /** The line's new `updated_at`, when its events are dated (after its previous change). */
  moment: Date;
}

/**
 * A credit line's `updated_at` for a change at `now`: never earlier than it is (a change dated
 * ahead of the clock may have come first), so the moment recomputeLtv dates the line's events
 * after stays the line's last change.
 */
export function lineChangedAt(now: Date): RawBuilder<Date> {
  return sql<Date>`GREATEST(${now}::timestamptz, updated_at)`;
}

/**
 * Recomputes the LTV of lines after a change (a price, a hold, a capture, interest, a repayment,
 * collateral) inside the change's transaction, and writes what it causes there:
 *
 * - each level whose threshold the LTV reached since it was last armed sets its bit and records its
 *   event once (lowest level first); a bit clears when the LTV is 0.01 below its threshold again;
 * - the purchase-restricted bit (or no collateral) makes an ACTIVE line RESTRICTED, its clearing
 *   makes it ACTIVE again;
 * - a line at or above the liquidation threshold with collateral left and principal or interest
 *   owed is liquidated (sell, repay, LTV_LIQUIDATED), then recomputed again (a sale always takes
 *   something, so this ends: the line is below the threshold, out of collateral, or owes nothing).
 *
 * The whole set is one UPDATE, whatever its size: the comparisons are the exact ones of ltv.ts
 * (debt × 10^(4+s) against threshold × collateral × price units) in numeric arithmetic. Lines are
 * locked in id order, after the change's own locks.
 */
export async function recomputeLtv(tx: Tx, context: RequestContext, target: RecomputeTarget): Promise<void> {
  const { collateralAsset, price } = target;
  const factor = ltvScaleFactor(collateralAsset.scale, price.scale).toString();
  const units = price.units.toString();
  const onlyLines = target.lineIds ? sql`AND s.id = ANY(${[...target.lineIds]}::uuid[])` : sql``;
  const restrictedBit = 1 << purchaseRestrictedLevel;
  const liquidationIndex = liquidationLevel + 1;
  const result = await sql<RecomputedRow>`
    WITH current AS (
      SELECT s.client_id, s.id, s.status, s.collateral_amount, s.ltv_fired AS prev_mask, s.residual_debt, s.needs_cover,
        -- A line's events are dated after its last change (as a card message is after its
        -- lifecycle's, datedAfter): a change dated 1 ms ahead of the clock (a message on a card
        -- lifecycle changed in the same millisecond) came before this one.
        GREATEST(${context.now}::timestamptz, s.updated_at + interval '1 millisecond') AS moment,
        (SELECT coalesce(bit_or(1 << (t.i - 1)::int), 0)::int
           FROM unnest(s.thresholds) WITH ORDINALITY AS t(th, i)
          WHERE (v.debt > 0 AND v.lhs >= t.th * v.base)
             OR ((s.ltv_fired >> (t.i - 1)::int) & 1 = 1 AND NOT (v.debt = 0 OR v.lhs < (t.th - ${rearmGapE4}) * v.base))) AS next_mask,
        -- A sale repays principal and interest: a line that owes only open card holds is not sold
        -- (it is restricted; the holds' completions make principal, and the next change sells).
        (s.principal + s.interest > 0 AND s.collateral_amount > 0 AND v.lhs >= s.thresholds[${liquidationIndex}] * v.base) AS liquidate,
        -- A line waiting for collateral opens once collateral value × the opening LTV covers its limit.
        (s.collateral_amount > 0 AND v.base * s.opening >= s.credit_limit * ${factor}::numeric) AS covers_limit,
        (s.principal + s.interest = 0) AS repaid
      FROM credit_lines s
      CROSS JOIN LATERAL (
        SELECT s.principal + s.interest + s.pending_holds AS debt,
               (s.principal + s.interest + s.pending_holds) * ${factor}::numeric AS lhs,
               s.collateral_amount * ${units}::numeric AS base
      ) v
      WHERE s.client_id = ${context.clientId} AND s.collateral_asset = ${collateralAsset.code} AND s.status <> 'CLOSED' ${onlyLines}
      ORDER BY s.id
      FOR UPDATE OF s
    ),
    settled AS (
      SELECT c.*, c.residual_debt AND NOT (c.repaid AND c.covers_limit) AS next_residual,
        c.needs_cover AND NOT c.covers_limit AS next_needs_cover
      FROM current c
    ),
    changed AS (
      SELECT c.*,
        CASE WHEN c.status IN ('ACTIVE', 'RESTRICTED')
               THEN CASE WHEN (c.next_mask & ${restrictedBit}) <> 0 OR c.collateral_amount = 0 OR c.next_residual OR c.next_needs_cover THEN 'RESTRICTED' ELSE 'ACTIVE' END
             WHEN c.status = 'PENDING_COLLATERAL' AND c.covers_limit THEN 'ACTIVE'
             ELSE c.status END AS next_status
      FROM settled c
    )
    UPDATE credit_lines l
       SET ltv_fired = c.next_mask,
           residual_debt = c.next_residual,
           needs_cover = c.next_needs_cover,
           status = c.next_status,
           last_ltv_event_at = CASE WHEN (c.next_mask & ~c.prev_mask & ${(1 << liquidationLevel) - 1}) <> 0 THEN c.moment ELSE l.last_ltv_event_at END,
           updated_at = c.moment
      FROM changed c
     WHERE l.client_id = c.client_id AND l.id = c.id
       AND (c.next_mask <> c.prev_mask OR c.next_status <> c.status OR c.liquidate OR c.next_residual <> c.residual_debt OR c.next_needs_cover <> c.needs_cover)
    RETURNING l.id, l.customer_id, l.collateral_wallet_id, l.collateral_hold_id, l.currency, c.prev_mask, c.next_mask, c.liquidate,
      l.principal::text AS principal, l.interest::text AS interest, l.pending_holds::text AS pending_holds,
      l.collateral_amount::text AS collateral_amount, l.thresholds, l.opening, l.liquidation_penalty, c.moment`.execute(tx);

  const rows = result.rows;
  if (rows.length === 0) return;
  const usd = requireAsset('USD', 'sandbox');
  const events: EventToRecord[] = [];
  const toLiquidate: RecomputedRow[] = [];
  for (const row of rows) {
    const figures = figuresOf(row, collateralAsset, price);
    for (const level of newlyFired(row.prev_mask, row.next_mask)) {
      // The liquidation level's event is written by the liquidation, with what it sold.
      if (level === liquidationLevel) continue;
      events.push({ context: { ...context, now: row.moment }, type: eventTypeOf(level), data: ltvEventData(row, figures, thresholdOf(row.thresholds, level), collateralAsset, price, usd) });
    }
    if (row.liquidate) toLiquidate.push(row);
  }
  if (toLiquidate.length > 0) await liquidate(tx, context, toLiquidate, collateralAsset, price, usd, events);
  if (events.length > 0) await recordEvents(tx, events);
  if (toLiquidate.length > 0) await recomputeLtv(tx, context, { ...target, lineIds: toLiquidate.map((row) => row.id) });
}

/** What a line's LTV is computed from. */
export function figuresOf(row: Pick<RecomputedRow, 'principal' | 'interest' | 'pending_holds' | 'collateral_amount'>, asset: Asset, price: Price): LtvFigures {
  return {
    debt: BigInt(row.principal) + BigInt(row.interest) + BigInt(row.pending_holds),
    collateral: BigInt(row.collateral_amount),
    assetScale: asset.scale,
    price,
  };
}

/** The payload of an LTV event: the specification's customerId (and traceId, added by the events store) plus the figures behind it. */
function ltvEventData(row: RecomputedRow, figures: LtvFigures, thresholdE4: number, asset: Asset, price: Price, usd: Asset): Record<string, unknown> {
  const ltv = ltvE4(figures);
  return {
    customerId: row.customer_id,
    creditLineId: row.id,
    ltv: ltv === null ? null : formatE4(ltv),
    thresholdLtv: formatE4(BigInt(thresholdE4)),
    collateralAsset: asset.code,
    collateralAmount: formatAmount(figures.collateral, asset),
    collateralValue: formatAmount(collateralValueCents(figures.collateral, asset.scale, price), usd),
    outstanding: formatAmount(figures.debt, usd),
    currency: row.currency,
  };
}

/**
 * Liquidates lines at or above their liquidation threshold (contract §12.10): takes collateral off
 * the line's hold (the penalty to the client's FEES account, the rest sold to its TRADING account at
 * the price), repays interest then principal from the proceeds (TRADING → FEES, TRADING →
 * CREDIT_LENDING), credits any surplus to the collateral wallet, and records LTV_LIQUIDATED with
 * the amounts. All lines' ledger movements are one ledger batch.
 */
async function liquidate(tx: Tx, context: RequestContext, rows: RecomputedRow[], asset: Asset, price: Price, usd: Asset, events: EventToRecord[]): Promise<void> {
  const operations: LedgerOperation[] = [];
  const updates: { id: string; plan: LiquidationPlan; moment: Date }[] = [];
  for (const row of rows) {
    assert(row.collateral_hold_id, `credit line ${row.id} has collateral but no hold`);
    const figures = figuresOf(row, asset, price);
    assert(ltvAtLeast(figures, thresholdOf(row.thresholds, liquidationLevel)), 'liquidating a line below its threshold');
    const plan = planLiquidation({
      principal: BigInt(row.principal),
      interest: BigInt(row.interest),
      pendingHolds: BigInt(row.pending_holds),
      collateral: figures.collateral,
      assetScale: asset.scale,
      price,
      opening: row.opening,
      penalty: row.liquidation_penalty,
    });
    assert(plan.taken > 0n, `liquidation of credit line ${row.id} would take nothing`);
    const parentTransactionId = idAt(context.now);
    const base = { clientId: context.clientId, now: context.now };
    if (plan.sold > 0n) {
      operations.push({ operation: 'captureHold', ...base, holdId: row.collateral_hold_id, amount: plan.sold, to: { system: 'TRADING' }, final: false, history: { parentTransactionId, type: liquidationHistoryType, traceId: context.traceId } });
    }
    if (plan.penalty > 0n) {
      operations.push({ operation: 'captureHold', ...base, holdId: row.collateral_hold_id, amount: plan.penalty, to: { system: 'FEES' }, final: false, history: { parentTransactionId, type: liquidationFeeHistoryType, traceId: context.traceId } });
    }
    const legs = [
      { from: { system: 'TRADING' as const }, to: { system: 'FEES' as const }, amount: plan.interestRepaid, purpose: liquidationHistoryType },
      { from: { system: 'TRADING' as const }, to: { system: 'CREDIT_LENDING' as const }, amount: plan.principalRepaid, purpose: liquidationHistoryType },
      { from: { system: 'TRADING' as const }, to: { walletId: row.collateral_wallet_id }, amount: plan.surplus, purpose: liquidationHistoryType },
    ].filter((leg) => leg.amount > 0n);
    if (legs.length > 0) operations.push({ operation: 'transfer', ...base, asset: usd, legs, history: { parentTransactionId, type: liquidationHistoryType, traceId: context.traceId } });
    updates.push({ id: row.id, plan, moment: row.moment });
    events.push({
      context: { ...context, now: row.moment },
      type: 'LTV_LIQUIDATED',
      data: {
        ...ltvEventData(row, figures, thresholdOf(row.thresholds, liquidationLevel), asset, price, usd),
        parentTransactionId,
        collateralSold: formatAmount(plan.sold, asset),
        penaltyAmount: formatAmount(plan.penalty, asset),
        proceeds: formatAmount(plan.proceeds, usd),
        interestRepaid: formatAmount(plan.interestRepaid, usd),
        principalRepaid: formatAmount(plan.principalRepaid, usd),
        surplus: formatAmount(plan.surplus, usd),
        price: formatPrice(price),
      },
    });
  }
  // The collateral wallets exist (the lines' foreign keys say so).
  await runLedgerOperations(tx, context.now, operations);
  await sql`
    UPDATE credit_lines l
       SET collateral_amount = l.collateral_amount - u.taken,
           interest = l.interest - u.interest_repaid,
           principal = l.principal - u.principal_repaid,
           -- All the collateral sold: the hold is closed (a later lock opens a new one), and debt
           -- left over keeps the line restricted until it is repaid.
           collateral_hold_id = CASE WHEN l.collateral_amount = u.taken THEN NULL ELSE l.collateral_hold_id END,
           residual_debt = l.residual_debt OR (l.collateral_amount = u.taken AND l.principal - u.principal_repaid + l.interest - u.interest_repaid > 0),
           -- None left: lending again needs collateral that covers the limit, as when the line opened.
           needs_cover = l.needs_cover OR l.collateral_amount = u.taken,
           last_ltv_event_at = u.moment,
           updated_at = GREATEST(l.updated_at, u.moment)
      FROM unnest(${updates.map((u) => u.id)}::uuid[], ${updates.map((u) => u.plan.taken.toString())}::numeric[],
                  ${updates.map((u) => u.plan.interestRepaid.toString())}::numeric[], ${updates.map((u) => u.plan.principalRepaid.toString())}::numeric[],
                  ${updates.map((u) => u.moment)}::timestamptz[])
           AS u(id, taken, interest_repaid, principal_repaid, moment)
     WHERE l.client_id = ${context.clientId} AND l.id = u.id`.execute(tx);
}

import { assert } from '../../platform/assert.js';
import type { Price } from '../trades/index.js';

/**
 * The loan-to-value arithmetic of a credit line (contract §12.10), exact: amounts are whole minor
 * units (USD cents for the debt, satoshi or wei for the collateral), prices are `units × 10^-scale`
 * USD, ratios are whole ten-thousandths ("e4": 6500 = 0.65). Nothing here uses floating point.
 *
 *   LTV = debt / (collateral × price),  debt = principal + interest + pending card holds.
 *
 * The database recomputes lines in bulk with the same comparisons (ltv-monitor.ts); this file is
 * what the views, the liquidation and the tests use.
 */

/** The six levels, lowest first; level i's event is `ltvEventTypes[i]`. */
export const ltvLevels = [
  'THRESHOLD_WARNING',
  'PURCHASE_RESTRICTED',
  'COLLATERAL_NEEDED',
  'URGENT_COLLATERAL_NEEDED',
  'LIQUIDATION_WARNING',
  'LIQUIDATION',
] as const;
export type LtvLevel = (typeof ltvLevels)[number];

export const ltvEventTypes = [
  'LTV_THRESHOLD_WARNING',
  'LTV_PURCHASE_RESTRICTED',
  'LTV_COLLATERAL_NEEDED',
  'LTV_URGENT_COLLATERAL_NEEDED',
  'LTV_LIQUIDATION_WARNING',
  'LTV_LIQUIDATED',
] as const;
export type LtvEventType = (typeof ltvEventTypes)[number];

/** Index of the level whose crossing restricts card purchases. */
export const purchaseRestrictedLevel = 1;
/** Index of the liquidation level: its crossing sells collateral (and its event says what was sold). */
export const liquidationLevel = 5;

/** A level re-arms when the LTV falls this far (0.01) below its threshold. */
export const rearmGapE4 = 100;
export const e4 = 10_000n;

export interface CreditSettings {
  /** Ascending, one per level, in ten-thousandths. */
  thresholds: number[];
  /** The opening (and liquidation target) LTV, in ten-thousandths. */
  opening: number;
  /** Share of the collateral sold in a liquidation kept as the penalty, in ten-thousandths. */
  liquidationPenalty: number;
}

/** Contract §12.10 defaults (research §7): 0.60 … 0.8333, opening 0.50, penalty 0.02. */
export const defaultCreditSettings: CreditSettings = {
  thresholds: [6000, 6500, 7000, 7500, 8000, 8333],
  opening: 5000,
  liquidationPenalty: 200,
};

/** The threshold of a level (levels are 0…5; a ladder always has six). */
export function thresholdOf(thresholds: readonly number[], level: number): number {
  const threshold = thresholds[level];
  assert(threshold !== undefined, `no threshold for level ${level}`);
  return threshold;
}

/** The event type of a level. */
export function eventTypeOf(level: number): LtvEventType {
  const type = ltvEventTypes[level];
  assert(type !== undefined, `no event for level ${level}`);
  return type;
}

/** The ladder's thresholds by name, one per level (as the settings body and view name them). */
export const thresholdNames = ['warning', 'purchaseRestricted', 'collateralNeeded', 'urgentCollateralNeeded', 'liquidationWarning', 'liquidation'] as const;

/**
 * Why a ladder is refused, or null: strictly ascending, above the opening, below 1, re-armable,
 * and a liquidation that can lower the LTV. `field` is the path of the value at fault in the
 * settings body; `ladderField`, for a penalty that no longer fits, the threshold to name instead
 * when only the ladder was sent.
 */
export function settingsProblem(settings: CreditSettings): { field: string; message: string; ladderField?: string } | null {
  const { thresholds, opening, liquidationPenalty } = settings;
  const threshold = (level: number) => `thresholds.${thresholdNames[level] ?? level}`;
  if (thresholds.length !== ltvLevels.length) return { field: 'thresholds', message: `thresholds must have ${ltvLevels.length} entries` };
  if (!(opening > 0 && opening < 10_000)) return { field: 'thresholds.opening', message: 'the opening LTV must be above 0 and below 1' };
  for (let i = 0; i < thresholds.length; i++) {
    const value = thresholdOf(thresholds, i);
    const below = i === 0 ? opening : thresholdOf(thresholds, i - 1);
    const what = i === 0 ? 'the opening LTV' : 'the threshold before it';
    if (!(value > below)) return { field: threshold(i), message: `thresholds must be strictly ascending: ${formatE4(BigInt(value))} is not above ${what} (${formatE4(BigInt(below))})` };
    if (value > 10_000) return { field: threshold(i), message: 'thresholds must be at most 1' };
  }
  if (thresholdOf(thresholds, 0) - rearmGapE4 <= opening) return { field: threshold(0), message: 'the first threshold must be more than 0.01 above the opening LTV (so a liquidation re-arms every level)' };
  if (!(liquidationPenalty >= 0 && opening + liquidationPenalty < 10_000)) {
    return { field: 'liquidationPenaltyRate', message: 'the liquidation penalty plus the opening LTV must be below 1', ladderField: 'thresholds.opening' };
  }
  // A sale lowers the LTV only while it is below 1 − penalty (each unit sold repays (1 − penalty) of
  // its value): at a liquidation threshold at or above that, every liquidation would sell all the
  // collateral (found by an audit, 2026-12-02).
  const liquidation = thresholdOf(thresholds, thresholds.length - 1);
  if (liquidation + liquidationPenalty >= 10_000) {
    return {
      field: 'liquidationPenaltyRate',
      ladderField: threshold(thresholds.length - 1),
      message: `the liquidation threshold (${formatE4(BigInt(liquidation))}) plus the penalty must be below 1: at or above 1 − penalty a sale cannot lower the LTV, so every liquidation would sell all the collateral`,
    };
  }
  return null;
}

/** What an LTV is computed from. */
export interface LtvFigures {
  /** USD cents owed: principal + interest + pending holds. */
  debt: bigint;
  /** Collateral locked, in minor units of its asset. */
  collateral: bigint;
  /** Decimal places of the collateral asset (8 for BTC, 18 for ETH). */
  assetScale: number;
  price: Price;
}

/** 10^(4 + assetScale + priceScale − 2): debt × this compares with threshold × collateral × price units. */
export function ltvScaleFactor(assetScale: number, priceScale: number): bigint {
  const exponent = 4 + assetScale + priceScale - 2;
  assert(exponent >= 0, 'price and asset scales too small');
  return 10n ** BigInt(exponent);
}

function sides(figures: LtvFigures): { lhs: bigint; base: bigint } {
  return { lhs: figures.debt * ltvScaleFactor(figures.assetScale, figures.price.scale), base: figures.collateral * figures.price.units };
}

/** LTV ≥ threshold (a line with no debt never reaches anything; debt with no collateral value reaches everything). */
export function ltvAtLeast(figures: LtvFigures, thresholdE4: number): boolean {
  const { lhs, base } = sides(figures);
  return figures.debt > 0n && lhs >= BigInt(thresholdE4) * base;
}

/** LTV > threshold, strictly. */
export function ltvAbove(figures: LtvFigures, thresholdE4: number): boolean {
  const { lhs, base } = sides(figures);
  return figures.debt > 0n && lhs > BigInt(thresholdE4) * base;
}

/** LTV < threshold, where no debt counts as below every threshold. */
export function ltvBelow(figures: LtvFigures, thresholdE4: number): boolean {
  const { lhs, base } = sides(figures);
  return figures.debt === 0n || lhs < BigInt(thresholdE4) * base;
}

/** The crossing bits after a change: a level is set once reached, and stays set until the LTV falls 0.01 below its threshold. */
export function nextFired(previous: number, figures: LtvFigures, thresholds: readonly number[]): number {
  let mask = 0;
  thresholds.forEach((threshold, i) => {
    const bit = 1 << i;
    if (ltvAtLeast(figures, threshold) || ((previous & bit) !== 0 && !ltvBelow(figures, threshold - rearmGapE4))) mask |= bit;
  });
  return mask;
}

/**
 * The LTV in ten-thousandths, rounded down (`up` for a refusal's message, where a figure just above
 * a threshold must not print as the threshold itself); null when there is debt and no collateral
 * value (the ratio is unbounded).
 */
export function ltvE4(figures: LtvFigures, rounding: 'down' | 'up' = 'down'): bigint | null {
  if (figures.debt === 0n) return 0n;
  const { lhs, base } = sides(figures);
  if (base === 0n) return null;
  return rounding === 'up' ? ceilDiv(lhs, base) : lhs / base;
}

/** The least collateral (minor units) at which the LTV is strictly below `thresholdE4`, at the figures' debt and price. */
export function leastCollateralBelow(figures: LtvFigures, thresholdE4: number): bigint {
  const { lhs } = sides(figures);
  return lhs / (BigInt(thresholdE4) * figures.price.units) + 1n;
}

/** "0.6500", four decimals. */
export function formatE4(value: bigint): string {
  const whole = value / e4;
  const fraction = value % e4;
  return `${whole}.${fraction.toString().padStart(4, '0')}`;
}

/** Collateral value in USD cents, rounded down. */
export function collateralValueCents(collateral: bigint, assetScale: number, price: Price): bigint {
  return (collateral * price.units) / 10n ** BigInt(assetScale + price.scale - 2);
}

/** The level a line is at: the highest crossing bit set, or null when none is. */
export function levelOf(mask: number): LtvLevel | null {
  for (let i = ltvLevels.length - 1; i >= 0; i--) if ((mask & (1 << i)) !== 0) return ltvLevels[i] ?? null;
  return null;
}

/** Levels whose bit goes from 0 to 1, lowest first. */
export function newlyFired(previous: number, next: number): number[] {
  const levels: number[] = [];
  for (let i = 0; i < ltvLevels.length; i++) if ((next & (1 << i)) !== 0 && (previous & (1 << i)) === 0) levels.push(i);
  return levels;
}

// ---- interest --------------------------------------------------------------------------------

/** The denominator of interest_carry: the APR's ten-thousandths × 365 days. */
export const interestCarryDenominator = 3_650_000n;

/**
 * One day of interest on `principal` at `aprE4`, with the fraction of a cent carried over exactly:
 * the daily rule. The accrual statement (accrueClientInterest in credit-lines.service.ts) applies
 * its closed form for several days at once; the tests hold the two equal.
 */
export function accrueOneDay(principal: bigint, aprE4: number, carry: bigint): { interest: bigint; carry: bigint } {
  const total = carry + principal * BigInt(aprE4);
  return { interest: total / interestCarryDenominator, carry: total % interestCarryDenominator };
}

// ---- liquidation -----------------------------------------------------------------------------

export interface LiquidationInput {
  principal: bigint;
  interest: bigint;
  pendingHolds: bigint;
  collateral: bigint;
  assetScale: number;
  price: Price;
  opening: number;
  penalty: number;
}

export interface LiquidationPlan {
  /** Collateral taken in all (sold + penalty), minor units of the collateral asset. */
  taken: bigint;
  /** The part sold at the price. */
  sold: bigint;
  /** The penalty, kept by the client (its FEES account), in the collateral asset. */
  penalty: bigint;
  /** USD cents the sold part fetched (rounded down). */
  proceeds: bigint;
  interestRepaid: bigint;
  principalRepaid: bigint;
  /** Proceeds beyond what was owed (only when the sale repaid everything), credited to the collateral wallet. */
  surplus: bigint;
}

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  assert(denominator > 0n, 'ceilDiv by a non-positive number');
  if (numerator <= 0n) return 0n;
  return (numerator + denominator - 1n) / denominator;
}

/** The outcome of taking `taken` units: penalty rounded up, proceeds rounded down, repaying interest then principal. */
export function liquidationOutcome(input: LiquidationInput, taken: bigint): LiquidationPlan {
  const penalty = ceilDiv(taken * BigInt(input.penalty), e4);
  const sold = taken - penalty;
  const proceeds = collateralValueCents(sold, input.assetScale, input.price);
  const interestRepaid = proceeds < input.interest ? proceeds : input.interest;
  const rest = proceeds - interestRepaid;
  const principalRepaid = rest < input.principal ? rest : input.principal;
  return { taken, sold, penalty, proceeds, interestRepaid, principalRepaid, surplus: rest - principalRepaid };
}

function debtAfter(input: LiquidationInput, plan: LiquidationPlan): bigint {
  return input.principal - plan.principalRepaid + input.interest - plan.interestRepaid + input.pendingHolds;
}

/**
 * How much collateral a liquidation takes: the least that brings the LTV to the opening level or
 * below, or that repays everything repayable, or all of it, whichever comes first.
 *
 * "Enough" is not monotonic in the amount taken: the proceeds are rounded down to the cent, so
 * between two amounts that fetch the same cents, taking more only keeps less collateral for the
 * same debt. The least enough amount is therefore always the first amount of a run that fetches
 * the same cents. The search starts below the real-number bound (x ≥ (D − o·C·p) / (p·(1 − r − o)),
 * or what repays everything), where nothing can be enough since rounding only lowers the proceeds,
 * and goes from the first amount of one run of equal proceeds to the first of the next until one
 * is enough: a few runs, each found by doubling and bisecting.
 */
export function planLiquidation(input: LiquidationInput): LiquidationPlan {
  const { collateral, price, opening, penalty, assetScale } = input;
  const factor = 10n ** BigInt(assetScale + price.scale - 2);
  const debt = input.principal + input.interest + input.pendingHolds;
  const repayable = input.principal + input.interest;
  const keep = e4 - BigInt(penalty) - BigInt(opening);
  assert(keep > 0n, 'opening + penalty must be below 1');
  const toTarget = (debt * e4 * factor - BigInt(opening) * collateral * price.units) / (keep * price.units);
  const toRepayAll = (repayable * e4 * factor) / ((e4 - BigInt(penalty)) * price.units);
  const bound = [toTarget, toRepayAll, collateral].reduce((a, b) => (a < b ? a : b)) - 2n;
  const enough = (taken: bigint) => {
    const plan = liquidationOutcome(input, taken);
    return (
      plan.taken >= collateral ||
      plan.interestRepaid + plan.principalRepaid >= repayable ||
      !ltvAbove({ debt: debtAfter(input, plan), collateral: collateral - plan.taken, assetScale, price }, opening)
    );
  };
  const proceedsOf = (taken: bigint) => liquidationOutcome(input, taken).proceeds;
  let taken = bound < 1n ? 1n : bound;
  while (taken < collateral && !enough(taken)) {
    // The first amount that fetches more than `taken` does (the proceeds never fall as it grows).
    const proceeds = proceedsOf(taken);
    let low = taken;
    let high = taken + 1n;
    for (let step = 1n; high < collateral && proceedsOf(high) <= proceeds; step *= 2n) {
      low = high;
      high = taken + 2n * step > collateral ? collateral : taken + 2n * step;
    }
    if (proceedsOf(high) <= proceeds) {
      taken = collateral;
      break;
    }
    while (high - low > 1n) {
      const middle = (low + high) / 2n;
      if (proceedsOf(middle) > proceeds) high = middle;
      else low = middle;
    }
    taken = high;
  }
  return liquidationOutcome(input, taken > collateral ? collateral : taken);
}

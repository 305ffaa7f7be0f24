import { assert } from '../../platform/assert.js';

/**
 * An exact non-negative rational number. Trade prices are not always finite decimals (a cross
 * rate such as BTC-USD ÷ USDC-USD can repeat forever), so the quote arithmetic keeps every
 * intermediate value as a fraction of two bigints and rounds once, where the contract says.
 */
export interface Ratio {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** numerator / denominator, reduced; the denominator must be positive and the value non-negative. */
export function ratio(numerator: bigint, denominator: bigint): Ratio {
  assert(denominator > 0n, `ratio denominator must be positive, got ${denominator}`);
  assert(numerator >= 0n, `ratio must not be negative, got ${numerator}/${denominator}`);
  const divisor = gcd(numerator, denominator);
  return divisor > 1n ? { numerator: numerator / divisor, denominator: denominator / divisor } : { numerator, denominator };
}

/** The value of `units` at `scale` decimal places: units / 10^scale (6000000n at scale 2 is 60000). */
export function ratioFromScaled(units: bigint, scale: number): Ratio {
  return ratio(units, 10n ** BigInt(scale));
}

export function multiplyRatios(...factors: Ratio[]): Ratio {
  let numerator = 1n;
  let denominator = 1n;
  for (const factor of factors) {
    numerator *= factor.numerator;
    denominator *= factor.denominator;
  }
  return ratio(numerator, denominator);
}

export function divideRatios(dividend: Ratio, divisor: Ratio): Ratio {
  assert(divisor.numerator > 0n, 'division of a ratio by zero');
  return ratio(dividend.numerator * divisor.denominator, dividend.denominator * divisor.numerator);
}

/** Largest integer count of 10^-scale units not above the value: floor(value × 10^scale). */
export function floorAtScale(value: Ratio, scale: number): bigint {
  return (value.numerator * 10n ** BigInt(scale)) / value.denominator;
}

/** Smallest integer count of 10^-scale units not below the value: ceil(value × 10^scale). */
export function ceilAtScale(value: Ratio, scale: number): bigint {
  const scaled = value.numerator * 10n ** BigInt(scale);
  const quotient = scaled / value.denominator;
  return scaled % value.denominator === 0n ? quotient : quotient + 1n;
}

export function compareRatios(a: Ratio, b: Ratio): -1 | 0 | 1 {
  const left = a.numerator * b.denominator;
  const right = b.numerator * a.denominator;
  return left < right ? -1 : left > right ? 1 : 0;
}

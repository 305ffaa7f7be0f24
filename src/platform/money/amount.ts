import { AppError } from '../http/errors.js';
import { maxAmountMinor, type Asset } from './assets.js';

/** Canonical decimal string: no sign, no exponent, no spaces, no leading zeros, optional fraction. */
const decimalPattern = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

function amountError(field: string, message: string): AppError {
  return new AppError('INVALID_AMOUNT', `${field}: ${message}`, { details: [{ field, message }] });
}

/**
 * Parses a decimal-string amount into minor units of the asset. Refuses anything that is not a
 * string (a JSON number is not an amount), is not positive, has more decimals than the asset's
 * scale, or exceeds the maximum. `subject` names whose decimals the scale is in the message (the
 * asset's code; a price says "a price").
 */
export function parseAmount(value: unknown, asset: Asset, field = 'amount', subject = asset.code): bigint {
  if (typeof value !== 'string') {
    throw amountError(field, 'must be a decimal string such as "10.50", not a JSON ' + (value === null ? 'null' : typeof value));
  }
  const minor = parseDecimal(value, asset, field, subject);
  if (minor === 0n) throw amountError(field, 'must be greater than zero');
  return minor;
}

/** Like parseAmount but also accepts zero (for limits and thresholds). */
export function parseNonNegativeAmount(value: string, asset: Asset, field = 'amount'): bigint {
  return parseDecimal(value, asset, field, asset.code);
}

function parseDecimal(value: string, asset: Asset, field: string, subject: string): bigint {
  if (value.length > 64) throw amountError(field, 'is too long');
  const match = decimalPattern.exec(value);
  if (!match?.[1]) {
    throw amountError(field, `must be a plain decimal string with digits and an optional "." (for example "10.50"), got "${value}"`);
  }
  const fraction = match[2] ?? '';
  if (fraction.length > asset.scale) {
    throw amountError(field, `${subject} allows at most ${asset.scale} decimal places`);
  }
  const minor = BigInt(match[1] + fraction.padEnd(asset.scale, '0'));
  if (minor > maxAmountMinor(asset)) {
    throw amountError(field, `exceeds the maximum of ${formatAmount(maxAmountMinor(asset), asset)} ${asset.code}`);
  }
  return minor;
}

/** Formats minor units as a decimal string with exactly the asset's scale ("1250.50"). */
export function formatAmount(minor: bigint, asset: Asset): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(asset.scale + 1, '0');
  const whole = digits.slice(0, digits.length - asset.scale);
  const fraction = digits.slice(digits.length - asset.scale);
  return (negative ? '-' : '') + (asset.scale > 0 ? `${whole}.${fraction}` : whole);
}

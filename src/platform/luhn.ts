import { assert } from './assert.js';

/**
 * The Luhn (mod 10) check digit, used by every number this project gives out with one: card
 * numbers (cards/network/pan.ts), virtual account numbers (virtual-accounts) and dedicated
 * account numbers and VRNs (bank-accounts). It catches any single mistyped digit and most swaps of
 * two adjacent digits (not 0↔9).
 */

/** The check digit (0–9) that completes `payload`, a non-empty string of digits (the number without its last digit). */
export function luhnCheckDigit(payload: string): number {
  assert(/^\d+$/.test(payload), 'a Luhn payload holds digits only');
  let sum = 0;
  // Walking from the right, the digit next to the (future) check digit is doubled first.
  for (let offset = 0; offset < payload.length; offset++) {
    let digit = payload.charCodeAt(payload.length - 1 - offset) - 48;
    if (offset % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

/** True when `digits` is at least two digits (and nothing else) and its last digit is the Luhn check digit of the rest. */
export function hasValidLuhn(digits: string): boolean {
  if (!/^\d{2,}$/.test(digits)) return false;
  return luhnCheckDigit(digits.slice(0, -1)) === digits.charCodeAt(digits.length - 1) - 48;
}

/**
 * ABA routing transit numbers: nine digits whose last digit is a check digit. With the weights
 * 3, 7, 1 repeated over the nine digits, the weighted sum is a multiple of ten.
 *
 * The first two digits name a Federal Reserve district or a special range (01–12, 21–32, 61–72,
 * 80, and a few government numbers outside those); the official directories contain numbers in
 * ranges the textbook lists leave out, so the prefix is not checked here: a number with a valid
 * checksum that no bank uses is "well-formed but unknown" (404), not malformed.
 */
export type IdentifierCheck<T> = { ok: true; value: T } | { ok: false; reason: string };

const routingNumberLength = 9;
const checksumWeights = [3, 7, 1, 3, 7, 1, 3, 7, 1] as const;

export function abaChecksumIsValid(digits: string): boolean {
  if (!/^\d{9}$/.test(digits)) return false;
  let sum = 0;
  for (let index = 0; index < routingNumberLength; index++) {
    sum += Number(digits.charCodeAt(index) - 48) * (checksumWeights[index] ?? 0);
  }
  return sum % 10 === 0;
}

/** Checks the form of a routing number; `value` is the routing number itself (no normalisation). */
export function checkRoutingNumber(input: string): IdentifierCheck<string> {
  if (input.length === 0) return { ok: false, reason: 'a routing number is 9 digits; got an empty value' };
  if (!/^\d+$/.test(input)) return { ok: false, reason: 'a routing number holds digits only (no spaces, dashes or letters)' };
  if (input.length !== routingNumberLength) {
    return { ok: false, reason: `a routing number is exactly 9 digits; got ${input.length}` };
  }
  if (!abaChecksumIsValid(input)) return { ok: false, reason: 'the ABA check digit does not match (checksum failed)' };
  return { ok: true, value: input };
}

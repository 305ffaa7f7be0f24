import crypto from 'node:crypto';

/** The largest size permuteSerial takes: 2^32 (see its comment for why). */
export const permuteSerialSizeMax = 2 ** 32;

/**
 * A keyed permutation of 0 … size−1, for serials drawn from a sequence shared by every client:
 * passed through it they stay unique (distinct inputs give distinct outputs), but two serials a
 * client sees say nothing of how many other clients drew in between, and the next one cannot be
 * guessed without the key.
 *
 * A balanced four-round Feistel network over the smallest even number of bits, 2h, whose range
 * 2^(2h) holds `size`, each round keyed by HMAC-SHA-256 of the size, the round and the right
 * half; walked again while the result falls outside 0 … size−1 ("cycle walking", which keeps it
 * a permutation of the range: at most 4 passes on average, since 2^(2h) ≤ 4 × size).
 *
 * `size` is at most 2^32 (permuteSerialSizeMax), which covers 9-digit serials (10^9 needs h = 15):
 * the halves are split and joined with JavaScript's bitwise operators, which work on 32 bits
 * (`>>>` on the whole value, below 2^32 for h ≤ 16), and a round XORs in the first 32 bits of the
 * HMAC, so a half may not exceed 32 bits anyway. A larger size, a size below 1 or a value outside
 * 0 … size−1 throws rather than giving a wrong answer.
 *
 * The output for a size, a key and a value never changes: sizes 10^6 and 10^7 give the ACH and
 * Fedwire serials of bank-transfers/end-to-end-id.ts exactly as they were when this lived there.
 */
export function permuteSerial(value: bigint, size: number, key: Buffer): number {
  if (!Number.isSafeInteger(size) || size < 1 || size > permuteSerialSizeMax) throw new Error(`permuteSerial: size out of range: ${size}`);
  if (value < 0n || value >= BigInt(size)) throw new Error(`permuteSerial: value ${value} is not in 0 … ${size - 1}`);
  let halfBits = 1;
  while (2 ** (2 * halfBits) < size) halfBits += 1;
  // halfBits ≤ 16 here, so the mask is a positive 32-bit integer and `& halfMask` a value below 2^16.
  const halfMask = (1 << halfBits) - 1;
  let current = Number(value);
  do {
    // current < 2^(2·halfBits) ≤ 2^32: `>>>` reads it as an unsigned 32-bit integer, whole.
    let left = current >>> halfBits;
    let right = current & halfMask;
    for (let round = 0; round < 4; round += 1) {
      const mac = crypto.createHmac('sha256', key).update(`${size}:${round}:${right}`).digest();
      [left, right] = [right, (left ^ mac.readUInt32BE(0)) & halfMask];
    }
    // Joined by arithmetic, not `<<`, which would overflow 32 signed bits for halfBits ≥ 16.
    current = left * 2 ** halfBits + right;
  } while (current >= size);
  return current;
}

/**
 * permuteSerial shifted by one: a keyed permutation of 1 … max, for serials from a sequence that
 * starts at 1 where 0 is no valid serial (account numbers). Every value of the sequence maps to a
 * valid serial, so none is skipped for being 0.
 */
export function permuteSerialFromOne(value: bigint, max: number, key: Buffer): bigint {
  if (value < 1n || value > BigInt(max)) throw new Error(`permuteSerialFromOne: value ${value} is not in 1 … ${max}`);
  return BigInt(permuteSerial(value - 1n, max, key)) + 1n;
}

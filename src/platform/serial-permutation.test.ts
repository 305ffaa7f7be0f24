import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { permuteSerial, permuteSerialFromOne, permuteSerialSizeMax } from './serial-permutation.js';

const key = crypto.createHash('sha256').update('test serial key').digest();
const otherKey = crypto.createHash('sha256').update('another key').digest();

/** The same Feistel network in BigInt arithmetic, which has no 32-bit limit: the reference for large sizes. */
function referencePermutation(value: bigint, size: number, secret: Buffer): number {
  let halfBits = 1n;
  while (4n ** halfBits < BigInt(size)) halfBits += 1n;
  const halfMask = (1n << halfBits) - 1n;
  let current = value;
  do {
    let left = current >> halfBits;
    let right = current & halfMask;
    for (let round = 0; round < 4; round += 1) {
      const mac = BigInt(crypto.createHmac('sha256', secret).update(`${size}:${round}:${right}`).digest().readUInt32BE(0));
      [left, right] = [right, (left ^ mac) & halfMask];
    }
    current = (left << halfBits) + right;
  } while (current >= BigInt(size));
  return Number(current);
}

/** permuteSerial as it was in bank-transfers/end-to-end-id.ts before it moved here, to hold the ACH and Fedwire serials unchanged. */
function endToEndIdPermutationAsItWas(value: bigint, size: number, secret: Buffer): number {
  let halfBits = 1;
  while (2 ** (2 * halfBits) < size) halfBits += 1;
  const halfMask = (1 << halfBits) - 1;
  let current = Number(value);
  do {
    let left = current >>> halfBits;
    let right = current & halfMask;
    for (let round = 0; round < 4; round += 1) {
      const mac = crypto.createHmac('sha256', secret).update(`${size}:${round}:${right}`).digest();
      [left, right] = [right, (left ^ mac.readUInt32BE(0)) & halfMask];
    }
    current = left * 2 ** halfBits + right;
  } while (current >= size);
  return current;
}

/** Spread-out sample inputs of 0 … size−1: both ends, and values a fixed stride apart. */
function sampleOf(size: number, count: number): bigint[] {
  const values = new Set<number>([0, 1, 2, size - 2, size - 1, Math.floor(size / 2), 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1]);
  const stride = Math.floor(size / count) + 1;
  for (let value = 7; value < size && values.size < count + 9; value += stride) values.add(value);
  return [...values].filter((value) => value >= 0 && value < size).map((value) => BigInt(value));
}

describe('permuteSerial', () => {
  it.each([1, 2, 3, 5, 17, 1_000, 4_096, 4_097, 20_000])('is a permutation of 0 … %i − 1, checked on every input', (size) => {
    const seen = new Set<number>();
    for (let value = 0; value < size; value++) {
      const permuted = permuteSerial(BigInt(value), size, key);
      expect(Number.isInteger(permuted) && permuted >= 0 && permuted < size).toBe(true);
      seen.add(permuted);
    }
    expect(seen.size).toBe(size);
  });

  it('over 10^9 (9-digit serials): sampled outputs are in range, all distinct, and agree with a BigInt reference', () => {
    const size = 1_000_000_000;
    const inputs = [...sampleOf(size, 3000), ...Array.from({ length: 2000 }, (_, index) => BigInt(index + 1))];
    const outputs = new Set<number>();
    for (const value of new Set(inputs)) {
      const permuted = permuteSerial(value, size, key);
      expect(Number.isInteger(permuted) && permuted >= 0 && permuted < size).toBe(true);
      expect(permuted).toBe(referencePermutation(value, size, key));
      outputs.add(permuted);
    }
    expect(outputs.size).toBe(new Set(inputs).size);
  });

  it('stays right up to its maximum size, 2^32, where halves are 16 bits and values pass 2^31', () => {
    for (const size of [2 ** 31 + 7, 3_999_999_999, permuteSerialSizeMax]) {
      const outputs = new Set<number>();
      const inputs = sampleOf(size, 300);
      for (const value of inputs) {
        const permuted = permuteSerial(value, size, key);
        expect(permuted >= 0 && permuted < size).toBe(true);
        expect(permuted).toBe(referencePermutation(value, size, key));
        outputs.add(permuted);
      }
      expect(outputs.size).toBe(inputs.length);
    }
  });

  it('refuses a size above 2^32 or below 1, and a value outside the range, rather than answer wrongly', () => {
    expect(() => permuteSerial(0n, permuteSerialSizeMax + 1, key)).toThrow(/size out of range/);
    expect(() => permuteSerial(0n, 0, key)).toThrow(/size out of range/);
    expect(() => permuteSerial(0n, 1.5, key)).toThrow(/size out of range/);
    expect(() => permuteSerial(10n, 10, key)).toThrow(/not in 0 … 9/);
    expect(() => permuteSerial(-1n, 10, key)).toThrow(/not in 0 … 9/);
  });

  it('gives the same output for the same key and another for another key', () => {
    const size = 1_000_000_000;
    const outputs = Array.from({ length: 20 }, (_, index) => permuteSerial(BigInt(index + 1), size, key));
    expect(Array.from({ length: 20 }, (_, index) => permuteSerial(BigInt(index + 1), size, Buffer.from(key)))).toEqual(outputs);
    const others = Array.from({ length: 20 }, (_, index) => permuteSerial(BigInt(index + 1), size, otherKey));
    expect(others).not.toEqual(outputs);
    // Not merely reordered: nearly every input lands elsewhere under the other key.
    expect(others.filter((value, index) => value === outputs[index]).length).toBeLessThan(2);
  });

  it('keeps the ACH (10^7) and Fedwire (10^6) serials of end-to-end ids exactly as they were', () => {
    for (const size of [1_000_000, 10_000_000]) {
      for (const value of sampleOf(size, 2000)) {
        expect(permuteSerial(value, size, key)).toBe(endToEndIdPermutationAsItWas(value, size, key));
        expect(permuteSerial(value, size, otherKey)).toBe(endToEndIdPermutationAsItWas(value, size, otherKey));
      }
    }
  });
});

describe('permuteSerialFromOne', () => {
  it('is a permutation of 1 … max that never gives 0, checked on every input', () => {
    for (const max of [1, 2, 999, 4_096]) {
      const seen = new Set<bigint>();
      for (let value = 1n; value <= BigInt(max); value++) {
        const permuted = permuteSerialFromOne(value, max, key);
        expect(permuted >= 1n && permuted <= BigInt(max)).toBe(true);
        seen.add(permuted);
      }
      expect(seen.size).toBe(max);
    }
    expect(() => permuteSerialFromOne(0n, 999, key)).toThrow();
    expect(() => permuteSerialFromOne(1000n, 999, key)).toThrow();
  });

  it('scatters consecutive 9-digit serials across the range', () => {
    const serials = Array.from({ length: 50 }, (_, index) => permuteSerialFromOne(BigInt(index + 1), 999_999_999, key));
    expect(new Set(serials).size).toBe(50);
    const steps = serials.slice(1).map((serial, index) => serial - (serials[index] ?? 0n));
    expect(steps.filter((step) => step > -1000n && step < 1000n)).toEqual([]);
  });
});

import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { deposit, linkedWallet } from '../../../test/bank/fixtures.js';
import { permuteSerial } from './end-to-end-id.js';

const key = crypto.createHash('sha256').update('test serial key').digest();

describe('permuteSerial', () => {
  it.each([1_000, 4_096, 10_000])('is a permutation of 0 … %i − 1: every output in range and none twice', (size) => {
    const seen = new Set<number>();
    for (let value = 0; value < size; value++) {
      const permuted = permuteSerial(BigInt(value), size, key);
      expect(permuted >= 0 && permuted < size).toBe(true);
      seen.add(permuted);
    }
    expect(seen.size).toBe(size);
  });

  it('depends on the key, and consecutive inputs land far apart', () => {
    const other = crypto.createHash('sha256').update('another key').digest();
    const outputs = Array.from({ length: 50 }, (_, index) => permuteSerial(BigInt(index), 10_000_000, key));
    expect(outputs).not.toEqual(Array.from({ length: 50 }, (_, index) => permuteSerial(BigInt(index), 10_000_000, other)));
    const steps = outputs.slice(1).map((value, index) => Math.abs(value - (outputs[index] ?? 0)));
    expect(steps.filter((step) => step < 100)).toEqual([]);
  });
});

describe('the rail serial of a payment', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('tells a client nothing of the payments other clients made in between (one shared sequence, a keyed permutation)', async () => {
    const mine = await linkedWallet(t);
    const theirs = await linkedWallet(t, t.clientB);
    const serialOf = (data: { endToEndId: string }) => Number(data.endToEndId.slice(8));
    const first = serialOf(await deposit(t, mine.virtualAccountNumber, '1.00'));
    for (let index = 0; index < 3; index++) await deposit(t, theirs.virtualAccountNumber, '1.00', {}, t.clientB);
    const second = serialOf(await deposit(t, mine.virtualAccountNumber, '1.00'));
    // With the bare sequence the second serial was the first plus 4 (three of the other client's in between).
    expect(second - first).not.toBe(4);
    expect(Math.abs(second - first)).toBeGreaterThan(100);
  });
});

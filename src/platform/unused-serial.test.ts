import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { permuteSerialFromOne } from './serial-permutation.js';
import { drawUnusedNumber, unusedNumberAttemptsMax, type UnusedNumberDraw } from './unused-serial.js';

const key = crypto.createHash('sha256').update('test unused serial key').digest();
const serialMax = 999_999;

/** A sequence starting at `first` held in memory, the numbers it drew, and a set of held numbers: a wallets table without a database. */
function fakeDraw(held: Set<string>, first = 1n): UnusedNumberDraw & { drawn: string[]; next: () => bigint } {
  let value = first;
  const drawn: string[] = [];
  return {
    drawn,
    next: () => value,
    nextSequenceValue: () => Promise.resolve(value++),
    serialFor: (sequenceValue) => permuteSerialFromOne(sequenceValue, serialMax, key),
    format: (serial) => {
      const number = `9${serial.toString().padStart(6, '0')}`;
      drawn.push(number);
      return number;
    },
    isTaken: (number) => Promise.resolve(held.has(number)),
    description: 'test number',
  };
}

const numberOf = (sequenceValue: bigint) => `9${permuteSerialFromOne(sequenceValue, serialMax, key).toString().padStart(6, '0')}`;

describe('drawUnusedNumber', () => {
  it('gives the first value’s number when no one holds it, drawing once', async () => {
    const draw = fakeDraw(new Set());
    expect(await drawUnusedNumber(draw)).toBe(numberOf(1n));
    expect(draw.drawn).toEqual([numberOf(1n)]);
    expect(draw.next()).toBe(2n);
  });

  it('passes over numbers already held for the next values of the sequence', async () => {
    const draw = fakeDraw(new Set([numberOf(5n), numberOf(6n), numberOf(8n)]), 5n);
    expect(await drawUnusedNumber(draw)).toBe(numberOf(7n));
    expect(draw.drawn).toEqual([numberOf(5n), numberOf(6n), numberOf(7n)]);
    // The next draw goes on from the sequence and passes over the next held number too.
    expect(await drawUnusedNumber(draw)).toBe(numberOf(9n));
    expect(draw.next()).toBe(10n);
  });

  it('gives up with an error after the bound of numbers held in a row, drawing no more', async () => {
    const held = new Set(Array.from({ length: 10 }, (_, index) => numberOf(BigInt(index + 1))));
    const draw = { ...fakeDraw(held), attemptsMax: 3 };
    await expect(drawUnusedNumber(draw)).rejects.toThrow('no unused test number: the last 3 drawn were all held already');
    expect(draw.drawn).toHaveLength(3);

    // The bound is counted per call: four held numbers in a row are passed over when it is 5.
    const patient = { ...fakeDraw(held, 7n), attemptsMax: 5 };
    expect(await drawUnusedNumber(patient)).toBe(numberOf(11n));
  });

  it('stops at unusedNumberAttemptsMax unless told otherwise', async () => {
    const draw = { ...fakeDraw(new Set()), isTaken: () => Promise.resolve(true) };
    await expect(drawUnusedNumber(draw)).rejects.toThrow(`the last ${unusedNumberAttemptsMax} drawn`);
    expect(draw.drawn).toHaveLength(unusedNumberAttemptsMax);
  });

  it('passes on what the callbacks throw', async () => {
    const noValue = { ...fakeDraw(new Set()), nextSequenceValue: () => Promise.reject(new Error('the test sequence returned no value')) };
    await expect(drawUnusedNumber(noValue)).rejects.toThrow('the test sequence returned no value');
    // A value past the permutation's range throws there rather than giving a repeated serial.
    await expect(drawUnusedNumber(fakeDraw(new Set(), BigInt(serialMax) + 1n))).rejects.toThrow(/permuteSerialFromOne: value 1000000 is not in 1 … 999999/);
  });
});

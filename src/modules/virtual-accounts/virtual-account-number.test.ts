import { describe, expect, it } from 'vitest';
import { luhnCheckDigit } from '../../platform/luhn.js';
import { formatVirtualAccountNumber, isValidVirtualAccountNumber, virtualAccountSerialMax } from './virtual-account-number.js';

describe('virtual account numbers', () => {
  it('computes the Luhn check digit', () => {
    // The classic example: 7992739871 has check digit 3.
    expect(luhnCheckDigit('7992739871')).toBe(3);
  });

  it('are 12 digits: 70, a 9-digit serial and a check digit', () => {
    const number = formatVirtualAccountNumber(1n);
    expect(number).toMatch(/^70000000001\d$/);
    expect(number).toHaveLength(12);
    expect(isValidVirtualAccountNumber(number)).toBe(true);
    expect(formatVirtualAccountNumber(virtualAccountSerialMax)).toMatch(/^70999999999\d$/);
  });

  it('differ for different serials and catch a mistyped digit', () => {
    const numbers = new Set(Array.from({ length: 1000 }, (_, index) => formatVirtualAccountNumber(BigInt(index + 1))));
    expect(numbers.size).toBe(1000);
    const number = formatVirtualAccountNumber(4242n);
    const mistyped = `${number.slice(0, 5)}${(Number(number[5]) + 1) % 10}${number.slice(6)}`;
    expect(isValidVirtualAccountNumber(mistyped)).toBe(false);
    expect(isValidVirtualAccountNumber('7000000000')).toBe(false);
    expect(isValidVirtualAccountNumber('80000000001' + '7')).toBe(false);
  });

  it('refuse a serial out of range', () => {
    expect(() => formatVirtualAccountNumber(0n)).toThrow();
    expect(() => formatVirtualAccountNumber(virtualAccountSerialMax + 1n)).toThrow();
  });
});

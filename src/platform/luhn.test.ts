import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssertionError } from './assert.js';
import { hasValidLuhn, luhnCheckDigit } from './luhn.js';

describe('luhnCheckDigit', () => {
  it('gives the known check digits', () => {
    expect(luhnCheckDigit('7992739871')).toBe(3);
    expect(luhnCheckDigit('411111111111111')).toBe(1); // Visa test card 4111 1111 1111 1111
    expect(luhnCheckDigit('37828224631000')).toBe(5); // American Express test card, 15 digits
    expect(luhnCheckDigit('0')).toBe(0);
    expect(luhnCheckDigit('1')).toBe(8);
    expect(luhnCheckDigit('9')).toBe(1);
  });

  it('refuses an empty payload or one with anything but digits', () => {
    expect(() => luhnCheckDigit('')).toThrow(AssertionError);
    expect(() => luhnCheckDigit('4111 1111')).toThrow(AssertionError);
    expect(() => luhnCheckDigit('12a4')).toThrow(AssertionError);
  });
});

describe('hasValidLuhn', () => {
  it('accepts the known valid numbers', () => {
    expect(hasValidLuhn('79927398713')).toBe(true);
    expect(hasValidLuhn('4111111111111111')).toBe(true);
    expect(hasValidLuhn('378282246310005')).toBe(true);
    expect(hasValidLuhn('00')).toBe(true);
  });

  it('refuses a wrong check digit, fewer than two digits and anything but digits', () => {
    expect(hasValidLuhn('79927398710')).toBe(false);
    expect(hasValidLuhn('4111111111111112')).toBe(false);
    expect(hasValidLuhn('0')).toBe(false);
    expect(hasValidLuhn('')).toBe(false);
    expect(hasValidLuhn('4111 1111 1111 1111')).toBe(false);
    expect(hasValidLuhn('411111111111111A')).toBe(false);
  });

  const payloads = fc.stringMatching(/^\d{1,30}$/);

  it('holds for any payload completed by its check digit', () => {
    fc.assert(
      fc.property(payloads, (payload) => {
        const digit = luhnCheckDigit(payload);
        expect(Number.isInteger(digit) && digit >= 0 && digit <= 9).toBe(true);
        expect(hasValidLuhn(`${payload}${digit}`)).toBe(true);
      }),
    );
  });

  it('fails when any single digit of a valid number is changed', () => {
    fc.assert(
      fc.property(payloads, fc.nat(), fc.integer({ min: 1, max: 9 }), (payload, position, delta) => {
        const valid = `${payload}${luhnCheckDigit(payload)}`;
        const at = position % valid.length;
        const digit = (Number(valid.charAt(at)) + delta) % 10;
        expect(hasValidLuhn(`${valid.slice(0, at)}${digit}${valid.slice(at + 1)}`)).toBe(false);
      }),
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../../platform/assert.js';
import {
  authorizationCode,
  dayOfYearUtc,
  formatNetworkData,
  isAuthorizationCode,
  isRetrievalReferenceNumber,
  isStan,
  networkDataRefOf,
  newNetworkDataRef,
  nextStan,
  retrievalReferenceNumber,
  StanSequence,
} from './identifiers.js';
import type { RandomInt } from './pan.js';

/** A random source that plays back `values` (modulo the range asked), then repeats the last one. */
function scriptedRandomInt(values: readonly number[]): RandomInt {
  let index = 0;
  return (maxExclusive) => {
    const value = values[Math.min(index, values.length - 1)] ?? 0;
    index++;
    return value % maxExclusive;
  };
}

describe('STAN', () => {
  it('starts at 000001 and counts up with six digits', () => {
    expect(nextStan(null)).toBe('000001');
    expect(nextStan('000041')).toBe('000042');
    expect(nextStan('099999')).toBe('100000');
  });

  it('wraps from 999999 to 000001, never using 000000', () => {
    expect(nextStan('999999')).toBe('000001');
    expect(isStan('000000')).toBe(false);
  });

  it('refuses, as a bug, a previous value that is not a STAN', () => {
    expect(() => nextStan('12345')).toThrow(AssertionError);
    expect(() => nextStan('000000')).toThrow(AssertionError);
  });

  it('rolls per terminal: each terminal has its own counter', () => {
    const sequence = new StanSequence();
    expect([sequence.next('TERM0001'), sequence.next('TERM0001'), sequence.next('TERM0002'), sequence.next('TERM0001')]).toEqual([
      '000001',
      '000002',
      '000001',
      '000003',
    ]);
  });

  it('every next STAN is a STAN', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999_999 }), (number) => {
        expect(isStan(nextStan(String(number).padStart(6, '0')))).toBe(true);
      }),
    );
  });
});

describe('RRN', () => {
  it('is YDDDHH + sequence in UTC (the 0100 of research §1.9: 2025-03-15 12:00, STAN 000123)', () => {
    expect(retrievalReferenceNumber(new Date('2025-03-15T12:00:00Z'), '000123')).toBe('507412000123');
  });

  it('counts Julian days from 001 to 366 in a leap year', () => {
    expect(retrievalReferenceNumber(new Date('2024-01-01T00:30:00Z'), '000001')).toBe('400100000001');
    expect(retrievalReferenceNumber(new Date('2024-12-31T23:59:59Z'), '999999')).toBe('436623999999');
    expect(dayOfYearUtc(new Date('2025-12-31T12:00:00Z'))).toBe(365);
  });

  it('is always 12 digits and its day agrees with the calendar', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }), fc.stringMatching(/^\d{6}$/), (moment, sequence) => {
        const rrn = retrievalReferenceNumber(moment, sequence);
        expect(rrn).toMatch(/^\d{12}$/);
        expect(isRetrievalReferenceNumber(rrn)).toBe(true);
        const day = Number(rrn.slice(1, 4));
        const fromDay = new Date(Date.UTC(moment.getUTCFullYear(), 0, day));
        expect([fromDay.getUTCMonth(), fromDay.getUTCDate()]).toEqual([moment.getUTCMonth(), moment.getUTCDate()]);
        expect(rrn.slice(6)).toBe(sequence);
      }),
    );
  });

  it('refuses, as a bug, a sequence that is not six digits', () => {
    expect(() => retrievalReferenceNumber(new Date(), '123')).toThrow(AssertionError);
  });
});

describe('authorization code', () => {
  it('is six capital letters or digits', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 6, maxLength: 6 }), (values) => {
        fc.pre(values.some((value) => value % 36 !== 26));
        expect(isAuthorizationCode(authorizationCode(scriptedRandomInt(values)))).toBe(true);
      }),
    );
    expect(isAuthorizationCode(authorizationCode())).toBe(true);
  });

  it('maps the random source onto A–Z then 0–9', () => {
    expect(authorizationCode(scriptedRandomInt([0, 1, 2, 26, 27, 35]))).toBe('ABC019');
  });

  it('never returns 000000: it draws again', () => {
    expect(authorizationCode(scriptedRandomInt([26, 26, 26, 26, 26, 26, 0, 1, 2, 3, 4, 5]))).toBe('ABCDEF');
  });

  it('refuses, as a bug, a random source that answers out of range', () => {
    expect(() => authorizationCode(() => 36)).toThrow(AssertionError);
  });
});

describe('networkDataRef and DE63', () => {
  it('writes DE63 in the sandbox layout: network, five zeros, reference, optional trailer', () => {
    expect(formatNetworkData('VISA', 'LC7Q2M9XK4TR8P1A', '0000')).toBe('VIS00000LC7Q2M9XK4TR8P1A0000');
    expect(formatNetworkData('MASTERCARD', 'PA55PARTIAL00001')).toBe('MCD00000PA55PARTIAL00001');
  });

  it('reads the reference from positions 9–24', () => {
    expect(networkDataRefOf('VIS00000LC7Q2M9XK4TR8P1A0000')).toBe('LC7Q2M9XK4TR8P1A');
    expect(networkDataRefOf('MCD00000PA55PARTIAL00001')).toBe('PA55PARTIAL00001');
  });

  it('has none when DE63 is missing, shorter than 24, or the slice is blank or all zeros', () => {
    expect(networkDataRefOf(undefined)).toBeNull();
    expect(networkDataRefOf('132')).toBeNull();
    expect(networkDataRefOf('VIS00000LC7Q2M9XK4TR8P1')).toBeNull();
    expect(networkDataRefOf(`VIS00000${' '.repeat(16)}`)).toBeNull();
    expect(networkDataRefOf(`VIS00000${'0'.repeat(16)}XYZ`)).toBeNull();
  });

  it('generates 16 capital letters or digits that read back from DE63', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 16, maxLength: 16 }), fc.constantFrom('VISA' as const, 'MASTERCARD' as const), (values, network) => {
        fc.pre(values.some((value) => value % 36 !== 26));
        const reference = newNetworkDataRef(scriptedRandomInt(values));
        expect(reference).toMatch(/^[0-9A-Z]{16}$/);
        expect(networkDataRefOf(formatNetworkData(network, reference))).toBe(reference);
      }),
    );
    expect(newNetworkDataRef()).toMatch(/^[0-9A-Z]{16}$/);
  });

  it('never generates an all-zero reference: it draws again', () => {
    const zeros = Array.from({ length: 16 }, () => 26);
    expect(newNetworkDataRef(scriptedRandomInt([...zeros, ...Array.from({ length: 16 }, (_, index) => index)]))).toBe('ABCDEFGHIJKLMNOP');
  });
});

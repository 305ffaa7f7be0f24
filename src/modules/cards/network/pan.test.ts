import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../../platform/assert.js';
import { hasValidLuhn, luhnCheckDigit } from '../../../platform/luhn.js';
import {
  cardExpiryFor,
  deriveSandboxCvv,
  expiryFromYyMm,
  expiryLastValidInstant,
  expiryMmYy,
  expiryYyMm,
  generatePan,
  isCardExpired,
  isValidPan,
  maskPan,
  panFromSequence,
  panLast4,
  type RandomInt,
} from './pan.js';

/** A small seeded generator (mulberry32) so that generated PANs replay exactly. */
function seededRandomInt(seed: number): RandomInt {
  let state = seed >>> 0;
  return (maxExclusive) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return Math.floor((((value ^ (value >>> 14)) >>> 0) / 4294967296) * maxExclusive);
  };
}

const testCardNumbers = [
  '4111111111111111', // Visa
  '4242424242424242', // Visa (Stripe)
  '4012888888881881', // Visa
  '5555555555554444', // Mastercard
  '5105105105105100', // Mastercard
  '378282246310005', // American Express (15 digits)
  '6011111111111117', // Discover
  '3566002020360505', // JCB
];

describe('Luhn', () => {
  it('accepts the well-known test card numbers', () => {
    for (const pan of testCardNumbers) {
      expect(isValidPan(pan)).toBe(true);
      expect(String(luhnCheckDigit(pan.slice(0, -1)))).toBe(pan.slice(-1));
    }
  });

  it('computes the textbook check digit (7992739871 → 3)', () => {
    expect(luhnCheckDigit('7992739871')).toBe(3);
    expect(hasValidLuhn('79927398713')).toBe(true);
  });

  it('refuses a wrong check digit', () => {
    expect(isValidPan('4111111111111112')).toBe(false);
    expect(isValidPan('5555555555554440')).toBe(false);
    expect(isValidPan('378282246310006')).toBe(false);
  });

  it('refuses non-digits and lengths outside 12–19', () => {
    expect(isValidPan('4111 1111 1111 1111')).toBe(false);
    expect(isValidPan('411111111111111A')).toBe(false);
    expect(isValidPan('')).toBe(false);
    expect(isValidPan('42')).toBe(false);
    expect(isValidPan('00000000000')).toBe(false); // 11 digits, Luhn-valid
    expect(isValidPan('0'.repeat(20))).toBe(false); // 20 digits, Luhn-valid
    expect(hasValidLuhn('0')).toBe(false);
  });

  it('catches every single-digit change of a valid number', () => {
    fc.assert(
      fc.property(fc.constantFrom(...testCardNumbers), fc.nat(), fc.integer({ min: 1, max: 9 }), (pan, position, delta) => {
        const at = position % pan.length;
        const digit = (Number(pan.charAt(at)) + delta) % 10;
        expect(hasValidLuhn(`${pan.slice(0, at)}${digit}${pan.slice(at + 1)}`)).toBe(false);
      }),
    );
  });

  it('catches every swap of two different adjacent digits except 0↔9', () => {
    fc.assert(
      fc.property(fc.constantFrom(...testCardNumbers), fc.nat(), (pan, position) => {
        const at = position % (pan.length - 1);
        const [left, right] = [pan.charAt(at), pan.charAt(at + 1)];
        fc.pre(left !== right && `${left}${right}` !== '09' && `${left}${right}` !== '90');
        expect(hasValidLuhn(`${pan.slice(0, at)}${right}${left}${pan.slice(at + 2)}`)).toBe(false);
      }),
    );
  });
});

describe('PAN generation', () => {
  it('every generated PAN passes Luhn, starts with its BIN and has the asked length', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{6,8}$/), fc.integer({ min: 12, max: 19 }), fc.integer(), (bin, length, seed) => {
        const pan = generatePan(bin, { length, randomInt: seededRandomInt(seed) });
        expect(pan).toHaveLength(length);
        expect(pan.startsWith(bin)).toBe(true);
        expect(isValidPan(pan)).toBe(true);
      }),
    );
  });

  it('is 16 digits by default and uses the operating system random source when none is given', () => {
    const pans = new Set(Array.from({ length: 50 }, () => generatePan('400000')));
    for (const pan of pans) {
      expect(pan).toMatch(/^400000\d{10}$/);
      expect(isValidPan(pan)).toBe(true);
    }
    expect(pans.size).toBeGreaterThan(45);
  });

  it('replays from the same seed', () => {
    expect(generatePan('411111', { randomInt: seededRandomInt(7) })).toBe(generatePan('411111', { randomInt: seededRandomInt(7) }));
  });

  it('builds a PAN from a sequence number after the BIN', () => {
    expect(panFromSequence('411111', 0n)).toBe('4111110000000005');
    expect(panFromSequence('41111199', 42n, { length: 19 })).toBe('4111119900000000422');
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 999_999_999n }), fc.bigInt({ min: 0n, max: 999_999_999n }), (first, second) => {
        fc.pre(first !== second);
        const [one, two] = [panFromSequence('411111', first), panFromSequence('411111', second)];
        expect(one).not.toBe(two);
        expect(isValidPan(one) && isValidPan(two)).toBe(true);
      }),
    );
  });

  it('refuses, as a bug, a malformed BIN, an impossible length or a sequence that does not fit', () => {
    expect(() => generatePan('41111')).toThrow(AssertionError);
    expect(() => generatePan('411111111')).toThrow(AssertionError);
    expect(() => generatePan('41111A')).toThrow(AssertionError);
    expect(() => generatePan('411111', { length: 20 })).toThrow(AssertionError);
    expect(() => generatePan('41111111', { length: 9 })).toThrow(AssertionError);
    expect(() => panFromSequence('411111', 1_000_000_000n)).toThrow(AssertionError);
    expect(() => panFromSequence('411111', -1n)).toThrow(AssertionError);
  });
});

describe('display forms', () => {
  it('keeps the last 4 digits', () => {
    expect(panLast4('4111111111111111')).toBe('1111');
    expect(panLast4('378282246310005')).toBe('0005');
  });

  it('masks to first 6 and last 4', () => {
    expect(maskPan('4111111111111111')).toBe('411111******1111');
    expect(maskPan('378282246310005')).toBe('378282*****0005');
    expect(maskPan('4111119900000000422')).toBe('411111*********0422');
  });

  it('shows only the last 4 of a PAN shorter than 13 digits', () => {
    expect(maskPan('123456789012')).toBe('********9012');
    expect(maskPan('1234')).toBe('****');
  });
});

describe('expiry', () => {
  it('is the issue month (UTC) four years later by default', () => {
    expect(cardExpiryFor(new Date('2026-03-15T10:00:00Z'))).toEqual({ expiryMonth: 3, expiryYear: 2030 });
    expect(cardExpiryFor(new Date('2026-12-31T23:59:59Z'), 3)).toEqual({ expiryMonth: 12, expiryYear: 2029 });
  });

  it('is valid through the last millisecond of the last day of the month', () => {
    const expiry = { expiryMonth: 2, expiryYear: 2028 };
    expect(expiryLastValidInstant(expiry).toISOString()).toBe('2028-02-29T23:59:59.999Z');
    expect(isCardExpired(expiry, new Date('2028-02-29T23:59:59.999Z'))).toBe(false);
    expect(isCardExpired(expiry, new Date('2028-03-01T00:00:00.000Z'))).toBe(true);
    expect(expiryLastValidInstant({ expiryMonth: 12, expiryYear: 2030 }).toISOString()).toBe('2030-12-31T23:59:59.999Z');
  });

  it('formats as MMYY (vault) and YYMM (DE14), and reads DE14 back', () => {
    const expiry = { expiryMonth: 3, expiryYear: 2030 };
    expect(expiryMmYy(expiry)).toBe('0330');
    expect(expiryYyMm(expiry)).toBe('3003');
    expect(expiryFromYyMm('3003')).toEqual(expiry);
    expect(expiryFromYyMm('3013')).toBeNull();
    expect(expiryFromYyMm('3000')).toBeNull();
    expect(expiryFromYyMm('303')).toBeNull();
  });

  it('refuses, as a bug, a validity outside 1–20 years', () => {
    expect(() => cardExpiryFor(new Date(), 0)).toThrow(AssertionError);
    expect(() => cardExpiryFor(new Date(), 21)).toThrow(AssertionError);
  });
});

describe('sandbox CVV', () => {
  const expiry = { expiryMonth: 3, expiryYear: 2030 };

  it('is HMAC-SHA256(secret, PAN ‖ MMYY ‖ "cvv") reduced to three digits (pinned value)', () => {
    expect(deriveSandboxCvv('sandbox-secret', '4111111111111111', expiry)).toBe('169');
  });

  it('is stable for the same inputs and changes with the secret, the PAN or the expiry', () => {
    const base = deriveSandboxCvv('secret-a', '4111111111111111', expiry);
    expect(deriveSandboxCvv('secret-a', '4111111111111111', expiry)).toBe(base);
    const variants = new Set<string>();
    for (let index = 0; index < 200; index++) {
      variants.add(deriveSandboxCvv(`secret-${index}`, '4111111111111111', expiry));
      variants.add(deriveSandboxCvv('secret-a', panFromSequence('411111', BigInt(index)), expiry));
      variants.add(deriveSandboxCvv('secret-a', '4111111111111111', { expiryMonth: (index % 12) + 1, expiryYear: 2030 + Math.floor(index / 12) }));
    }
    expect(variants.size).toBeGreaterThan(400);
    for (const cvv of variants) expect(cvv).toMatch(/^\d{3}$/);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Iso8583MalformedError, parseIsoMessage } from './iso8583.js';
import {
  formatAdditionalAmounts,
  formatMerchantNameLocation,
  formatOriginalDataElements,
  formatReplacementAmounts,
  parseAdditionalAmounts,
  parseMerchantNameLocation,
  parseOriginalDataElements,
  parseReplacementAmounts,
  parseTransmissionDateTime,
  transmissionDateTime,
} from './subfields.js';

function offendingField(run: () => unknown): number {
  try {
    run();
  } catch (error) {
    if (error instanceof Iso8583MalformedError) return error.fieldNumber;
    throw error;
  }
  throw new Error('accepted');
}

describe('DE7 transmission date and time', () => {
  it('writes MMDDhhmmss in UTC', () => {
    expect(transmissionDateTime(new Date('2025-03-15T12:00:00Z'))).toBe('0315120000');
  });

  it('infers the year nearest to now, across the new year in both directions', () => {
    expect(parseTransmissionDateTime('0315120000', new Date('2025-03-15T12:00:05Z')).toISOString()).toBe('2025-03-15T12:00:00.000Z');
    expect(parseTransmissionDateTime('1231235959', new Date('2026-01-01T00:00:10Z')).toISOString()).toBe('2025-12-31T23:59:59.000Z');
    expect(parseTransmissionDateTime('0101000010', new Date('2025-12-31T23:59:50Z')).toISOString()).toBe('2026-01-01T00:00:10.000Z');
  });

  it('reads 29 February only in a leap year near now', () => {
    expect(parseTransmissionDateTime('0229120000', new Date('2028-03-01T00:00:00Z')).toISOString()).toBe('2028-02-29T12:00:00.000Z');
  });

  it('round-trips any moment within six months of now', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000 }), fc.integer({ min: -150 * 86_400, max: 150 * 86_400 }), (nowSeconds, offsetSeconds) => {
        const now = new Date(Date.UTC(2000, 0, 1) + nowSeconds * 1000);
        const moment = new Date(now.getTime() + offsetSeconds * 1000);
        expect(parseTransmissionDateTime(transmissionDateTime(moment), now).getTime()).toBe(moment.getTime());
      }),
    );
  });

  it('refuses what is not a date and time, naming DE7', () => {
    for (const value of ['031512000', '1315120000', '0230120000', '0315250000', '0315126000', '03151200AB']) {
      expect(offendingField(() => parseTransmissionDateTime(value, new Date('2025-03-15T00:00:00Z')))).toBe(7);
    }
  });
});

describe('DE43 card acceptor name/location', () => {
  it('reads name 1–23, city 24–36, state 37–38, country 39–40', () => {
    expect(parseMerchantNameLocation('JOES DINER             SAN FRANCISC CAUS')).toEqual({ name: 'JOES DINER', city: 'SAN FRANCISC', state: 'CA', country: 'US' });
  });

  it('writes 40 characters, cutting long parts and upper-casing, accepted by the field table', () => {
    const value = formatMerchantNameLocation({ name: "Joe's Diner & Grill of the Bay Area", city: 'San Francisco Bay', state: 'CA', country: 'US' });
    expect(value).toBe("JOE'S DINER & GRILL OF SAN FRANCISCOCAUS");
    expect(parseIsoMessage({ isoMti: '0100', fields: { '43': value } }).fields['43']).toBe(value);
  });

  it('refuses another length, naming DE43', () => {
    expect(offendingField(() => parseMerchantNameLocation('SHORT'))).toBe(43);
  });
});

describe('DE54 additional amounts', () => {
  it('writes and reads the original amount of a partial approval (type 57)', () => {
    const value = formatAdditionalAmounts([{ accountType: '00', amountType: '57', currencyNumeric: '840', amountMinor: 2500n }]);
    expect(value).toBe('0057840C000000002500');
    expect(parseAdditionalAmounts(value)).toEqual([{ accountType: '00', amountType: '57', currencyNumeric: '840', amountMinor: 2500n }]);
  });

  it('round-trips 1 to 6 blocks, debits as negative amounts', () => {
    const block = fc.record({
      accountType: fc.stringMatching(/^\d{2}$/),
      amountType: fc.stringMatching(/^[0-9A-Z]{2}$/),
      currencyNumeric: fc.stringMatching(/^\d{3}$/),
      amountMinor: fc.bigInt({ min: -(10n ** 12n) + 1n, max: 10n ** 12n - 1n }),
    });
    fc.assert(
      fc.property(fc.array(block, { minLength: 1, maxLength: 6 }), (amounts) => {
        const value = formatAdditionalAmounts(amounts);
        expect(value).toHaveLength(20 * amounts.length);
        expect(parseAdditionalAmounts(value)).toEqual(amounts);
      }),
    );
  });

  it('refuses a partial block or a bad sign, naming DE54', () => {
    expect(offendingField(() => parseAdditionalAmounts('0057840C00000000250'))).toBe(54);
    expect(offendingField(() => parseAdditionalAmounts('0057840X000000002500'))).toBe(54);
    expect(offendingField(() => parseAdditionalAmounts(''))).toBe(54);
  });
});

describe('DE90 original data elements', () => {
  it('writes MTI 4 + STAN 6 + DE7 10 + acquirer 11 + forwarder 11, zero filling what is unknown', () => {
    expect(formatOriginalDataElements({ mti: '0100', stan: '000123', transmissionDateTime: '0315120000', acquirerId: '123456' })).toBe(
      '010000012303151200000000012345600000000000',
    );
    expect(formatOriginalDataElements({ mti: '0100' })).toBe(`0100${'0'.repeat(38)}`);
  });

  it('reads it back', () => {
    expect(parseOriginalDataElements('010000012303151200000000012345600000000000')).toEqual({
      mti: '0100',
      stan: '000123',
      transmissionDateTime: '0315120000',
      acquirerId: '00000123456',
      forwardingId: '00000000000',
    });
  });

  it('refuses a wrong length or an original MTI that is not 1987, naming DE90', () => {
    expect(offendingField(() => parseOriginalDataElements('0100'))).toBe(90);
    expect(offendingField(() => parseOriginalDataElements(`1100${'0'.repeat(38)}`))).toBe(90);
    expect(offendingField(() => parseOriginalDataElements('0'.repeat(42)))).toBe(90);
  });
});

describe('DE95 replacement amounts', () => {
  it('writes actual transaction 12, actual settlement 12 and two signed fees of 9', () => {
    const value = formatReplacementAmounts({ actualTransactionMinor: 1000n });
    expect(value).toBe('000000001000000000001000D00000000D00000000');
    expect(value).toHaveLength(42);
    expect(parseIsoMessage({ isoMti: '0420', fields: { '95': value } }).fields['95']).toBe(value);
  });

  it('reads signed or unsigned fees; a C fee is a credit (negative)', () => {
    expect(parseReplacementAmounts('000000001000000000001100C00000150000000075')).toEqual({
      actualTransactionMinor: 1000n,
      actualSettlementMinor: 1100n,
      transactionFeeMinor: -150n,
      settlementFeeMinor: 75n,
    });
  });

  it('round-trips', () => {
    const amount = fc.bigInt({ min: 0n, max: 10n ** 12n - 1n });
    const fee = fc.bigInt({ min: -(10n ** 8n) + 1n, max: 10n ** 8n - 1n });
    fc.assert(
      fc.property(amount, amount, fee, fee, (actualTransactionMinor, actualSettlementMinor, transactionFeeMinor, settlementFeeMinor) => {
        const amounts = { actualTransactionMinor, actualSettlementMinor, transactionFeeMinor, settlementFeeMinor };
        expect(parseReplacementAmounts(formatReplacementAmounts(amounts))).toEqual(amounts);
      }),
    );
  });

  it('refuses another layout, naming DE95', () => {
    expect(offendingField(() => parseReplacementAmounts('000000001000'))).toBe(95);
    expect(offendingField(() => parseReplacementAmounts('000000001000000000001000X00000000D00000000'))).toBe(95);
  });
});

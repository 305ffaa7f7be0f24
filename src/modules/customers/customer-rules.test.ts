import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/http/errors.js';
import {
  assertKycEditable,
  formatOwnershipPercentage,
  isKycEditable,
  maskSsn,
  normalisePhone,
  normaliseSsn,
  occupationCodes,
  ownershipUnitsFromDatabase,
  ownershipUnitsToDatabase,
  parseOwnershipPercentage,
  requireBirthDate,
  requireCountry,
} from './customer-rules.js';

const phoneFields = { number: 'phoneNumber', callingCode: 'phoneCountryCode' };

function fieldOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    if (error instanceof AppError) return error.details?.[0]?.field;
    throw error;
  }
  return undefined;
}

describe('customer rules', () => {
  it('knows the 23 SOC 2018 major groups and no "Other"', () => {
    expect(occupationCodes).toHaveLength(23);
    expect(occupationCodes[0]).toBe('11');
    expect(occupationCodes.at(-1)).toBe('55');
    expect(occupationCodes).not.toContain('99');
  });

  it('accepts ISO alpha-2 capitals only', () => {
    expect(requireCountry('DE', 'c')).toBe('DE');
    for (const bad of ['de', 'DEU', 'XX', 'D', '']) expect(fieldOf(() => requireCountry(bad, 'c'))).toBe('c');
  });

  it('checks birth dates against the injected clock', () => {
    const now = new Date('2026-03-01T12:00:00Z');
    expect(requireBirthDate('2026-02-28', 'b', now)).toBe('2026-02-28');
    expect(requireBirthDate('2024-02-29', 'b', now)).toBe('2024-02-29');
    for (const bad of ['2023-02-29', '2026-03-01', '2026-13-01', '1899-01-01']) expect(fieldOf(() => requireBirthDate(bad, 'b', now))).toBe('b');
  });

  it('normalises and masks SSNs', () => {
    expect(normaliseSsn('078051120', 's')).toBe('078-05-1120');
    expect(maskSsn('1120')).toBe('***-**-1120');
    expect(fieldOf(() => normaliseSsn('078-05-112', 's'))).toBe('s');
  });

  it('normalises phone numbers against their calling code', () => {
    expect(normalisePhone('(30) 123-456', '+49', phoneFields)).toEqual({ phoneNumber: '30123456', phoneCountryCode: '49' });
    expect(fieldOf(() => normalisePhone('2125550123', '0', phoneFields))).toBe('phoneCountryCode');
    expect(fieldOf(() => normalisePhone('21255501234567', '1', phoneFields))).toBe('phoneNumber');
  });

  it('handles ownership percentages exactly', () => {
    expect(parseOwnershipPercentage('100', 'o')).toBe(1_000_000n);
    expect(parseOwnershipPercentage('0.0001', 'o')).toBe(1n);
    expect(formatOwnershipPercentage(333_333n)).toBe('33.3333');
    expect(formatOwnershipPercentage(250_000n)).toBe('25');
    expect(formatOwnershipPercentage(255_000n)).toBe('25.5');
    expect(ownershipUnitsFromDatabase(ownershipUnitsToDatabase(123_456n))).toBe(123_456n);
    expect(ownershipUnitsFromDatabase('25.0000')).toBe(250_000n);
    for (const bad of ['100.0001', '0', '0.00001', '1,5', ' 5', '+5']) expect(fieldOf(() => parseOwnershipPercentage(bad, 'o'))).toBe('o');
  });

  it('allows KYC edits before onboarding and while PENDING or PROCESSING only', () => {
    expect(isKycEditable(null)).toBe(true);
    expect(isKycEditable('PENDING')).toBe(true);
    expect(isKycEditable('PROCESSING')).toBe(true);
    expect(isKycEditable('APPROVED')).toBe(false);
    expect(() => assertKycEditable('DENIED_COMPLIANCE', 'kyc.lastName')).toThrow(/DENIED_COMPLIANCE/);
  });
});

import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/http/errors.js';
import {
  assertOutcomeAllowed,
  assertTransition,
  canTransition,
  onboardingStatuses,
  onboardingTransitions,
  verificationOutcomes,
  verificationOutcomeTransitions,
  verificationStatuses,
  type OnboardingStatus,
} from './onboarding.js';

const legal: Array<[OnboardingStatus, OnboardingStatus]> = [
  ['PENDING', 'PROCESSING'],
  ['PENDING', 'DENIED_COMPLIANCE'],
  ['PENDING', 'DENIED_IDENTITY_THEFT'],
  ['PENDING', 'EXPIRED'],
  ['PENDING', 'ARCHIVED'],
  ['PROCESSING', 'APPROVED'],
  ['PROCESSING', 'DENIED_COMPLIANCE'],
  ['PROCESSING', 'DENIED_IDENTITY_THEFT'],
  ['PROCESSING', 'ARCHIVED'],
];

const allPairs = onboardingStatuses.flatMap((from) => onboardingStatuses.map((to) => [from, to] as [OnboardingStatus, OnboardingStatus]));
const legalKeys = new Set(legal.map(([from, to]) => `${from}>${to}`));
const illegal = allPairs.filter(([from, to]) => !legalKeys.has(`${from}>${to}`));

describe('onboarding transition table', () => {
  it('holds exactly the documented transitions', () => {
    const fromTable = Object.entries(onboardingTransitions).flatMap(([from, targets]) => targets.map((to) => `${from}>${to}`));
    expect(new Set(fromTable)).toEqual(legalKeys);
  });

  it.each(legal)('allows %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
    expect(() => assertTransition(from, to, 'test')).not.toThrow();
  });

  it.each(illegal)('refuses %s → %s with 409 INVALID_STATE', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
    let thrown: unknown;
    try {
      assertTransition(from, to, 'test');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).statusCode).toBe(409);
    expect((thrown as AppError).code).toBe('INVALID_STATE');
  });

  it('makes APPROVED, the denials, EXPIRED and ARCHIVED final', () => {
    for (const status of ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'EXPIRED', 'ARCHIVED'] as const) {
      expect(onboardingTransitions[status]).toEqual([]);
    }
  });
});

describe('verification outcome table', () => {
  const pairs = verificationStatuses.flatMap((from) => verificationOutcomes.map((outcome) => [from, outcome] as const));

  it.each(pairs)('from %s, outcome %s is allowed exactly when the table lists it', (from, outcome) => {
    const allowed = verificationOutcomeTransitions[from].includes(outcome);
    if (allowed) {
      expect(() => assertOutcomeAllowed(from, outcome)).not.toThrow();
    } else {
      expect(() => assertOutcomeAllowed(from, outcome)).toThrow(expect.objectContaining({ code: 'INVALID_STATE', statusCode: 409 }));
    }
  });

  it('takes no outcome once the verification is finished', () => {
    for (const status of ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'EXPIRED', 'NOT_REQUIRED'] as const) {
      expect(verificationOutcomeTransitions[status]).toEqual([]);
    }
    expect(verificationOutcomeTransitions.MANUAL_REVIEW).not.toContain('MANUAL_REVIEW');
  });
});

import { AppError } from '../../platform/http/errors.js';

/**
 * Onboardings: one KYC run for an individual or one KYB run for a business. The status is what
 * clients see (the customer's onboardingStatus); the verification status is what the identity
 * verification provider (the SDK flow, or the business review) has said so far. docs/compliance.md
 * draws both machines.
 */

export const onboardingKinds = ['KYC', 'KYB'] as const;
export type OnboardingKind = (typeof onboardingKinds)[number];

export const onboardingStatuses = [
  /** Started; the person has not finished the SDK flow yet (KYC) or the review has not begun. */
  'PENDING',
  /** Verification submitted (or not needed); waiting for the review, documents or related persons. */
  'PROCESSING',
  'APPROVED',
  'DENIED_COMPLIANCE',
  'DENIED_IDENTITY_THEFT',
  /** The SDK link expired before the person finished the flow. */
  'EXPIRED',
  /** Replaced by a newer onboarding through a re-run. */
  'ARCHIVED',
] as const;
export type OnboardingStatus = (typeof onboardingStatuses)[number];

export const denialStatuses = ['DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT'] as const satisfies readonly OnboardingStatus[];
export type DenialStatus = (typeof denialStatuses)[number];

/** Statuses in which an onboarding is still running: KYC data stays editable and a re-run is allowed. */
export const liveStatuses = ['PENDING', 'PROCESSING'] as const satisfies readonly OnboardingStatus[];

/**
 * The one table of legal status changes. Anything not listed is refused with 409 INVALID_STATE.
 * APPROVED, the denials, EXPIRED and ARCHIVED are final: a new onboarding is needed after them
 * (POST /v1/compliance/kyc after EXPIRED; support after a denial).
 */
export const onboardingTransitions: Readonly<Record<OnboardingStatus, readonly OnboardingStatus[]>> = {
  PENDING: ['PROCESSING', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'EXPIRED', 'ARCHIVED'],
  PROCESSING: ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'ARCHIVED'],
  APPROVED: [],
  DENIED_COMPLIANCE: [],
  DENIED_IDENTITY_THEFT: [],
  EXPIRED: [],
  ARCHIVED: [],
};

export function canTransition(from: OnboardingStatus, to: OnboardingStatus): boolean {
  return onboardingTransitions[from].includes(to);
}

/** Throws 409 INVALID_STATE unless the transition is in the table. `action` says what was attempted. */
export function assertTransition(from: OnboardingStatus, to: OnboardingStatus, action: string): void {
  if (!canTransition(from, to)) {
    throw new AppError('INVALID_STATE', `Cannot ${action}: the onboarding is ${from}, and ${from} cannot become ${to}.`);
  }
}

export function isDenial(status: string): status is DenialStatus {
  return (denialStatuses as readonly string[]).includes(status);
}

export function isLive(status: string): boolean {
  return (liveStatuses as readonly string[]).includes(status);
}

/**
 * What the verification provider has said. PENDING: the person has not finished the SDK flow (KYC)
 * or the review waits for the related persons (KYB). NOT_REQUIRED: EXTERNAL strategy, an outside
 * provider already verified the person.
 */
export const verificationStatuses = [
  'PENDING',
  'MANUAL_REVIEW',
  'APPROVED',
  'DENIED_COMPLIANCE',
  'DENIED_IDENTITY_THEFT',
  'ERROR',
  'EXPIRED',
  'NOT_REQUIRED',
] as const;
export type VerificationStatus = (typeof verificationStatuses)[number];

/** Outcomes a verification can end in; also the body of the sandbox outcome control. */
export const verificationOutcomes = ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'MANUAL_REVIEW', 'ERROR'] as const;
export type VerificationOutcome = (typeof verificationOutcomes)[number];

/**
 * Which verification statuses may receive an outcome. A finished verification (APPROVED, a denial,
 * EXPIRED, NOT_REQUIRED) takes none; MANUAL_REVIEW cannot be sent to manual review again.
 */
export const verificationOutcomeTransitions: Readonly<Record<VerificationStatus, readonly VerificationOutcome[]>> = {
  PENDING: ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'MANUAL_REVIEW', 'ERROR'],
  MANUAL_REVIEW: ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'ERROR'],
  ERROR: ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'MANUAL_REVIEW', 'ERROR'],
  APPROVED: [],
  DENIED_COMPLIANCE: [],
  DENIED_IDENTITY_THEFT: [],
  EXPIRED: [],
  NOT_REQUIRED: [],
};

export function assertOutcomeAllowed(from: VerificationStatus, outcome: VerificationOutcome): void {
  if (!verificationOutcomeTransitions[from].includes(outcome)) {
    throw new AppError('INVALID_STATE', `Cannot record the outcome ${outcome}: the verification is already ${from}.`);
  }
}

/** Onboarding strategies, chosen per client (GET/PATCH /v1/compliance/settings). */
export const onboardingStrategies = ['STANDARD', 'EXTERNAL'] as const;
export type OnboardingStrategy = (typeof onboardingStrategies)[number];
export const defaultOnboardingStrategy: OnboardingStrategy = 'STANDARD';

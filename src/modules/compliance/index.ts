/**
 * Public surface of the compliance module: other modules import only from here.
 */
export * from './onboarding.js';
export type { IdentityVerificationProvider, PersonToVerify, VerificationSession, BusinessReviewInput, BusinessReviewDecision } from './identity-provider.js';

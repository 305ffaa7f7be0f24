import QRCode from 'qrcode';

/**
 * The identity verification vendor, behind an interface. The compliance module asks it for a
 * verification session (an SDK link the person opens) and for the review of a business; the
 * vendor reports results back through the compliance service (applyVerificationOutcome), as a
 * real vendor's webhook would. The sandbox implementation lives in src/modules/sandbox/identity.
 */

export interface PersonToVerify {
  firstName: string;
  lastName: string;
}

export interface VerificationSession {
  /** The link the person opens (the SDK link), shown to the client once. */
  link: string;
  /** SHA-256 of the secret in the link: what we keep, so a database copy reveals no live link. */
  tokenSha256: Buffer;
  expiresAt: Date;
}

export interface BusinessReviewInput {
  legalName: string | null;
  /** The KYC onboarding status of each related person (null: none started). */
  relatedPersonStatuses: ReadonlyArray<string | null>;
}

/** PENDING: the review waits (for example for the related persons' KYC). */
export type BusinessReviewDecision = 'PENDING' | 'MANUAL_REVIEW' | 'APPROVED' | 'DENIED_COMPLIANCE';

export interface IdentityVerificationProvider {
  readonly name: string;
  /**
   * Opens a verification session for a person. Must not touch our database: it may be called
   * inside a transaction only because the sandbox implementation does no I/O.
   */
  startSession(input: { onboardingId: string; person: PersonToVerify; now: Date }): Promise<VerificationSession>;
  /** Decides a business review from the business data and the related persons' own KYC. Pure. */
  reviewBusiness(input: BusinessReviewInput): BusinessReviewDecision;
  /**
   * Sandbox vendors only: whether this person's KYC completes as soon as it starts (verification
   * approved and every required document put on file), for one-call onboarding in demos. Pure.
   */
  completesAtOnce?(person: PersonToVerify): boolean;
}

/** The SDK link as a QR code: a PNG data URL (data:image/png;base64,…) that a client can show as an <img>. */
export async function qrCodeDataUrl(link: string): Promise<string> {
  return QRCode.toDataURL(link, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, width: 256 });
}

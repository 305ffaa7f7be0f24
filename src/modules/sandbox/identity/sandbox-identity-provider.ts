import crypto from 'node:crypto';
import type {
  BusinessReviewDecision,
  BusinessReviewInput,
  IdentityVerificationProvider,
  PersonToVerify,
  VerificationSession,
} from '../../compliance/index.js';
import type { VerificationOutcome } from '../../compliance/index.js';

/** The path of the hosted verification page; the token follows it. */
export const hostedKycPathPrefix = '/hosted/kyc/';
/** 32 random bytes in base64url: 43 characters. */
export const sdkTokenPattern = /^[A-Za-z0-9_-]{43}$/;

/**
 * Magic last names: a person with one of these last names ends in that outcome when they press
 * "Complete verification" on the hosted page (compared without regard to case or surrounding
 * spaces). Every other last name is approved. docs/sandbox.md lists them.
 */
export const magicLastNames: Readonly<Record<string, VerificationOutcome>> = {
  deny: 'DENIED_COMPLIANCE',
  theft: 'DENIED_IDENTITY_THEFT',
  review: 'MANUAL_REVIEW',
  error: 'ERROR',
};

/** Words in a business's legal name that decide its review (whole words, any case). */
export const magicLegalNameWords: Readonly<Record<string, BusinessReviewDecision>> = {
  deny: 'DENIED_COMPLIANCE',
  review: 'MANUAL_REVIEW',
};

/**
 * The magic last name of one-call KYC: starting the KYC of a person with this last name approves
 * it at once (the verification, and every required document put on file by the sandbox).
 */
export const instantLastName = 'instant';

export function sandboxOutcomeFor(person: PersonToVerify): VerificationOutcome {
  return magicLastNames[person.lastName.trim().toLowerCase()] ?? 'APPROVED';
}

export function hashSdkToken(token: string): Buffer {
  return crypto.createHash('sha256').update(token).digest();
}

/**
 * The sandbox identity vendor. Sessions are links to the hosted page this program serves
 * (PUBLIC_BASE_URL + /hosted/kyc/<token>); the token is 256 random bits and only its hash is
 * stored. The link expires after linkTtlMs, measured by the injected clock.
 */
export class SandboxIdentityProvider implements IdentityVerificationProvider {
  readonly name = 'sandbox';

  constructor(private readonly options: { publicBaseUrl: string; linkTtlMs: number }) {}

  async startSession(input: { onboardingId: string; person: PersonToVerify; now: Date }): Promise<VerificationSession> {
    const token = crypto.randomBytes(32).toString('base64url');
    return {
      link: `${this.options.publicBaseUrl}${hostedKycPathPrefix}${token}`,
      tokenSha256: hashSdkToken(token),
      expiresAt: new Date(input.now.getTime() + this.options.linkTtlMs),
    };
  }

  completesAtOnce(person: PersonToVerify): boolean {
    return person.lastName.trim().toLowerCase() === instantLastName;
  }

  /**
   * A denied related person denies the business; a magic word in the legal name decides it;
   * otherwise the review passes once every related person is KYC APPROVED, and waits before.
   */
  reviewBusiness(input: BusinessReviewInput): BusinessReviewDecision {
    if (input.relatedPersonStatuses.some((status) => status === 'DENIED_COMPLIANCE' || status === 'DENIED_IDENTITY_THEFT')) {
      return 'DENIED_COMPLIANCE';
    }
    const words = (input.legalName ?? '').toLowerCase().split(/[^a-z0-9]+/);
    for (const [word, decision] of Object.entries(magicLegalNameWords)) {
      if (words.includes(word)) return decision;
    }
    const allApproved = input.relatedPersonStatuses.length > 0 && input.relatedPersonStatuses.every((status) => status === 'APPROVED');
    return allApproved ? 'APPROVED' : 'PENDING';
  }
}

import type { OnboardingStatus, OnboardingStrategy, VerificationStatus } from './onboarding.js';
import { isDenial } from './onboarding.js';

/**
 * The compliance status rules, as data: which checks exist, when each passes, whether it is
 * required under each onboarding strategy, which action a failed check suggests, and the ordered
 * rules that pick the one next action. Everything here is pure; the service gathers the facts.
 * docs/compliance.md reproduces these tables and every row has a test.
 */

// ---------------------------------------------------------------------------------------------
// Shared shapes
// ---------------------------------------------------------------------------------------------

export interface OnboardingFacts {
  status: OnboardingStatus;
  verificationStatus: VerificationStatus;
}

export type CheckCategory = 'profile' | 'verification' | 'document';

export interface CheckRule<F, N extends string, A extends string> {
  name: N;
  category: CheckCategory;
  /** Required under each strategy: the strategy table of docs/compliance.md. */
  required: Readonly<Record<OnboardingStrategy, boolean>>;
  /** When the check passes, in words (for the docs). */
  passesWhen: string;
  passed(facts: F): boolean;
  suggestedAction(facts: F): A;
  /** Whether the sandbox control POST /v1/sandbox/customers/:id/compliance-checks may force it. */
  forceable: boolean;
}

export interface CheckResult<N extends string, A extends string> {
  name: N;
  passed: boolean;
  required: boolean;
  suggestedAction: A | null;
}

export interface NextActionRule<F, N extends string, A extends string> {
  /** The condition, in words (for the docs). */
  when: string;
  applies(facts: F, checks: ReadonlyArray<CheckResult<N, A>>): boolean;
  /** null: nothing left to do (compliant). */
  action: A | null;
}

export interface ComplianceEvaluation<N extends string, A extends string> {
  isCompliant: boolean;
  nextAction: A | null;
  checks: Array<CheckResult<N, A>>;
  summary: { passed: number; failed: number; requiredFailed: N[] };
}

interface FactsBase {
  strategy: OnboardingStrategy;
  onboarding: OnboardingFacts | null;
  overrides: ReadonlyMap<string, boolean>;
}

function evaluate<F extends FactsBase, N extends string, A extends string>(
  rules: ReadonlyArray<CheckRule<F, N, A>>,
  nextActionRules: ReadonlyArray<NextActionRule<F, N, A>>,
  facts: F,
): ComplianceEvaluation<N, A> {
  const checks = rules.map((rule) => {
    const forced = rule.forceable ? facts.overrides.get(rule.name) : undefined;
    const passed = forced ?? rule.passed(facts);
    return { name: rule.name, passed, required: rule.required[facts.strategy], suggestedAction: passed ? null : rule.suggestedAction(facts) };
  });
  const requiredFailed = checks.filter((check) => check.required && !check.passed).map((check) => check.name);
  const passedCount = checks.filter((check) => check.passed).length;
  const rule = nextActionRules.find((candidate) => candidate.applies(facts, checks));
  return {
    isCompliant: requiredFailed.length === 0,
    nextAction: rule ? rule.action : null,
    checks,
    summary: { passed: passedCount, failed: checks.length - passedCount, requiredFailed },
  };
}

/** An onboarding that counts as started: any but none at all and EXPIRED (ARCHIVED is never the latest). */
function hasActiveOnboarding(facts: FactsBase): boolean {
  return facts.onboarding !== null && facts.onboarding.status !== 'EXPIRED' && facts.onboarding.status !== 'ARCHIVED';
}

function requiredFailing<N extends string, A extends string>(checks: ReadonlyArray<CheckResult<N, A>>, names: readonly N[]): boolean {
  return checks.some((check) => check.required && !check.passed && names.includes(check.name));
}

// ---------------------------------------------------------------------------------------------
// Individuals (KYC): GET /v1/compliance/status/:customerId
// ---------------------------------------------------------------------------------------------

export const complianceActions = ['START_KYC', 'COMPLETE_SDK_FLOW', 'UPLOAD_DOCUMENT', 'UPDATE_PROFILE', 'RERUN_KYC', 'WAIT', 'CONTACT_SUPPORT'] as const;
export type ComplianceAction = (typeof complianceActions)[number];

export const individualCheckNames = [
  'KYC_DATA_PRESENT',
  'KYC_STARTED',
  'SDK_VERIFICATION_COMPLETED',
  'KYC_STATUS',
  'REGISTRATION_ADDRESS',
  'TAX_COUNTRY',
  'OCCUPATION',
  'DOC_SOURCE_OF_FUNDS',
  'DOC_FATCA',
  'DOC_BIOMETRIC_REPORT',
  'DOC_PROOF_OF_ADDRESS',
] as const;
export type IndividualCheckName = (typeof individualCheckNames)[number];

export interface IndividualFacts extends FactsBase {
  /** KYC fields that are missing (see kycDataFields); empty when the data is complete. */
  missingKycFields: readonly string[];
  hasRegistrationAddress: boolean;
  taxIdCountry: string | null;
  nationality: string | null;
  hasOccupation: boolean;
  documentTypes: ReadonlySet<string>;
}

/** The FATCA form a person needs: a W-9 for US persons (US nationality or US tax country), else a W-8BEN. */
export function fatcaFormFor(facts: Pick<IndividualFacts, 'nationality' | 'taxIdCountry'>): 'DOC_FATCA_W9' | 'DOC_FATCA_W8BEN' {
  return facts.nationality === 'US' || facts.taxIdCountry === 'US' ? 'DOC_FATCA_W9' : 'DOC_FATCA_W8BEN';
}

function kycStartAction(facts: FactsBase): ComplianceAction {
  return hasActiveOnboarding(facts) ? 'WAIT' : 'START_KYC';
}

function sdkAction(facts: IndividualFacts): ComplianceAction {
  const onboarding = facts.onboarding;
  if (!onboarding || !hasActiveOnboarding(facts)) return 'START_KYC';
  if (isDenial(onboarding.status) || isDenial(onboarding.verificationStatus)) return 'CONTACT_SUPPORT';
  switch (onboarding.verificationStatus) {
    case 'PENDING':
      return 'COMPLETE_SDK_FLOW';
    case 'ERROR':
      return 'RERUN_KYC';
    default:
      return 'WAIT';
  }
}

type IndividualRule = CheckRule<IndividualFacts, IndividualCheckName, ComplianceAction>;
const both = { STANDARD: true, EXTERNAL: true } as const;
const standardOnly = { STANDARD: true, EXTERNAL: false } as const;
const externalOnly = { STANDARD: false, EXTERNAL: true } as const;
const neither = { STANDARD: false, EXTERNAL: false } as const;

function documentRule(name: IndividualCheckName, required: Record<OnboardingStrategy, boolean>, passesWhen: string, passed: (facts: IndividualFacts) => boolean): IndividualRule {
  return { name, category: 'document', required, passesWhen, passed, suggestedAction: () => 'UPLOAD_DOCUMENT', forceable: true };
}

/**
 * The individual checks. STANDARD: the SDK flow verifies the identity document and the selfie, so
 * the biometric report and a proof of address are not asked for. EXTERNAL: an outside provider
 * verified the person; its biometric report and a proof of address must be uploaded instead.
 */
export const individualCheckRules: readonly IndividualRule[] = [
  {
    name: 'KYC_DATA_PRESENT',
    category: 'profile',
    required: both,
    passesWhen: 'first name, last name, birth date, nationality and at least one identity document number (SSN, ID card, passport or driving licence) are on the customer',
    passed: (facts) => facts.missingKycFields.length === 0,
    suggestedAction: () => 'UPDATE_PROFILE',
    forceable: true,
  },
  {
    name: 'KYC_STARTED',
    category: 'verification',
    required: both,
    passesWhen: 'the customer has an onboarding that has not expired',
    passed: (facts) => hasActiveOnboarding(facts),
    suggestedAction: () => 'START_KYC',
    forceable: false,
  },
  {
    name: 'SDK_VERIFICATION_COMPLETED',
    category: 'verification',
    required: standardOnly,
    passesWhen: 'STANDARD: the SDK identity verification is APPROVED; EXTERNAL: always (an outside provider verified the person)',
    passed: (facts) => facts.strategy === 'EXTERNAL' || (hasActiveOnboarding(facts) && facts.onboarding?.verificationStatus === 'APPROVED'),
    suggestedAction: sdkAction,
    forceable: false,
  },
  {
    name: 'KYC_STATUS',
    category: 'verification',
    required: both,
    passesWhen: 'the onboarding status is APPROVED',
    passed: (facts) => facts.onboarding?.status === 'APPROVED',
    suggestedAction: (facts) => (facts.onboarding && isDenial(facts.onboarding.status) ? 'CONTACT_SUPPORT' : kycStartAction(facts)),
    forceable: false,
  },
  {
    name: 'REGISTRATION_ADDRESS',
    category: 'profile',
    required: both,
    passesWhen: 'kyc.mainAddress is set',
    passed: (facts) => facts.hasRegistrationAddress,
    suggestedAction: () => 'UPDATE_PROFILE',
    forceable: true,
  },
  {
    name: 'TAX_COUNTRY',
    category: 'profile',
    required: both,
    passesWhen: 'kyc.taxIdCountry is set',
    passed: (facts) => facts.taxIdCountry !== null,
    suggestedAction: () => 'UPDATE_PROFILE',
    forceable: true,
  },
  {
    name: 'OCCUPATION',
    category: 'profile',
    required: neither,
    passesWhen: 'kyc.occupation is set (optional in the specification, so never required)',
    passed: (facts) => facts.hasOccupation,
    suggestedAction: () => 'UPDATE_PROFILE',
    forceable: true,
  },
  documentRule('DOC_SOURCE_OF_FUNDS', both, 'a DOC_SOURCE_OF_FUNDS document is on file (uploaded, or generated by the source-of-funds declaration)', (facts) =>
    facts.documentTypes.has('DOC_SOURCE_OF_FUNDS'),
  ),
  documentRule('DOC_FATCA', both, 'the FATCA form the person needs is on file: DOC_FATCA_W9 for a US person (US nationality or US tax country), else DOC_FATCA_W8BEN', (facts) =>
    facts.documentTypes.has(fatcaFormFor(facts)),
  ),
  documentRule('DOC_BIOMETRIC_REPORT', externalOnly, 'a DOC_BIOMETRIC_REPORT document is on file', (facts) => facts.documentTypes.has('DOC_BIOMETRIC_REPORT')),
  documentRule('DOC_PROOF_OF_ADDRESS', externalOnly, 'a DOC_PROOF_OF_ADDRESS document is on file', (facts) => facts.documentTypes.has('DOC_PROOF_OF_ADDRESS')),
];

type IndividualNextRule = NextActionRule<IndividualFacts, IndividualCheckName, ComplianceAction>;
const profileChecks: readonly IndividualCheckName[] = ['KYC_DATA_PRESENT', 'REGISTRATION_ADDRESS', 'TAX_COUNTRY', 'OCCUPATION'];
const documentChecks: readonly IndividualCheckName[] = ['DOC_SOURCE_OF_FUNDS', 'DOC_FATCA', 'DOC_BIOMETRIC_REPORT', 'DOC_PROOF_OF_ADDRESS'];

/** First matching row wins. */
export const individualNextActionRules: readonly IndividualNextRule[] = [
  { when: 'the onboarding is denied (DENIED_COMPLIANCE or DENIED_IDENTITY_THEFT)', applies: (facts) => facts.onboarding !== null && isDenial(facts.onboarding.status), action: 'CONTACT_SUPPORT' },
  { when: 'every required check passes', applies: (_facts, checks) => checks.every((check) => !check.required || check.passed), action: null },
  { when: 'a required profile check fails (KYC_DATA_PRESENT, REGISTRATION_ADDRESS, TAX_COUNTRY, OCCUPATION)', applies: (_facts, checks) => requiredFailing(checks, profileChecks), action: 'UPDATE_PROFILE' },
  { when: 'no onboarding yet, or the last one EXPIRED', applies: (facts) => !hasActiveOnboarding(facts), action: 'START_KYC' },
  { when: 'the SDK verification ended in a system error', applies: (facts) => facts.onboarding?.verificationStatus === 'ERROR', action: 'RERUN_KYC' },
  { when: 'the SDK flow is not finished (verification PENDING)', applies: (facts) => facts.onboarding?.verificationStatus === 'PENDING', action: 'COMPLETE_SDK_FLOW' },
  { when: 'the SDK verification is under manual review', applies: (facts) => facts.onboarding?.verificationStatus === 'MANUAL_REVIEW', action: 'WAIT' },
  { when: 'a required document check fails', applies: (_facts, checks) => requiredFailing(checks, documentChecks), action: 'UPLOAD_DOCUMENT' },
  { when: 'otherwise (everything is in; the decision is being made)', applies: () => true, action: 'WAIT' },
];

export type IndividualEvaluation = ComplianceEvaluation<IndividualCheckName, ComplianceAction>;

export function evaluateIndividual(facts: IndividualFacts): IndividualEvaluation {
  return evaluate(individualCheckRules, individualNextActionRules, facts);
}

// ---------------------------------------------------------------------------------------------
// Businesses (KYB): GET /v1/compliance/business/status/:customerId
// ---------------------------------------------------------------------------------------------

export const businessActions = [
  'UPDATE_BUSINESS_DATA',
  'ADD_PERSON_RELATIONS',
  'COMPLETE_UBO_KYC',
  'START_KYB',
  'UPLOAD_BUSINESS_DOCUMENT',
  'WAIT',
  'CONTACT_SUPPORT',
] as const;
export type BusinessAction = (typeof businessActions)[number];

export const businessCheckNames = [
  'KYB_DATA_PRESENT',
  'BUSINESS_ADDRESS',
  'RELATED_PERSONS',
  'UBO_KYC_APPROVED',
  'KYB_STARTED',
  'KYB_REVIEW_COMPLETED',
  'KYB_STATUS',
  'DOC_BUSINESS_REGISTRATION',
  'DOC_SOURCE_OF_FUNDS',
  'DOC_OWNERSHIP_STRUCTURE',
  'DOC_PROOF_OF_ADDRESS',
] as const;
export type BusinessCheckName = (typeof businessCheckNames)[number];

export interface BusinessFacts extends FactsBase {
  /** KYB fields that are missing (see kybDataFields); empty when the data is complete. */
  missingKybFields: readonly string[];
  hasBusinessAddress: boolean;
  shareholderCount: number;
  /** Representatives whose representingRange covers the client's day (or who have none). */
  representativeCount: number;
  /** Representatives related to the business whose representingRange does not cover that day. */
  outOfRangeRepresentativeCount: number;
  /** The onboarding status of each related person (null: no KYC started), one entry per person. */
  relatedPersonStatuses: ReadonlyArray<string | null>;
  documentTypes: ReadonlySet<string>;
}

export function relatedPersonsValid(facts: Pick<BusinessFacts, 'shareholderCount' | 'representativeCount'>): boolean {
  return facts.shareholderCount >= 1 && facts.representativeCount >= 1;
}

export function everyRelatedPersonApproved(facts: Pick<BusinessFacts, 'relatedPersonStatuses'>): boolean {
  return facts.relatedPersonStatuses.length > 0 && facts.relatedPersonStatuses.every((status) => status === 'APPROVED');
}

type BusinessRule = CheckRule<BusinessFacts, BusinessCheckName, BusinessAction>;

function businessDocumentRule(name: BusinessCheckName, required: Record<OnboardingStrategy, boolean>): BusinessRule {
  return {
    name,
    category: 'document',
    required,
    passesWhen: `a ${name} business document is on file`,
    passed: (facts) => facts.documentTypes.has(name),
    suggestedAction: () => 'UPLOAD_BUSINESS_DOCUMENT',
    forceable: true,
  };
}

function kybStartAction(facts: FactsBase): BusinessAction {
  if (facts.onboarding && isDenial(facts.onboarding.status)) return 'CONTACT_SUPPORT';
  return hasActiveOnboarding(facts) ? 'WAIT' : 'START_KYB';
}

/**
 * The business checks. STANDARD: the business review (the sandbox decides from the business data
 * and the related persons' own KYC) must pass and every related person must be KYC APPROVED.
 * EXTERNAL: an outside provider reviewed the business and its owners; an ownership structure
 * document is asked for instead.
 */
export const businessCheckRules: readonly BusinessRule[] = [
  {
    name: 'KYB_DATA_PRESENT',
    category: 'profile',
    required: both,
    passesWhen: 'legal name, structure type, NAICS code, tax information and identification are on the business',
    passed: (facts) => facts.missingKybFields.length === 0,
    suggestedAction: () => 'UPDATE_BUSINESS_DATA',
    forceable: true,
  },
  {
    name: 'BUSINESS_ADDRESS',
    category: 'profile',
    required: both,
    passesWhen: 'the main business address is set',
    passed: (facts) => facts.hasBusinessAddress,
    suggestedAction: () => 'UPDATE_BUSINESS_DATA',
    forceable: true,
  },
  {
    name: 'RELATED_PERSONS',
    category: 'profile',
    required: both,
    passesWhen: 'at least one SHAREHOLDER and one REPRESENTATIVE are related to the business, the representative representing it today (a representingRange, when set, covers the day by the client\'s clock)',
    passed: relatedPersonsValid,
    suggestedAction: () => 'ADD_PERSON_RELATIONS',
    forceable: true,
  },
  {
    name: 'UBO_KYC_APPROVED',
    category: 'verification',
    required: standardOnly,
    passesWhen: 'every related person (shareholders and representatives) has an APPROVED KYC onboarding',
    passed: everyRelatedPersonApproved,
    suggestedAction: (facts) => (facts.relatedPersonStatuses.some((status) => status !== null && isDenial(status)) ? 'CONTACT_SUPPORT' : 'COMPLETE_UBO_KYC'),
    forceable: true,
  },
  {
    name: 'KYB_STARTED',
    category: 'verification',
    required: both,
    passesWhen: 'the business has a KYB onboarding',
    passed: (facts) => hasActiveOnboarding(facts),
    suggestedAction: () => 'START_KYB',
    forceable: false,
  },
  {
    name: 'KYB_REVIEW_COMPLETED',
    category: 'verification',
    required: standardOnly,
    passesWhen: 'STANDARD: the business review is APPROVED; EXTERNAL: always',
    passed: (facts) => facts.strategy === 'EXTERNAL' || (hasActiveOnboarding(facts) && facts.onboarding?.verificationStatus === 'APPROVED'),
    suggestedAction: kybStartAction,
    forceable: false,
  },
  {
    name: 'KYB_STATUS',
    category: 'verification',
    required: both,
    passesWhen: 'the KYB onboarding status is APPROVED',
    passed: (facts) => facts.onboarding?.status === 'APPROVED',
    suggestedAction: kybStartAction,
    forceable: false,
  },
  businessDocumentRule('DOC_BUSINESS_REGISTRATION', both),
  businessDocumentRule('DOC_SOURCE_OF_FUNDS', both),
  businessDocumentRule('DOC_OWNERSHIP_STRUCTURE', externalOnly),
  businessDocumentRule('DOC_PROOF_OF_ADDRESS', neither),
];

type BusinessNextRule = NextActionRule<BusinessFacts, BusinessCheckName, BusinessAction>;
const businessDataChecks: readonly BusinessCheckName[] = ['KYB_DATA_PRESENT', 'BUSINESS_ADDRESS'];
const businessDocumentChecks: readonly BusinessCheckName[] = ['DOC_BUSINESS_REGISTRATION', 'DOC_SOURCE_OF_FUNDS', 'DOC_OWNERSHIP_STRUCTURE', 'DOC_PROOF_OF_ADDRESS'];

/** First matching row wins. */
export const businessNextActionRules: readonly BusinessNextRule[] = [
  { when: 'the KYB onboarding is denied', applies: (facts) => facts.onboarding !== null && isDenial(facts.onboarding.status), action: 'CONTACT_SUPPORT' },
  { when: 'every required check passes', applies: (_facts, checks) => checks.every((check) => !check.required || check.passed), action: null },
  { when: 'KYB_DATA_PRESENT or BUSINESS_ADDRESS fails', applies: (_facts, checks) => requiredFailing(checks, businessDataChecks), action: 'UPDATE_BUSINESS_DATA' },
  { when: 'RELATED_PERSONS fails', applies: (_facts, checks) => requiredFailing(checks, ['RELATED_PERSONS']), action: 'ADD_PERSON_RELATIONS' },
  { when: 'no KYB onboarding yet', applies: (facts) => !hasActiveOnboarding(facts), action: 'START_KYB' },
  {
    when: 'a related person\'s KYC was denied',
    applies: (facts, checks) => requiredFailing(checks, ['UBO_KYC_APPROVED']) && facts.relatedPersonStatuses.some((status) => status !== null && isDenial(status)),
    action: 'CONTACT_SUPPORT',
  },
  { when: 'UBO_KYC_APPROVED fails', applies: (_facts, checks) => requiredFailing(checks, ['UBO_KYC_APPROVED']), action: 'COMPLETE_UBO_KYC' },
  { when: 'the business review is under manual review', applies: (facts) => facts.onboarding?.verificationStatus === 'MANUAL_REVIEW', action: 'WAIT' },
  { when: 'a required business document check fails', applies: (_facts, checks) => requiredFailing(checks, businessDocumentChecks), action: 'UPLOAD_BUSINESS_DOCUMENT' },
  { when: 'otherwise (everything is in; the decision is being made)', applies: () => true, action: 'WAIT' },
];

export type BusinessEvaluation = ComplianceEvaluation<BusinessCheckName, BusinessAction>;

export function evaluateBusiness(facts: BusinessFacts): BusinessEvaluation {
  return evaluate(businessCheckRules, businessNextActionRules, facts);
}

// ---------------------------------------------------------------------------------------------
// Approval
// ---------------------------------------------------------------------------------------------

/**
 * An onboarding in PROCESSING is approved when every required check passes except the status
 * check itself (KYC_STATUS / KYB_STATUS), which is what the approval sets.
 */
export function readyForApproval<N extends string, A extends string>(evaluation: ComplianceEvaluation<N, A>, statusCheck: N): boolean {
  return evaluation.summary.requiredFailed.every((name) => name === statusCheck);
}

export function forceableCheckNames(kind: 'KYC' | 'KYB'): string[] {
  const rules: ReadonlyArray<{ name: string; forceable: boolean }> = kind === 'KYC' ? individualCheckRules : businessCheckRules;
  return rules.filter((rule) => rule.forceable).map((rule) => rule.name);
}

import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderRulesTables } from './rules-doc.js';
import {
  businessCheckNames,
  businessCheckRules,
  businessNextActionRules,
  evaluateBusiness,
  evaluateIndividual,
  fatcaFormFor,
  forceableCheckNames,
  individualCheckNames,
  individualCheckRules,
  individualNextActionRules,
  readyForApproval,
  type BusinessFacts,
  type IndividualFacts,
} from './compliance-rules.js';

/** A fully verified individual under STANDARD: every check passes. */
function individual(overrides: Partial<IndividualFacts> = {}): IndividualFacts {
  return {
    strategy: 'STANDARD',
    onboarding: { status: 'APPROVED', verificationStatus: 'APPROVED' },
    overrides: new Map(),
    missingKycFields: [],
    hasRegistrationAddress: true,
    taxIdCountry: 'US',
    nationality: 'US',
    hasOccupation: true,
    documentTypes: new Set(['DOC_SOURCE_OF_FUNDS', 'DOC_FATCA_W9', 'DOC_BIOMETRIC_REPORT', 'DOC_PROOF_OF_ADDRESS']),
    ...overrides,
  };
}

function business(overrides: Partial<BusinessFacts> = {}): BusinessFacts {
  return {
    strategy: 'STANDARD',
    onboarding: { status: 'APPROVED', verificationStatus: 'APPROVED' },
    overrides: new Map(),
    missingKybFields: [],
    hasBusinessAddress: true,
    shareholderCount: 1,
    representativeCount: 1,
    outOfRangeRepresentativeCount: 0,
    relatedPersonStatuses: ['APPROVED', 'APPROVED'],
    documentTypes: new Set(['DOC_BUSINESS_REGISTRATION', 'DOC_SOURCE_OF_FUNDS', 'DOC_OWNERSHIP_STRUCTURE', 'DOC_PROOF_OF_ADDRESS']),
    ...overrides,
  };
}

function checkOf<T extends { checks: Array<{ name: string }> }>(evaluation: T, name: string) {
  const check = evaluation.checks.find((entry) => entry.name === name);
  if (!check) throw new Error(`no check ${name}`);
  return check as T['checks'][number] & { passed: boolean; required: boolean; suggestedAction: string | null };
}

describe('individual checks', () => {
  it('lists every check name of the specification, in order, and nothing else', () => {
    expect(individualCheckRules.map((rule) => rule.name)).toEqual([...individualCheckNames]);
    expect(evaluateIndividual(individual()).checks.map((check) => check.name)).toEqual([...individualCheckNames]);
  });

  it('a fully verified STANDARD person passes everything and is compliant', () => {
    const evaluation = evaluateIndividual(individual());
    expect(evaluation.isCompliant).toBe(true);
    expect(evaluation.nextAction).toBeNull();
    expect(evaluation.summary).toEqual({ passed: 11, failed: 0, requiredFailed: [] });
    expect(evaluation.checks.every((check) => check.suggestedAction === null)).toBe(true);
  });

  // One row per check: the facts that make it fail, and the action it then suggests.
  const failing: Array<[string, Partial<IndividualFacts>, string]> = [
    ['KYC_DATA_PRESENT', { missingKycFields: ['kyc.birthDate'] }, 'UPDATE_PROFILE'],
    ['KYC_STARTED', { onboarding: null }, 'START_KYC'],
    ['SDK_VERIFICATION_COMPLETED', { onboarding: { status: 'PENDING', verificationStatus: 'PENDING' } }, 'COMPLETE_SDK_FLOW'],
    ['KYC_STATUS', { onboarding: { status: 'PROCESSING', verificationStatus: 'APPROVED' } }, 'WAIT'],
    ['REGISTRATION_ADDRESS', { hasRegistrationAddress: false }, 'UPDATE_PROFILE'],
    ['TAX_COUNTRY', { taxIdCountry: null, nationality: 'US' }, 'UPDATE_PROFILE'],
    ['OCCUPATION', { hasOccupation: false }, 'UPDATE_PROFILE'],
    ['DOC_SOURCE_OF_FUNDS', { documentTypes: new Set(['DOC_FATCA_W9']) }, 'UPLOAD_DOCUMENT'],
    ['DOC_FATCA', { documentTypes: new Set(['DOC_SOURCE_OF_FUNDS']) }, 'UPLOAD_DOCUMENT'],
    ['DOC_BIOMETRIC_REPORT', { documentTypes: new Set(['DOC_SOURCE_OF_FUNDS', 'DOC_FATCA_W9', 'DOC_PROOF_OF_ADDRESS']) }, 'UPLOAD_DOCUMENT'],
    ['DOC_PROOF_OF_ADDRESS', { documentTypes: new Set(['DOC_SOURCE_OF_FUNDS', 'DOC_FATCA_W9', 'DOC_BIOMETRIC_REPORT']) }, 'UPLOAD_DOCUMENT'],
  ];

  it.each(failing)('%s fails on its own facts and suggests %s', (name, facts, action) => {
    const evaluation = evaluateIndividual(individual(facts));
    const check = checkOf(evaluation, name);
    expect(check.passed).toBe(false);
    expect(check.suggestedAction).toBe(action);
  });

  // The strategy table: required under STANDARD / EXTERNAL.
  const requiredTable: Record<string, [boolean, boolean]> = {
    KYC_DATA_PRESENT: [true, true],
    KYC_STARTED: [true, true],
    SDK_VERIFICATION_COMPLETED: [true, false],
    KYC_STATUS: [true, true],
    REGISTRATION_ADDRESS: [true, true],
    TAX_COUNTRY: [true, true],
    OCCUPATION: [false, false],
    DOC_SOURCE_OF_FUNDS: [true, true],
    DOC_FATCA: [true, true],
    DOC_BIOMETRIC_REPORT: [false, true],
    DOC_PROOF_OF_ADDRESS: [false, true],
  };

  it.each(Object.entries(requiredTable))('%s is required under STANDARD/EXTERNAL as %j', (name, [standard, external]) => {
    expect(checkOf(evaluateIndividual(individual({ strategy: 'STANDARD' })), name).required).toBe(standard);
    expect(checkOf(evaluateIndividual(individual({ strategy: 'EXTERNAL' })), name).required).toBe(external);
  });

  it('EXTERNAL: SDK_VERIFICATION_COMPLETED is passed and not required, even with no onboarding', () => {
    const check = checkOf(evaluateIndividual(individual({ strategy: 'EXTERNAL', onboarding: null })), 'SDK_VERIFICATION_COMPLETED');
    expect(check).toEqual({ name: 'SDK_VERIFICATION_COMPLETED', passed: true, required: false, suggestedAction: null });
  });

  it('SDK_VERIFICATION_COMPLETED suggests the action that fits the verification', () => {
    const action = (status: IndividualFacts['onboarding']) => checkOf(evaluateIndividual(individual({ onboarding: status })), 'SDK_VERIFICATION_COMPLETED').suggestedAction;
    expect(action(null)).toBe('START_KYC');
    expect(action({ status: 'EXPIRED', verificationStatus: 'EXPIRED' })).toBe('START_KYC');
    expect(action({ status: 'PENDING', verificationStatus: 'PENDING' })).toBe('COMPLETE_SDK_FLOW');
    expect(action({ status: 'PROCESSING', verificationStatus: 'MANUAL_REVIEW' })).toBe('WAIT');
    expect(action({ status: 'PENDING', verificationStatus: 'ERROR' })).toBe('RERUN_KYC');
    expect(action({ status: 'DENIED_COMPLIANCE', verificationStatus: 'DENIED_COMPLIANCE' })).toBe('CONTACT_SUPPORT');
  });

  it('KYC_STATUS suggests START_KYC without an onboarding and CONTACT_SUPPORT after a denial', () => {
    expect(checkOf(evaluateIndividual(individual({ onboarding: null })), 'KYC_STATUS').suggestedAction).toBe('START_KYC');
    expect(
      checkOf(evaluateIndividual(individual({ onboarding: { status: 'DENIED_IDENTITY_THEFT', verificationStatus: 'DENIED_IDENTITY_THEFT' } })), 'KYC_STATUS').suggestedAction,
    ).toBe('CONTACT_SUPPORT');
  });

  it('DOC_FATCA wants a W-9 from US persons and a W-8BEN from everyone else', () => {
    expect(fatcaFormFor({ nationality: 'US', taxIdCountry: 'DE' })).toBe('DOC_FATCA_W9');
    expect(fatcaFormFor({ nationality: 'FR', taxIdCountry: 'US' })).toBe('DOC_FATCA_W9');
    expect(fatcaFormFor({ nationality: 'FR', taxIdCountry: 'FR' })).toBe('DOC_FATCA_W8BEN');
    const french = { nationality: 'FR', taxIdCountry: 'FR' };
    expect(checkOf(evaluateIndividual(individual({ ...french })), 'DOC_FATCA').passed).toBe(false);
    expect(checkOf(evaluateIndividual(individual({ ...french, documentTypes: new Set(['DOC_FATCA_W8BEN']) })), 'DOC_FATCA').passed).toBe(true);
  });

  it('a forced result replaces a forceable check and is ignored for the others', () => {
    const forced = evaluateIndividual(individual({ overrides: new Map([['REGISTRATION_ADDRESS', false], ['KYC_STATUS', false]]) }));
    expect(checkOf(forced, 'REGISTRATION_ADDRESS').passed).toBe(false);
    expect(checkOf(forced, 'KYC_STATUS').passed).toBe(true);
    expect(forceableCheckNames('KYC')).not.toContain('KYC_STATUS');
    expect(forceableCheckNames('KYC')).not.toContain('SDK_VERIFICATION_COMPLETED');
    expect(forceableCheckNames('KYC')).not.toContain('KYC_STARTED');
  });

  it('summary counts passes and failures and lists the failed required checks', () => {
    const evaluation = evaluateIndividual(individual({ onboarding: null, hasOccupation: false, documentTypes: new Set() }));
    expect(evaluation.summary.requiredFailed).toEqual(['KYC_STARTED', 'SDK_VERIFICATION_COMPLETED', 'KYC_STATUS', 'DOC_SOURCE_OF_FUNDS', 'DOC_FATCA']);
    expect(evaluation.summary.failed).toBe(8);
    expect(evaluation.summary.passed).toBe(3);
    expect(evaluation.isCompliant).toBe(false);
  });
});

describe('individual next action: each row is the first match for its facts', () => {
  const noDocuments = new Set<string>();
  const rows: Array<[string, Partial<IndividualFacts>, string | null]> = [
    ['the onboarding is denied', { onboarding: { status: 'DENIED_COMPLIANCE', verificationStatus: 'DENIED_COMPLIANCE' }, hasRegistrationAddress: false }, 'CONTACT_SUPPORT'],
    ['every required check passes', { hasOccupation: false }, null],
    ['a required profile check fails', { onboarding: { status: 'PENDING', verificationStatus: 'PENDING' }, taxIdCountry: null, nationality: 'US' }, 'UPDATE_PROFILE'],
    ['no onboarding yet', { onboarding: null }, 'START_KYC'],
    ['the last onboarding expired', { onboarding: { status: 'EXPIRED', verificationStatus: 'EXPIRED' } }, 'START_KYC'],
    ['the SDK verification ended in a system error', { onboarding: { status: 'PENDING', verificationStatus: 'ERROR' }, documentTypes: noDocuments }, 'RERUN_KYC'],
    ['the SDK flow is not finished', { onboarding: { status: 'PENDING', verificationStatus: 'PENDING' }, documentTypes: noDocuments }, 'COMPLETE_SDK_FLOW'],
    ['the verification is under manual review', { onboarding: { status: 'PROCESSING', verificationStatus: 'MANUAL_REVIEW' }, documentTypes: noDocuments }, 'WAIT'],
    ['a required document is missing', { onboarding: { status: 'PROCESSING', verificationStatus: 'APPROVED' }, documentTypes: new Set(['DOC_FATCA_W9']) }, 'UPLOAD_DOCUMENT'],
    ['otherwise', { onboarding: { status: 'PROCESSING', verificationStatus: 'APPROVED' } }, 'WAIT'],
  ];

  it('has one test row per rule (plus the expired case of START_KYC)', () => {
    expect(individualNextActionRules).toHaveLength(rows.length - 1);
  });

  it.each(rows)('%s → %s', (_name, facts, action) => {
    expect(evaluateIndividual(individual(facts)).nextAction).toBe(action);
  });

  it('COMPLETE_SDK_FLOW becomes WAIT when the SDK verification goes to manual review', () => {
    const base = { documentTypes: noDocuments };
    expect(evaluateIndividual(individual({ ...base, onboarding: { status: 'PENDING', verificationStatus: 'PENDING' } })).nextAction).toBe('COMPLETE_SDK_FLOW');
    expect(evaluateIndividual(individual({ ...base, onboarding: { status: 'PROCESSING', verificationStatus: 'MANUAL_REVIEW' } })).nextAction).toBe('WAIT');
  });

  it('EXTERNAL: after the start only documents are asked for', () => {
    const facts = individual({ strategy: 'EXTERNAL', onboarding: { status: 'PROCESSING', verificationStatus: 'NOT_REQUIRED' }, documentTypes: new Set(['DOC_SOURCE_OF_FUNDS', 'DOC_FATCA_W9']) });
    const evaluation = evaluateIndividual(facts);
    expect(evaluation.nextAction).toBe('UPLOAD_DOCUMENT');
    expect(evaluation.summary.requiredFailed).toEqual(['KYC_STATUS', 'DOC_BIOMETRIC_REPORT', 'DOC_PROOF_OF_ADDRESS']);
  });
});

describe('approval readiness', () => {
  it('is ready when only the status check fails', () => {
    expect(readyForApproval(evaluateIndividual(individual({ onboarding: { status: 'PROCESSING', verificationStatus: 'APPROVED' } })), 'KYC_STATUS')).toBe(true);
    expect(
      readyForApproval(evaluateIndividual(individual({ onboarding: { status: 'PROCESSING', verificationStatus: 'APPROVED' }, documentTypes: new Set() })), 'KYC_STATUS'),
    ).toBe(false);
    expect(readyForApproval(evaluateIndividual(individual({ onboarding: { status: 'PENDING', verificationStatus: 'PENDING' } })), 'KYC_STATUS')).toBe(false);
  });
});

describe('business checks', () => {
  it('lists every business check in order', () => {
    expect(businessCheckRules.map((rule) => rule.name)).toEqual([...businessCheckNames]);
  });

  it('a fully verified business is compliant', () => {
    const evaluation = evaluateBusiness(business());
    expect(evaluation.isCompliant).toBe(true);
    expect(evaluation.nextAction).toBeNull();
  });

  const failing: Array<[string, Partial<BusinessFacts>, string]> = [
    ['KYB_DATA_PRESENT', { missingKybFields: ['kyb.naicsCode'] }, 'UPDATE_BUSINESS_DATA'],
    ['BUSINESS_ADDRESS', { hasBusinessAddress: false }, 'UPDATE_BUSINESS_DATA'],
    ['RELATED_PERSONS', { representativeCount: 0 }, 'ADD_PERSON_RELATIONS'],
    ['UBO_KYC_APPROVED', { relatedPersonStatuses: ['APPROVED', 'PENDING'] }, 'COMPLETE_UBO_KYC'],
    ['KYB_STARTED', { onboarding: null }, 'START_KYB'],
    ['KYB_REVIEW_COMPLETED', { onboarding: { status: 'PROCESSING', verificationStatus: 'MANUAL_REVIEW' } }, 'WAIT'],
    ['KYB_STATUS', { onboarding: { status: 'PROCESSING', verificationStatus: 'APPROVED' } }, 'WAIT'],
    ['DOC_BUSINESS_REGISTRATION', { documentTypes: new Set(['DOC_SOURCE_OF_FUNDS']) }, 'UPLOAD_BUSINESS_DOCUMENT'],
    ['DOC_SOURCE_OF_FUNDS', { documentTypes: new Set(['DOC_BUSINESS_REGISTRATION']) }, 'UPLOAD_BUSINESS_DOCUMENT'],
    ['DOC_OWNERSHIP_STRUCTURE', { documentTypes: new Set(['DOC_BUSINESS_REGISTRATION']) }, 'UPLOAD_BUSINESS_DOCUMENT'],
    ['DOC_PROOF_OF_ADDRESS', { documentTypes: new Set(['DOC_BUSINESS_REGISTRATION']) }, 'UPLOAD_BUSINESS_DOCUMENT'],
  ];

  it.each(failing)('%s fails on its own facts and suggests %s', (name, facts, action) => {
    const check = checkOf(evaluateBusiness(business(facts)), name);
    expect(check.passed).toBe(false);
    expect(check.suggestedAction).toBe(action);
  });

  it('UBO_KYC_APPROVED needs at least one person, and suggests CONTACT_SUPPORT after a person was denied', () => {
    expect(checkOf(evaluateBusiness(business({ relatedPersonStatuses: [] })), 'UBO_KYC_APPROVED').passed).toBe(false);
    expect(checkOf(evaluateBusiness(business({ relatedPersonStatuses: ['DENIED_COMPLIANCE'] })), 'UBO_KYC_APPROVED').suggestedAction).toBe('CONTACT_SUPPORT');
  });

  it('KYB_STATUS suggests START_KYB without an onboarding and CONTACT_SUPPORT after a denial', () => {
    expect(checkOf(evaluateBusiness(business({ onboarding: null })), 'KYB_STATUS').suggestedAction).toBe('START_KYB');
    expect(checkOf(evaluateBusiness(business({ onboarding: { status: 'DENIED_COMPLIANCE', verificationStatus: 'DENIED_COMPLIANCE' } })), 'KYB_STATUS').suggestedAction).toBe('CONTACT_SUPPORT');
  });

  const requiredTable: Record<string, [boolean, boolean]> = {
    KYB_DATA_PRESENT: [true, true],
    BUSINESS_ADDRESS: [true, true],
    RELATED_PERSONS: [true, true],
    UBO_KYC_APPROVED: [true, false],
    KYB_STARTED: [true, true],
    KYB_REVIEW_COMPLETED: [true, false],
    KYB_STATUS: [true, true],
    DOC_BUSINESS_REGISTRATION: [true, true],
    DOC_SOURCE_OF_FUNDS: [true, true],
    DOC_OWNERSHIP_STRUCTURE: [false, true],
    DOC_PROOF_OF_ADDRESS: [false, false],
  };

  it.each(Object.entries(requiredTable))('%s is required under STANDARD/EXTERNAL as %j', (name, [standard, external]) => {
    expect(checkOf(evaluateBusiness(business({ strategy: 'STANDARD' })), name).required).toBe(standard);
    expect(checkOf(evaluateBusiness(business({ strategy: 'EXTERNAL' })), name).required).toBe(external);
  });
});

describe('business next action: each row is the first match for its facts', () => {
  const noDocuments = new Set<string>();
  const processing = { status: 'PROCESSING', verificationStatus: 'PENDING' } as const;
  const rows: Array<[string, Partial<BusinessFacts>, string | null]> = [
    ['the KYB onboarding is denied', { onboarding: { status: 'DENIED_COMPLIANCE', verificationStatus: 'DENIED_COMPLIANCE' }, hasBusinessAddress: false }, 'CONTACT_SUPPORT'],
    ['every required check passes', { documentTypes: new Set(['DOC_BUSINESS_REGISTRATION', 'DOC_SOURCE_OF_FUNDS']) }, null],
    ['business data missing', { onboarding: null, missingKybFields: ['kyb.legalName'], shareholderCount: 0 }, 'UPDATE_BUSINESS_DATA'],
    ['relations missing', { onboarding: null, shareholderCount: 0 }, 'ADD_PERSON_RELATIONS'],
    ['no KYB yet', { onboarding: null, relatedPersonStatuses: [null, null] }, 'START_KYB'],
    ['a related person was denied', { onboarding: processing, relatedPersonStatuses: ['APPROVED', 'DENIED_IDENTITY_THEFT'] }, 'CONTACT_SUPPORT'],
    ['related persons not approved', { onboarding: processing, relatedPersonStatuses: ['APPROVED', 'PROCESSING'] }, 'COMPLETE_UBO_KYC'],
    ['manual review', { onboarding: { status: 'PROCESSING', verificationStatus: 'MANUAL_REVIEW' }, documentTypes: noDocuments }, 'WAIT'],
    ['documents missing', { onboarding: { status: 'PROCESSING', verificationStatus: 'APPROVED' }, documentTypes: noDocuments }, 'UPLOAD_BUSINESS_DOCUMENT'],
    ['otherwise', { onboarding: { status: 'PROCESSING', verificationStatus: 'APPROVED' } }, 'WAIT'],
  ];

  it('has one test row per rule', () => {
    expect(businessNextActionRules).toHaveLength(rows.length);
  });

  it.each(rows)('%s → %s', (_name, facts, action) => {
    expect(evaluateBusiness(business(facts)).nextAction).toBe(action);
  });
});

describe('docs/compliance.md', () => {
  it('holds the rules tables exactly as the code renders them', () => {
    const document = fs.readFileSync(new URL('../../../docs/compliance.md', import.meta.url), 'utf8');
    expect(document).toContain(renderRulesTables());
  });
});

import type { Db } from '../../platform/db/database.js';
import type { Tx } from '../../platform/db/transaction.js';
import type { RequestContext } from '../../platform/http/context.js';
import { AppError, notFound, validationError, type ErrorDetail } from '../../platform/http/errors.js';
import { idAt, isUuid } from '../../platform/ids.js';
import { findCustomer, primaryWalletOf, type CustomerRow } from '../customers/index.js';
import { assignVirtualAccount } from '../virtual-accounts/index.js';
import { cancelTimer, runDueTimers, type TimerKind } from '../timers/index.js';
import { recordEvent } from '../webhooks/index.js';
import {
  evaluateBusiness,
  evaluateIndividual,
  fatcaFormFor,
  forceableCheckNames,
  readyForApproval,
  type BusinessEvaluation,
  type BusinessFacts,
  type IndividualEvaluation,
  type IndividualFacts,
} from './compliance-rules.js';
import * as store from './compliance.store.js';
import type { complianceEventPayloads, KybEventPayload, KycErrorPayload, KycEventPayload, KycRestartedPayload } from './compliance.events.js';
import { sha256, type AcceptedContentType, type DocumentType } from './documents.js';
import { qrCodeDataUrl, type IdentityVerificationProvider } from './identity-provider.js';
import {
  assertOutcomeAllowed,
  assertTransition,
  defaultOnboardingStrategy,
  isDenial,
  isLive,
  type OnboardingKind,
  type OnboardingStatus,
  type OnboardingStrategy,
  type VerificationOutcome,
  type VerificationStatus,
} from './onboarding.js';
import { renderDeclarationPdf, renderSandboxFormPdf, type DeclaredSource } from './source-of-funds.js';

/**
 * Compliance use cases. Every write runs in the caller's transaction and starts by locking the
 * customer row (then the onboarding), so concurrent writes on one customer run one after the
 * other; events are recorded in the same transaction as the change they report.
 */

type Queryable = Db | Tx;
type OnboardingRow = store.OnboardingRow;

/** What the compliance services need besides the database: the identity vendor (absent in production). */
export interface ComplianceRuntime {
  provider: IdentityVerificationProvider | undefined;
  /** The key of the permutation of virtual account serials, for the number an approval gives (virtual-account-number.ts). */
  virtualAccountSerialKey: Buffer;
}

export interface SdkView {
  link: string;
  qrCode: string;
}

export interface StartedOnboarding {
  onboardingId: string;
  status: OnboardingStatus;
  sdk: SdkView | null;
}

export const errorMessageLengthMax = 1000;

// ---------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------

export async function strategyOf(db: Queryable, clientId: string): Promise<OnboardingStrategy> {
  return (await store.findStrategy(db, clientId)) ?? defaultOnboardingStrategy;
}

export async function setStrategy(tx: Tx, context: RequestContext, strategy: OnboardingStrategy): Promise<{ onboardingStrategy: OnboardingStrategy }> {
  await store.saveStrategy(tx, context.clientId, strategy, context.now);
  return { onboardingStrategy: strategy };
}

// ---------------------------------------------------------------------------------------------
// Facts and status views
// ---------------------------------------------------------------------------------------------

/** The KYC fields an individual needs before KYC can start (paths as in the customer body). */
export function missingKycFields(customer: CustomerRow): string[] {
  const missing: string[] = [];
  if (!customer.first_name) missing.push('kyc.firstName');
  if (!customer.last_name) missing.push('kyc.lastName');
  if (!customer.birth_date) missing.push('kyc.birthDate');
  if (!customer.nationality) missing.push('kyc.nationality');
  const hasDocument =
    customer.ssn_last4 !== null ||
    customer.document_id_card_ciphertext !== null ||
    customer.document_passport_ciphertext !== null ||
    customer.document_license_ciphertext !== null;
  if (!hasDocument) missing.push('kyc.documentSsn');
  return missing;
}

/** The KYB fields a business needs before KYB can start. */
export function missingKybFields(customer: CustomerRow): string[] {
  const kyb = customer.kyb;
  const missing: string[] = [];
  if (!kyb?.legalName) missing.push('kyb.legalName');
  if (!kyb?.structureType) missing.push('kyb.structureType');
  if (!kyb?.naicsCode) missing.push('kyb.naicsCode');
  if (!kyb?.taxInformation) missing.push('kyb.taxInformation');
  if (!kyb?.identification) missing.push('kyb.identification');
  return missing;
}

async function currentOnboarding(db: Queryable, customer: CustomerRow, kind: OnboardingKind): Promise<OnboardingRow | undefined> {
  if (customer.onboarding_id) {
    const row = await store.findOnboarding(db, customer.client_id, customer.onboarding_id);
    if (row && row.kind === kind) return row;
  }
  return store.latestOnboarding(db, customer.client_id, customer.id, kind);
}

async function individualFacts(db: Queryable, customer: CustomerRow, onboarding: OnboardingRow | undefined): Promise<IndividualFacts> {
  return {
    strategy: onboarding?.strategy ?? (await strategyOf(db, customer.client_id)),
    onboarding: onboarding ? { status: onboarding.status, verificationStatus: onboarding.verification_status } : null,
    overrides: await store.overridesOf(db, customer.client_id, customer.id),
    missingKycFields: missingKycFields(customer),
    hasRegistrationAddress: customer.main_address !== null,
    taxIdCountry: customer.tax_id_country,
    nationality: customer.nationality,
    hasOccupation: customer.occupation !== null,
    documentTypes: await store.documentTypesOf(db, customer.client_id, customer.id),
  };
}

/**
 * Whether a relation represents the business on `day` (`YYYY-MM-DD`): no representingRange, or one
 * that has begun and not ended by then (its end day included). Until 2026-12-06 the range was
 * never read, so a business whose only representative's range ended in 2011 was approved (found by
 * an audit).
 */
function representsOn(relation: store.RelatedPerson, day: string): boolean {
  if (relation.representingStart === null) return true;
  return relation.representingStart <= day && (relation.representingEnd === null || relation.representingEnd >= day);
}

async function businessFacts(db: Queryable, customer: CustomerRow, onboarding: OnboardingRow | undefined, now: Date): Promise<BusinessFacts> {
  const relations = await store.relatedPersonsOf(db, customer.client_id, customer.id);
  const statusByPerson = new Map(relations.map((relation) => [relation.personId, relation.onboardingStatus]));
  const day = now.toISOString().slice(0, 10);
  const representatives = relations.filter((relation) => relation.role === 'REPRESENTATIVE');
  return {
    strategy: onboarding?.strategy ?? (await strategyOf(db, customer.client_id)),
    onboarding: onboarding ? { status: onboarding.status, verificationStatus: onboarding.verification_status } : null,
    overrides: await store.overridesOf(db, customer.client_id, customer.id),
    missingKybFields: missingKybFields(customer),
    hasBusinessAddress: customer.main_address !== null,
    shareholderCount: relations.filter((relation) => relation.role === 'SHAREHOLDER').length,
    representativeCount: representatives.filter((relation) => representsOn(relation, day)).length,
    outOfRangeRepresentativeCount: representatives.filter((relation) => !representsOn(relation, day)).length,
    relatedPersonStatuses: [...statusByPerson.values()],
    documentTypes: await store.documentTypesOf(db, customer.client_id, customer.id),
  };
}

export interface IndividualStatusView extends IndividualEvaluation {
  customerId: string;
  onboardingId: string | null;
  onboardingStatus: OnboardingStatus | null;
  verificationStatus: VerificationStatus | null;
  onboardingStrategy: OnboardingStrategy;
}

export interface BusinessStatusView extends BusinessEvaluation {
  customerId: string;
  businessOnboardingId: string | null;
  onboardingStatus: OnboardingStatus | null;
  verificationStatus: VerificationStatus | null;
  onboardingStrategy: OnboardingStrategy;
}

/**
 * 400 WRONG_CUSTOMER_TYPE on `customerId`, the name every route of the module gives the customer
 * (a path parameter of the status routes, a body field of KYC and KYB, a multipart part of the
 * uploads). Until 2026-12-06 the answer had no details (found by an audit).
 */
function wrongType(expected: 'PRIVATE' | 'LEGAL', route: string): AppError {
  const actual = expected === 'PRIVATE' ? 'a business (LEGAL)' : 'an individual (PRIVATE)';
  return new AppError('WRONG_CUSTOMER_TYPE', `This customer is ${actual}; use ${route} instead.`, {
    details: [{ field: 'customerId', message: `is ${actual} customer; use ${route}` }],
  });
}

async function requireCustomer(db: Queryable, clientId: string, customerId: string, field?: string): Promise<CustomerRow> {
  const customer = await findCustomer(db, clientId, customerId);
  if (!customer) {
    throw new AppError('NOT_FOUND', 'Customer not found', field ? { details: [{ field, message: 'no such customer' }] } : {});
  }
  return customer;
}

/** Locks the customer row, then reads it: the start of every compliance write on a customer. */
async function lockCustomer(tx: Tx, clientId: string, customerId: string, field?: string): Promise<CustomerRow> {
  if (!isUuid(customerId) || !(await store.lockCustomer(tx, clientId, customerId))) {
    throw new AppError('NOT_FOUND', 'Customer not found', field ? { details: [{ field, message: 'no such customer' }] } : {});
  }
  return requireCustomer(tx, clientId, customerId, field);
}

export async function individualStatus(db: Queryable, clientId: string, customerId: string): Promise<IndividualStatusView> {
  const customer = await requireCustomer(db, clientId, customerId);
  if (customer.type !== 'PRIVATE') throw wrongType('PRIVATE', 'GET /v1/compliance/business/status/:customerId');
  const onboarding = await currentOnboarding(db, customer, 'KYC');
  const facts = await individualFacts(db, customer, onboarding);
  return {
    customerId: customer.id,
    onboardingId: onboarding?.id ?? null,
    onboardingStatus: onboarding?.status ?? null,
    verificationStatus: onboarding?.verification_status ?? null,
    onboardingStrategy: facts.strategy,
    ...evaluateIndividual(facts),
  };
}

export async function businessStatus(db: Queryable, clientId: string, customerId: string, now: Date): Promise<BusinessStatusView> {
  const customer = await requireCustomer(db, clientId, customerId);
  if (customer.type !== 'LEGAL') throw wrongType('LEGAL', 'GET /v1/compliance/status/:customerId');
  const onboarding = await currentOnboarding(db, customer, 'KYB');
  const facts = await businessFacts(db, customer, onboarding, now);
  return {
    customerId: customer.id,
    businessOnboardingId: onboarding?.id ?? null,
    onboardingStatus: onboarding?.status ?? null,
    verificationStatus: onboarding?.verification_status ?? null,
    onboardingStrategy: facts.strategy,
    ...evaluateBusiness(facts),
  };
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

type OnboardingEventType = Exclude<keyof typeof complianceEventPayloads, 'VIRTUAL_ACCOUNT_CREATED'>;

/** Records an onboarding event with the payload of the specification (compliance.events.ts). */
async function onboardingEvent(
  tx: Tx,
  context: RequestContext,
  type: OnboardingEventType,
  onboarding: OnboardingRow,
  extra: Pick<KycRestartedPayload, 'previousOnboardingId'> | Pick<KycErrorPayload, 'errorType' | 'errorMessage'> = {},
): Promise<void> {
  const payload: KycEventPayload | KybEventPayload =
    onboarding.kind === 'KYB'
      ? { customerId: onboarding.customer_id, status: onboarding.status, businessOnboardingId: onboarding.id }
      : { customerId: onboarding.customer_id, status: onboarding.status, onboardingId: onboarding.id };
  await recordEvent(tx, context, type, { ...payload, ...extra });
}

// ---------------------------------------------------------------------------------------------
// Starting KYC and KYB
// ---------------------------------------------------------------------------------------------

function requireProvider(runtime: ComplianceRuntime): IdentityVerificationProvider {
  if (!runtime.provider) {
    throw new AppError(
      'IDENTITY_PROVIDER_UNAVAILABLE',
      'No identity verification provider is configured in this mode; only the EXTERNAL onboarding strategy can be used.',
    );
  }
  return runtime.provider;
}

/** Refuses a new onboarding while one is running or after a decision (first matching rule wins). */
function assertCanStart(latest: OnboardingRow | undefined, kind: OnboardingKind): void {
  if (!latest) return;
  const word = kind === 'KYC' ? 'KYC' : 'KYB';
  if (isLive(latest.status)) {
    throw new AppError(
      'INVALID_STATE',
      kind === 'KYC'
        ? `A KYC onboarding (${latest.id}) is already ${latest.status}; re-run it with POST /v1/compliance/kyc/${latest.id}/rerun.`
        : `A KYB onboarding (${latest.id}) is already ${latest.status}.`,
    );
  }
  if (latest.status === 'APPROVED') throw new AppError('INVALID_STATE', `The customer's ${word} is already APPROVED.`);
  if (isDenial(latest.status)) throw new AppError('INVALID_STATE', `The customer's ${word} was ${latest.status}; contact support.`);
}

/** How a detail says that a sandbox override forces a check to fail (not that data is missing). */
const overrideMessagePrefix = 'was marked failing by a sandbox check override';

function profileIncomplete(details: ErrorDetail[], kind: OnboardingKind): AppError {
  const what = kind === 'KYC' ? 'KYC' : 'KYB';
  const fields = [...new Set(details.map((detail) => detail.field))].join(', ');
  const forced = details.some((detail) => detail.message.startsWith(overrideMessagePrefix)) ? '; a sandbox check override forces some of these to fail (see details)' : '';
  return new AppError('COMPLIANCE_PROFILE_INCOMPLETE', `${what} cannot start until the customer's data is complete: ${fields}${forced}.`, { details });
}

/** A required profile check a start reads, the field it stands for and the details of what is really missing. */
interface ProfileCheck {
  name: string;
  field: string;
  missing: () => ErrorDetail[];
}

/**
 * Why a KYC or KYB cannot start: for each required profile check that fails, the fields really
 * missing and, when a sandbox override forces the check to fail, a detail on the field the check
 * stands for saying so. A field on file is never said to be required (until 2026-12-06 a forced
 * REGISTRATION_ADDRESS said an address on file "is required", and a forced KYC_DATA_PRESENT went
 * unsaid beside a missing field; found by an audit).
 */
function startRefusalDetails(
  checks: readonly ProfileCheck[],
  withOverrides: { checks: ReadonlyArray<{ name: string; passed: boolean; required: boolean }> },
  withoutOverrides: { checks: ReadonlyArray<{ name: string; passed: boolean; required: boolean }> },
  overrides: ReadonlyMap<string, boolean>,
): ErrorDetail[] {
  const failing = (evaluation: typeof withOverrides, name: string) => evaluation.checks.some((check) => check.name === name && check.required && !check.passed);
  const details: ErrorDetail[] = [];
  for (const check of checks) {
    if (!failing(withOverrides, check.name)) continue;
    if (failing(withoutOverrides, check.name)) details.push(...check.missing());
    if (overrides.get(check.name) === false) {
      details.push({ field: check.field, message: `${overrideMessagePrefix} (${check.name}); force that check to pass to lift it` });
    }
  }
  return details;
}

async function newOnboardingRow(
  runtime: ComplianceRuntime,
  context: RequestContext,
  customer: CustomerRow,
  kind: OnboardingKind,
  strategy: OnboardingStrategy,
  previousOnboardingId: string | null,
): Promise<{ row: OnboardingRow; sdk: SdkView | null }> {
  const id = idAt(context.now);
  const base = {
    client_id: context.clientId,
    id,
    customer_id: customer.id,
    kind,
    strategy,
    previous_onboarding_id: previousOnboardingId,
    sdk_completed_at: null,
    error_type: null,
    error_message: null,
    decided_at: null,
    archived_at: null,
    created_at: context.now,
    updated_at: context.now,
  };
  if (strategy === 'EXTERNAL') {
    return { row: { ...base, status: 'PROCESSING', verification_status: 'NOT_REQUIRED', sdk_token_sha256: null, sdk_expires_at: null }, sdk: null };
  }
  const provider = requireProvider(runtime);
  if (kind === 'KYB') {
    return { row: { ...base, status: 'PROCESSING', verification_status: 'PENDING', sdk_token_sha256: null, sdk_expires_at: null }, sdk: null };
  }
  const session = await provider.startSession({
    onboardingId: id,
    person: { firstName: customer.first_name ?? '', lastName: customer.last_name ?? '' },
    now: context.now,
  });
  return {
    row: { ...base, status: 'PENDING', verification_status: 'PENDING', sdk_token_sha256: session.tokenSha256, sdk_expires_at: session.expiresAt },
    sdk: { link: session.link, qrCode: await qrCodeDataUrl(session.link) },
  };
}

/**
 * What a KYC needs on file before it starts, as a new onboarding or a re-run (both open a
 * verification session, and identity vendors need these): the KYC data, the registration address
 * and the tax country (422 COMPLIANCE_PROFILE_INCOMPLETE naming each one missing); the occupation
 * only if its check is required (it never is: the specification makes it optional).
 */
async function assertKycProfileComplete(tx: Tx, customer: CustomerRow): Promise<void> {
  const facts = await individualFacts(tx, customer, undefined);
  // Any one identity document will do: the detail names the SSN field and says so (a passport alone is enough).
  const requiredMessage = (field: string) =>
    field === 'kyc.documentSsn' ? 'an identity document is required before KYC: documentSsn, documentPassport, documentIdCard or documentLicense' : 'is required before KYC';
  const required = (field: string) => [{ field, message: requiredMessage(field) }];
  const checks: ProfileCheck[] = [
    { name: 'KYC_DATA_PRESENT', field: 'kyc', missing: () => missingKycFields(customer).flatMap(required) },
    { name: 'REGISTRATION_ADDRESS', field: 'kyc.mainAddress', missing: () => required('kyc.mainAddress') },
    { name: 'TAX_COUNTRY', field: 'kyc.taxIdCountry', missing: () => required('kyc.taxIdCountry') },
    { name: 'OCCUPATION', field: 'kyc.occupation', missing: () => required('kyc.occupation') },
  ];
  const details = startRefusalDetails(checks, evaluateIndividual(facts), evaluateIndividual({ ...facts, overrides: new Map() }), facts.overrides);
  if (details.length > 0) throw profileIncomplete(details, 'KYC');
}

/**
 * POST /v1/compliance/kyc. Rules, first failing wins: the customer exists (404) and is an
 * individual (400 WRONG_CUSTOMER_TYPE); no KYC is running or decided (409 INVALID_STATE); the
 * KYC data, registration address and tax country are present (422 COMPLIANCE_PROFILE_INCOMPLETE);
 * STANDARD needs an identity provider (503). STANDARD starts PENDING with an SDK link; EXTERNAL
 * starts PROCESSING without one and may be approved at once when its documents are on file.
 */
export async function startKyc(tx: Tx, context: RequestContext, runtime: ComplianceRuntime, customerId: string): Promise<StartedOnboarding> {
  const customer = await lockCustomer(tx, context.clientId, customerId, 'customerId');
  if (customer.type !== 'PRIVATE') throw wrongType('PRIVATE', 'POST /v1/compliance/kyb');
  assertCanStart(await store.latestOnboarding(tx, context.clientId, customer.id, 'KYC'), 'KYC');
  const strategy = await strategyOf(tx, context.clientId);
  await assertKycProfileComplete(tx, customer);

  const { row, sdk } = await newOnboardingRow(runtime, context, customer, 'KYC', strategy, null);
  await store.insertOnboarding(tx, row);
  await store.setCustomerOnboarding(tx, context.clientId, customer.id, row.id, row.status, context.now);
  await onboardingEvent(tx, context, 'CUSTOMER_KYC_STARTED', row);
  if (sdk) await onboardingEvent(tx, context, 'CUSTOMER_KYC_SDK_FLOW_REQUIRED', row);
  if (sdk && runtime.provider?.completesAtOnce?.({ firstName: customer.first_name ?? '', lastName: customer.last_name ?? '' })) {
    const completed = await completeKycInSandbox(tx, context, runtime, row.id);
    return { onboardingId: row.id, status: completed.status, sdk };
  }
  const final = await reevaluate(tx, context, runtime, customer.id);
  return { onboardingId: row.id, status: final?.status ?? row.status, sdk };
}

/**
 * POST /v1/compliance/kyc/:onboardingId/rerun: only while PENDING or PROCESSING (409
 * INVALID_STATE otherwise, including an onboarding already archived by an earlier re-run), and
 * with the profile a start needs (422 COMPLIANCE_PROFILE_INCOMPLETE). The
 * old onboarding is ARCHIVED and a new one takes its place with a new link.
 */
export async function rerunKyc(tx: Tx, context: RequestContext, runtime: ComplianceRuntime, onboardingId: string): Promise<StartedOnboarding & { previousOnboardingId: string }> {
  const found = isUuid(onboardingId) ? await store.findOnboarding(tx, context.clientId, onboardingId) : undefined;
  if (!found || found.kind !== 'KYC') throw notFound('Onboarding');
  const customer = await lockCustomer(tx, context.clientId, found.customer_id);
  const previous = await store.lockOnboarding(tx, context.clientId, found.id);
  if (!previous) throw notFound('Onboarding');
  assertTransition(previous.status, 'ARCHIVED', 're-run KYC');
  // A re-run opens a new verification session: it needs what a start needs (until 2026-12-02 a
  // profile emptied while PENDING was re-run all the same; found by an audit).
  await assertKycProfileComplete(tx, customer);
  const strategy = await strategyOf(tx, context.clientId);
  // The new session is created before the old one is archived, so a missing provider changes nothing.
  const { row, sdk } = await newOnboardingRow(runtime, context, customer, 'KYC', strategy, previous.id);
  await store.updateOnboarding(tx, previous, { status: 'ARCHIVED', archived_at: context.now, updated_at: context.now });
  // Its link dies with it: the expiry timer has nothing left to do (until 2026-12-05 it stayed, and the
  // sandbox clock counted and ran it; found by an audit).
  if (previous.status === 'PENDING') await cancelTimer(tx, context.clientId, store.linkExpiryTimerKind, previous.id);
  await store.insertOnboarding(tx, row);
  await store.setCustomerOnboarding(tx, context.clientId, customer.id, row.id, row.status, context.now);
  await onboardingEvent(tx, context, 'CUSTOMER_KYC_RESTARTED', row, { previousOnboardingId: previous.id });
  await onboardingEvent(tx, context, 'CUSTOMER_KYC_STARTED', row);
  if (sdk) await onboardingEvent(tx, context, 'CUSTOMER_KYC_SDK_FLOW_REQUIRED', row);
  const final = await reevaluate(tx, context, runtime, customer.id);
  return { onboardingId: row.id, status: final?.status ?? row.status, sdk, previousOnboardingId: previous.id };
}

/**
 * POST /v1/compliance/kyb. Rules, first failing wins: the customer exists (404) and is a
 * business (400 WRONG_CUSTOMER_TYPE); no KYB is running or decided (409 INVALID_STATE); the
 * business data, address and related persons (at least one SHAREHOLDER and one REPRESENTATIVE)
 * are present (422 COMPLIANCE_PROFILE_INCOMPLETE); STANDARD needs an identity provider (503).
 * The review then runs at once and again whenever a related person's KYC ends.
 */
export async function startKyb(tx: Tx, context: RequestContext, runtime: ComplianceRuntime, customerId: string): Promise<{ businessOnboardingId: string; status: OnboardingStatus; verificationStatus: VerificationStatus }> {
  const customer = await lockCustomer(tx, context.clientId, customerId, 'customerId');
  if (customer.type !== 'LEGAL') throw wrongType('LEGAL', 'POST /v1/compliance/kyc');
  assertCanStart(await store.latestOnboarding(tx, context.clientId, customer.id, 'KYB'), 'KYB');
  const strategy = await strategyOf(tx, context.clientId);
  const facts = await businessFacts(tx, customer, undefined, context.now);
  const required = (field: string) => ({ field, message: 'is required before KYB' });
  const notRepresenting =
    facts.representativeCount === 0 && facts.outOfRangeRepresentativeCount > 0
      ? `; the representatives related to it do not represent it on ${context.now.toISOString().slice(0, 10)} (their representingRange does not cover the day)`
      : '';
  const checks: ProfileCheck[] = [
    { name: 'KYB_DATA_PRESENT', field: 'kyb', missing: () => missingKybFields(customer).map(required) },
    { name: 'BUSINESS_ADDRESS', field: 'kyb.mainAddress', missing: () => [required('kyb.mainAddress')] },
    {
      name: 'RELATED_PERSONS',
      field: 'relatedPersons',
      missing: () => [{ field: 'relatedPersons', message: `at least one SHAREHOLDER and one REPRESENTATIVE must be related to the business${notRepresenting}` }],
    },
  ];
  const details = startRefusalDetails(checks, evaluateBusiness(facts), evaluateBusiness({ ...facts, overrides: new Map() }), facts.overrides);
  if (details.length > 0) throw profileIncomplete(details, 'KYB');

  const { row } = await newOnboardingRow(runtime, context, customer, 'KYB', strategy, null);
  await store.insertOnboarding(tx, row);
  await store.setCustomerOnboarding(tx, context.clientId, customer.id, row.id, row.status, context.now);
  await onboardingEvent(tx, context, 'CUSTOMER_KYB_STARTED', row);
  const final = (await reevaluate(tx, context, runtime, customer.id)) ?? row;
  return { businessOnboardingId: row.id, status: final.status, verificationStatus: final.verification_status };
}

// ---------------------------------------------------------------------------------------------
// Decisions
// ---------------------------------------------------------------------------------------------

async function setStatus(tx: Tx, context: RequestContext, onboarding: OnboardingRow, status: OnboardingStatus, verification: VerificationStatus, action: string): Promise<OnboardingRow> {
  assertTransition(onboarding.status, status, action);
  const decided = status === 'APPROVED' || isDenial(status) || status === 'EXPIRED';
  if (onboarding.status === 'PENDING' && status !== 'PENDING') await cancelTimer(tx, context.clientId, store.linkExpiryTimerKind, onboarding.id);
  const updated = await store.updateOnboarding(tx, onboarding, {
    status,
    verification_status: verification,
    updated_at: context.now,
    ...(decided ? { decided_at: context.now } : {}),
    // An expired onboarding no longer shows an earlier provider error, as a later verdict does not
    // (until the thirty-fourth session it kept it; found by an audit).
    ...(status === 'EXPIRED' ? { error_type: null, error_message: null } : {}),
  });
  await store.setCustomerOnboarding(tx, context.clientId, onboarding.customer_id, onboarding.id, status, context.now);
  return updated;
}

async function finish(tx: Tx, context: RequestContext, runtime: ComplianceRuntime, onboarding: OnboardingRow, status: OnboardingStatus, verification: VerificationStatus): Promise<OnboardingRow> {
  const updated = await setStatus(tx, context, onboarding, status, verification, `set the onboarding to ${status}`);
  await onboardingEvent(tx, context, onboarding.kind === 'KYB' ? 'CUSTOMER_KYB_FINISHED' : 'CUSTOMER_KYC_FINISHED', updated);
  if (status === 'APPROVED') {
    const wallet = await primaryWalletOf(tx, context.clientId, onboarding.customer_id);
    if (wallet) await assignVirtualAccount(tx, context, wallet, runtime.virtualAccountSerialKey);
  }
  if (onboarding.kind === 'KYC') {
    // The person's businesses whose KYB waits on their KYC are reviewed again.
    for (const businessId of await store.businessesWithLiveKybFor(tx, context.clientId, onboarding.customer_id)) {
      await reevaluate(tx, context, runtime, businessId);
    }
  }
  return updated;
}

/**
 * Looks at the customer's running onboarding again after anything changed: for a KYB, asks the
 * provider's business review while it is not decided; then approves a PROCESSING onboarding
 * whose required checks all pass. Returns the onboarding as it now is (undefined: none running).
 */
export async function reevaluate(tx: Tx, context: RequestContext, runtime: ComplianceRuntime, customerId: string): Promise<OnboardingRow | undefined> {
  const customer = await lockCustomer(tx, context.clientId, customerId);
  const kind: OnboardingKind = customer.type === 'LEGAL' ? 'KYB' : 'KYC';
  let onboarding = await currentOnboarding(tx, customer, kind);
  if (!onboarding || !isLive(onboarding.status)) return onboarding;
  onboarding = (await store.lockOnboarding(tx, context.clientId, onboarding.id)) ?? onboarding;

  if (kind === 'KYB') {
    let facts = await businessFacts(tx, customer, onboarding, context.now);
    if (onboarding.strategy === 'STANDARD' && runtime.provider) {
      const decision = runtime.provider.reviewBusiness({ legalName: customer.kyb?.legalName ?? null, relatedPersonStatuses: facts.relatedPersonStatuses });
      if (decision === 'DENIED_COMPLIANCE') return finish(tx, context, runtime, onboarding, 'DENIED_COMPLIANCE', 'DENIED_COMPLIANCE');
      if (onboarding.verification_status === 'PENDING' && decision !== 'PENDING') {
        onboarding = await store.updateOnboarding(tx, onboarding, { verification_status: decision, updated_at: context.now });
        facts = await businessFacts(tx, customer, onboarding, context.now);
      }
    }
    if (onboarding.status === 'PROCESSING' && readyForApproval(evaluateBusiness(facts), 'KYB_STATUS')) {
      return finish(tx, context, runtime, onboarding, 'APPROVED', onboarding.verification_status);
    }
    return onboarding;
  }

  const facts = await individualFacts(tx, customer, onboarding);
  if (onboarding.status === 'PROCESSING' && readyForApproval(evaluateIndividual(facts), 'KYC_STATUS')) {
    return finish(tx, context, runtime, onboarding, 'APPROVED', onboarding.verification_status);
  }
  return onboarding;
}

/**
 * A customer PATCH is about to change identity data that the onboarding status still allows to
 * change (customers' IdentityChanging hook). The specification lets KYC data change while the
 * onboarding is PENDING or PROCESSING, its status unchanged; what the identity provider's verdict
 * was given on must not then be approved as if it had seen the new data:
 * - a KYC whose verification has a verdict (APPROVED or MANUAL_REVIEW) goes to MANUAL_REVIEW: the
 *   person's documents were checked against other data, so a reviewer compares them with the new
 *   data (the sandbox outcome control decides, as for any manual review). The documents alone no
 *   longer approve it. Until 2026-12-05 the change was refused with 409 INVALID_STATE, which the
 *   specification does not allow (found by audits);
 * - a KYB whose review has such a verdict is reviewed again: its verification goes back to
 *   PENDING, and the re-evaluation after the PATCH (customerChanged) runs the review on the new
 *   data, which decides it again (or leaves it PENDING until the related persons are approved).
 * No running onboarding, or a verification without a verdict (PENDING, ERROR, NOT_REQUIRED under
 * the EXTERNAL strategy): the change goes through as before.
 */
export async function identityChanging(tx: Tx, context: RequestContext, customerId: string): Promise<void> {
  const customer = await lockCustomer(tx, context.clientId, customerId);
  const kind: OnboardingKind = customer.type === 'LEGAL' ? 'KYB' : 'KYC';
  const current = await currentOnboarding(tx, customer, kind);
  if (!current || !isLive(current.status)) return;
  const onboarding = (await store.lockOnboarding(tx, context.clientId, current.id)) ?? current;
  const verdict = onboarding.verification_status;
  if (kind === 'KYC') {
    if (verdict === 'APPROVED') await store.updateOnboarding(tx, onboarding, { verification_status: 'MANUAL_REVIEW', updated_at: context.now });
  } else if (verdict === 'APPROVED' || verdict === 'MANUAL_REVIEW') {
    await store.updateOnboarding(tx, onboarding, { verification_status: 'PENDING', updated_at: context.now });
  }
}

export interface OutcomeDetails {
  errorType?: string;
  errorMessage?: string;
}

/**
 * The identity provider's verdict on an onboarding: from the hosted page (the person finished
 * the SDK flow) or from the sandbox outcome control. The onboarding must be running (409) and its
 * verification must accept the outcome (409). A KYC still PENDING becomes PROCESSING (or denied at
 * once) and CUSTOMER_KYC_SDK_FLOW_COMPLETED is recorded; ERROR leaves the status as it is and
 * records CUSTOMER_KYC_ERROR; an approval may approve the onboarding when its documents are in.
 */
export async function applyVerificationOutcome(
  tx: Tx,
  context: RequestContext,
  runtime: ComplianceRuntime,
  onboardingId: string,
  outcome: VerificationOutcome,
  details: OutcomeDetails = {},
): Promise<OnboardingRow> {
  const found = isUuid(onboardingId) ? await store.findOnboarding(tx, context.clientId, onboardingId) : undefined;
  if (!found) throw notFound('Onboarding');
  await lockCustomer(tx, context.clientId, found.customer_id);
  let onboarding = await store.lockOnboarding(tx, context.clientId, found.id);
  if (!onboarding) throw notFound('Onboarding');
  if (!isLive(onboarding.status)) {
    throw new AppError('INVALID_STATE', `Cannot record the outcome ${outcome}: the onboarding is ${onboarding.status}.`);
  }
  if (onboarding.kind === 'KYB' && outcome === 'ERROR') {
    throw validationError('outcome', 'a business review has no ERROR outcome; use APPROVED, DENIED_COMPLIANCE, DENIED_IDENTITY_THEFT or MANUAL_REVIEW');
  }
  assertOutcomeAllowed(onboarding.verification_status, outcome);

  if (outcome === 'ERROR') {
    const errorType = details.errorType ?? 'VERIFICATION_SYSTEM_ERROR';
    const errorMessage = (details.errorMessage ?? 'The identity provider failed while checking the documents; re-run the KYC.').slice(0, errorMessageLengthMax);
    const updated = await store.updateOnboarding(tx, onboarding, {
      verification_status: 'ERROR',
      error_type: errorType,
      error_message: errorMessage,
      updated_at: context.now,
    });
    await onboardingEvent(tx, context, 'CUSTOMER_KYC_ERROR', updated, { errorType, errorMessage });
    return updated;
  }
  // A later verdict replaces an earlier error: the onboarding no longer shows it (until 2026-12-02
  // an approved onboarding still showed the provider's system error; found by an audit).
  if (onboarding.error_type !== null || onboarding.error_message !== null) {
    onboarding = await store.updateOnboarding(tx, onboarding, { error_type: null, error_message: null, updated_at: context.now });
  }

  const submitting = onboarding.kind === 'KYC' && onboarding.status === 'PENDING';
  if (outcome === 'DENIED_COMPLIANCE' || outcome === 'DENIED_IDENTITY_THEFT') {
    if (submitting) {
      // An automatic denial goes straight to the denial status rather than PROCESSING.
      const denied = await setStatus(tx, context, onboarding, outcome, outcome, `deny the onboarding`);
      // The row as stored, with its sdkCompletedAt (the answer and its replays showed null).
      const updated = await store.updateOnboarding(tx, denied, { sdk_completed_at: context.now });
      await onboardingEvent(tx, context, 'CUSTOMER_KYC_SDK_FLOW_COMPLETED', updated);
      return finishAlreadySet(tx, context, runtime, updated);
    }
    return finish(tx, context, runtime, onboarding, outcome, outcome);
  }

  // APPROVED or MANUAL_REVIEW
  let updated: OnboardingRow;
  if (submitting) {
    updated = await setStatus(tx, context, onboarding, 'PROCESSING', outcome, 'complete the SDK flow');
    updated = await store.updateOnboarding(tx, updated, { sdk_completed_at: context.now });
    await onboardingEvent(tx, context, 'CUSTOMER_KYC_SDK_FLOW_COMPLETED', updated);
  } else {
    updated = await store.updateOnboarding(tx, onboarding, { verification_status: outcome, updated_at: context.now });
  }
  return (await reevaluate(tx, context, runtime, onboarding.customer_id)) ?? updated;
}

/**
 * Sandbox: an individual's KYC in one step, with the events of the long path. The verification is
 * approved (as if the person finished the SDK flow with APPROVED, when it still waits for them),
 * and every required document the customer lacks is put on file: a source-of-funds declaration
 * (source INCOME) and a placeholder page for the FATCA form (W-9 or W-8BEN as the rules choose).
 * The ordinary rules then decide: the onboarding is APPROVED (CUSTOMER_KYC_FINISHED, the virtual
 * account and VIRTUAL_ACCOUNT_CREATED) unless another required check still fails, for example a
 * check forced to fail. Only for a KYC whose verification can still be approved (409 otherwise).
 */
export async function completeKycInSandbox(
  tx: Tx,
  context: RequestContext,
  runtime: ComplianceRuntime,
  onboardingId: string,
  options: { asOutcome?: boolean } = {},
): Promise<OnboardingRow> {
  const found = isUuid(onboardingId) ? await store.findOnboarding(tx, context.clientId, onboardingId) : undefined;
  if (!found) throw notFound('Onboarding');
  if (found.kind !== 'KYC') {
    throw validationError('completeRequirements', 'completes an individual\'s KYC; a business review is decided with the outcome alone once its persons are approved');
  }
  // As the outcome control (APPROVED with completeRequirements), the verification must take the
  // outcome as APPROVED alone would: under EXTERNAL (NOT_REQUIRED) it does not (409), and nothing
  // is put on file, as for the one-call POST /v1/sandbox/customers (until 2026-12-02 it generated
  // a declaration and a FATCA form for an EXTERNAL onboarding; found by an audit).
  if (options.asOutcome && found.verification_status === 'NOT_REQUIRED') assertOutcomeAllowed(found.verification_status, 'APPROVED');
  let onboarding = found;
  if (onboarding.verification_status !== 'APPROVED' && onboarding.verification_status !== 'NOT_REQUIRED') {
    onboarding = await applyVerificationOutcome(tx, context, runtime, onboarding.id, 'APPROVED');
  } else if (!isLive(onboarding.status)) {
    throw new AppError('INVALID_STATE', `Cannot complete the onboarding: it is ${onboarding.status}.`);
  }
  if (!isLive(onboarding.status)) return onboarding;
  const customer = await lockCustomer(tx, context.clientId, onboarding.customer_id);
  const facts = await individualFacts(tx, customer, onboarding);
  const missing = evaluateIndividual(facts).checks.filter((check) => check.required && !check.passed).map((check) => check.name);
  const personName = [customer.first_name, customer.middle_name, customer.last_name].filter((part) => part).join(' ');
  if (missing.includes('DOC_SOURCE_OF_FUNDS')) {
    const sources: DeclaredSource[] = [{ type: 'INCOME', description: 'Sandbox: declared by the one-call KYC' }];
    const pdf = await renderDeclarationPdf({ declarantKind: 'INDIVIDUAL', declarantName: personName, customerId: customer.id, onboardingId: onboarding.id, sources, declaredAt: context.now });
    const file = { content: Buffer.from(pdf), fileName: 'source-of-funds-declaration.pdf', contentType: 'application/pdf' as const };
    await storeDocument(tx, context, customer.id, onboarding.id, 'DOC_SOURCE_OF_FUNDS', file, { sources });
  }
  if (missing.includes('DOC_FATCA')) {
    const form = fatcaFormFor(facts);
    const title = form === 'DOC_FATCA_W9' ? 'FATCA form W-9' : 'FATCA form W-8BEN';
    const pdf = await renderSandboxFormPdf({ title, personName, customerId: customer.id, onboardingId: onboarding.id, at: context.now });
    const file = { content: Buffer.from(pdf), fileName: `${form.toLowerCase()}-sandbox.pdf`, contentType: 'application/pdf' as const };
    await storeDocument(tx, context, customer.id, onboarding.id, form, file, null);
  }
  return (await reevaluate(tx, context, runtime, customer.id)) ?? (await store.findOnboarding(tx, context.clientId, onboarding.id)) ?? onboarding;
}

/** The FINISHED event and its consequences for an onboarding whose final status is already written. */
async function finishAlreadySet(tx: Tx, context: RequestContext, runtime: ComplianceRuntime, onboarding: OnboardingRow): Promise<OnboardingRow> {
  await onboardingEvent(tx, context, onboarding.kind === 'KYB' ? 'CUSTOMER_KYB_FINISHED' : 'CUSTOMER_KYC_FINISHED', onboarding);
  if (onboarding.kind === 'KYC') {
    for (const businessId of await store.businessesWithLiveKybFor(tx, context.clientId, onboarding.customer_id)) {
      await reevaluate(tx, context, runtime, businessId);
    }
  }
  return onboarding;
}

/**
 * The SDK link expired before the person finished: PENDING → EXPIRED and
 * CUSTOMER_KYC_SDK_EXPIRED. Only a KYC with a link can expire (409 otherwise).
 */
export async function expireOnboarding(tx: Tx, context: RequestContext, onboardingId: string): Promise<OnboardingRow> {
  const found = isUuid(onboardingId) ? await store.findOnboarding(tx, context.clientId, onboardingId) : undefined;
  if (!found) throw notFound('Onboarding');
  await lockCustomer(tx, context.clientId, found.customer_id);
  const onboarding = await store.lockOnboarding(tx, context.clientId, found.id);
  if (!onboarding) throw notFound('Onboarding');
  if (onboarding.sdk_token_sha256 === null) {
    throw new AppError('INVALID_STATE', `Cannot expire the onboarding: it has no SDK link (${onboarding.kind}, ${onboarding.strategy}).`);
  }
  const updated = await setStatus(tx, context, onboarding, 'EXPIRED', 'EXPIRED', 'expire the SDK link');
  await onboardingEvent(tx, context, 'CUSTOMER_KYC_SDK_EXPIRED', updated);
  return updated;
}

/**
 * Expires the link when it is past its deadline and the person has not finished: used by the
 * hosted page and the expiry worker. Returns the onboarding when it expired now.
 */
export async function expireIfDue(tx: Tx, context: RequestContext, onboardingId: string): Promise<OnboardingRow | undefined> {
  const found = await store.findOnboarding(tx, context.clientId, onboardingId);
  if (!found) return undefined;
  await lockCustomer(tx, context.clientId, found.customer_id);
  const onboarding = await store.lockOnboarding(tx, context.clientId, found.id);
  if (!onboarding || onboarding.status !== 'PENDING' || onboarding.sdk_expires_at === null || onboarding.sdk_expires_at > context.now) return undefined;
  return expireOnboarding(tx, context, onboarding.id);
}

/**
 * The timer kind that expires an SDK link at its deadline (scheduled with the onboarding, by the
 * client's clock). A link finished or expired by then is left alone.
 */
export const linkExpiryTimer: TimerKind = {
  kind: store.linkExpiryTimerKind,
  run: async (tx, context, onboardingId) => {
    await expireIfDue(tx, context, onboardingId);
  },
};

/**
 * Expires the links past their deadline by their client's clock (`wallNow` plus the client's
 * offset), each in its own transaction, so several workers can run it at once: the timer worker
 * does this among its other timers; this runs only the link timers. Returns how many it ran.
 */
export async function expireDueLinks(db: Db, wallNow: Date, newTraceId: () => string): Promise<number> {
  return (await runDueTimers(db, { now: () => wallNow }, [linkExpiryTimer], { newTraceId })).length;
}

// ---------------------------------------------------------------------------------------------
// Documents and declarations
// ---------------------------------------------------------------------------------------------

export interface UploadedFile {
  content: Buffer;
  fileName: string | null;
  contentType: AcceptedContentType;
}

export interface DocumentView {
  documentId: string;
  customerId: string;
  onboardingId: string | null;
  documentType: string;
  fileName: string | null;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  createdAt: string;
}

/**
 * Stores a document in the database (with its SHA-256) and looks at the running onboarding
 * again, which may approve it. Rules: the customer exists (404) and is of the route's type
 * (400 WRONG_CUSTOMER_TYPE).
 */
export async function uploadDocument(
  tx: Tx,
  context: RequestContext,
  runtime: ComplianceRuntime,
  input: { customerType: 'PRIVATE' | 'LEGAL'; customerId: string; documentType: DocumentType; file: UploadedFile },
): Promise<DocumentView> {
  const customer = await lockCustomer(tx, context.clientId, input.customerId, 'customerId');
  if (customer.type !== input.customerType) {
    throw wrongType(input.customerType, input.customerType === 'PRIVATE' ? 'POST /v1/compliance/business/upload-document' : 'POST /v1/compliance/upload-document');
  }
  const view = await storeDocument(tx, context, customer.id, null, input.documentType, input.file, null);
  await reevaluate(tx, context, runtime, customer.id);
  return view;
}

async function storeDocument(
  tx: Tx,
  context: RequestContext,
  customerId: string,
  onboardingId: string | null,
  documentType: DocumentType,
  file: UploadedFile,
  declaration: { sources: DeclaredSource[] } | null,
): Promise<DocumentView> {
  const id = idAt(context.now);
  const digest = sha256(file.content);
  await store.insertDocument(tx, {
    client_id: context.clientId,
    id,
    customer_id: customerId,
    onboarding_id: onboardingId,
    document_type: documentType,
    file_name: file.fileName,
    content_type: file.contentType,
    size_bytes: file.content.length,
    sha256: digest,
    content: file.content,
    declaration: declaration === null ? null : JSON.stringify(declaration),
    created_at: context.now,
  });
  return {
    documentId: id,
    customerId,
    onboardingId,
    documentType,
    fileName: file.fileName,
    contentType: file.contentType,
    sizeBytes: file.content.length,
    sha256: digest.toString('hex'),
    createdAt: context.now.toISOString(),
  };
}

/**
 * The source-of-funds declaration of an onboarding (KYC for the individual route, KYB for the
 * business route; the other kind is not found). The onboarding must be running (409
 * INVALID_STATE). The PDF is stored as the customer's DOC_SOURCE_OF_FUNDS document.
 */
export async function declareSourceOfFunds(
  tx: Tx,
  context: RequestContext,
  runtime: ComplianceRuntime,
  input: { kind: OnboardingKind; onboardingId: string; sources: DeclaredSource[] },
): Promise<DocumentView> {
  const found = isUuid(input.onboardingId) ? await store.findOnboarding(tx, context.clientId, input.onboardingId) : undefined;
  if (!found || found.kind !== input.kind) throw notFound('Onboarding');
  const customer = await lockCustomer(tx, context.clientId, found.customer_id);
  const onboarding = await store.lockOnboarding(tx, context.clientId, found.id);
  if (!onboarding) throw notFound('Onboarding');
  if (!isLive(onboarding.status)) {
    throw new AppError('INVALID_STATE', `A source-of-funds declaration needs a running onboarding; this one is ${onboarding.status}.`);
  }
  const declarantName =
    customer.type === 'LEGAL'
      ? (customer.kyb?.legalName ?? customer.email)
      : [customer.first_name, customer.middle_name, customer.last_name].filter((part) => part).join(' ');
  const pdf = await renderDeclarationPdf({
    declarantKind: customer.type === 'LEGAL' ? 'BUSINESS' : 'INDIVIDUAL',
    declarantName,
    customerId: customer.id,
    onboardingId: onboarding.id,
    sources: input.sources,
    declaredAt: context.now,
  });
  const view = await storeDocument(
    tx,
    context,
    customer.id,
    onboarding.id,
    'DOC_SOURCE_OF_FUNDS',
    { content: Buffer.from(pdf), fileName: 'source-of-funds-declaration.pdf', contentType: 'application/pdf' },
    { sources: input.sources },
  );
  await reevaluate(tx, context, runtime, customer.id);
  return view;
}

// ---------------------------------------------------------------------------------------------
// Sandbox: forced checks
// ---------------------------------------------------------------------------------------------

/**
 * Forces one check of a customer to pass or fail until forced again, then looks at the running
 * onboarding again. Only data and document checks can be forced; the verification itself is
 * decided with the outcome control.
 */
export async function forceCheck(tx: Tx, context: RequestContext, runtime: ComplianceRuntime, customerId: string, name: string, passed: boolean): Promise<IndividualStatusView | BusinessStatusView> {
  const customer = await lockCustomer(tx, context.clientId, customerId);
  const kind: OnboardingKind = customer.type === 'LEGAL' ? 'KYB' : 'KYC';
  const allowed = forceableCheckNames(kind);
  if (!allowed.includes(name)) {
    throw validationError('name', `must be one of ${allowed.join(', ')} for ${customer.type === 'LEGAL' ? 'a business' : 'an individual'}; decide the verification with POST /v1/sandbox/onboardings/:onboardingId/outcome`);
  }
  await store.saveOverride(tx, context.clientId, customer.id, name, passed, context.now);
  await reevaluate(tx, context, runtime, customer.id);
  return kind === 'KYB' ? businessStatus(tx, context.clientId, customer.id, context.now) : individualStatus(tx, context.clientId, customer.id);
}

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

export interface OnboardingView {
  id: string;
  customerId: string;
  kind: OnboardingKind;
  strategy: OnboardingStrategy;
  status: OnboardingStatus;
  verificationStatus: VerificationStatus;
  previousOnboardingId: string | null;
  sdkExpiresAt: string | null;
  sdkCompletedAt: string | null;
  errorType: string | null;
  errorMessage: string | null;
  decidedAt: string | null;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function onboardingView(row: OnboardingRow): OnboardingView {
  const iso = (value: Date | null) => (value === null ? null : value.toISOString());
  return {
    id: row.id,
    customerId: row.customer_id,
    kind: row.kind,
    strategy: row.strategy,
    status: row.status,
    verificationStatus: row.verification_status,
    previousOnboardingId: row.previous_onboarding_id,
    sdkExpiresAt: iso(row.sdk_expires_at),
    sdkCompletedAt: iso(row.sdk_completed_at),
    errorType: row.error_type,
    errorMessage: row.error_message,
    decidedAt: iso(row.decided_at),
    archivedAt: iso(row.archived_at),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function getOnboarding(db: Queryable, clientId: string, onboardingId: string): Promise<OnboardingView> {
  const row = isUuid(onboardingId) ? await store.findOnboarding(db, clientId, onboardingId) : undefined;
  if (!row) throw notFound('Onboarding');
  return onboardingView(row);
}

/** For the hosted page: the onboarding behind a token and the person's name. */
export async function findByTokenHash(db: Queryable, tokenSha256: Buffer): Promise<{ onboarding: OnboardingRow; firstName: string; lastName: string } | undefined> {
  const onboarding = await store.findOnboardingByTokenHash(db, tokenSha256);
  if (!onboarding) return undefined;
  const customer = await findCustomer(db, onboarding.client_id, onboarding.customer_id);
  if (!customer) return undefined;
  return { onboarding, firstName: customer.first_name ?? '', lastName: customer.last_name ?? '' };
}

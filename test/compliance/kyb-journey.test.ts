import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { businessStatus, complianceStatus, createBusinessWith, createReadyIndividual, eventsOf, expectPayloadsMatchSchemas, pathOf, relate, startKyc, upload } from './helpers.js';

/**
 * The business journey through HTTP: a business with related persons, KYB waiting on the
 * persons' own KYC (one through the hosted page, one through the sandbox control), business
 * documents and declaration, then APPROVED with a virtual account.
 */

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function completeKycThroughPage(customerId: string): Promise<string> {
  const started = await startKyc(t, customerId);
  const submitted = await t.request({ method: 'POST', url: pathOf(started.sdk.link), key: null, rawBody: 'outcome=APPROVED', contentType: 'application/x-www-form-urlencoded' });
  expect(submitted.status).toBe(303);
  await upload(t, { customerId, documentType: 'DOC_FATCA_W9' });
  const declared = await t.request({ method: 'POST', url: `/v1/compliance/onboardings/${started.onboardingId}/source-of-funds`, body: { sources: [{ type: 'INCOME' }] } });
  expect(declared.status).toBe(201);
  return started.onboardingId;
}

describe('business KYB journey', () => {
  it('goes from a new business with related persons to APPROVED with a virtual account', async () => {
    const business = await createBusinessWith(t);
    let status = await businessStatus(t, business.id);
    expect(status).toMatchObject({ businessOnboardingId: null, onboardingStatus: null, isCompliant: false, nextAction: 'ADD_PERSON_RELATIONS' });

    // KYB needs at least one shareholder and one representative.
    const early = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    expect(early.status).toBe(422);
    expect(early.body.code).toBe('COMPLIANCE_PROFILE_INCOMPLETE');
    expect(early.body.details).toEqual([{ field: 'relatedPersons', message: expect.stringContaining('SHAREHOLDER') }]);

    const owner = await createReadyIndividual(t);
    const director = await createReadyIndividual(t);
    await relate(t, business.id, owner.id, 'SHAREHOLDER');
    const onlyShareholder = await businessStatus(t, business.id);
    expect(onlyShareholder.nextAction).toBe('ADD_PERSON_RELATIONS');
    await relate(t, business.id, director.id, 'REPRESENTATIVE');
    status = await businessStatus(t, business.id);
    expect(status.nextAction).toBe('START_KYB');

    // Start KYB: the review waits for the persons' own KYC.
    t.clock.advance(1000);
    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id }, headers: { 'x-trace-id': 'trace-kyb-start' } });
    expect(started.status).toBe(201);
    const businessOnboardingId: string = started.body.data.businessOnboardingId;
    expect(started.body.data).toEqual({ businessOnboardingId, status: 'PROCESSING', verificationStatus: 'PENDING' });
    status = await businessStatus(t, business.id);
    expect(status).toMatchObject({ businessOnboardingId, onboardingStatus: 'PROCESSING', verificationStatus: 'PENDING', nextAction: 'COMPLETE_UBO_KYC' });
    const again = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('INVALID_STATE');

    // The shareholder verifies through the hosted page and is approved; the business still waits for the director.
    t.clock.advance(1000);
    await completeKycThroughPage(owner.id);
    expect((await complianceStatus(t, owner.id)).onboardingStatus).toBe('APPROVED');
    status = await businessStatus(t, business.id);
    expect(status.nextAction).toBe('COMPLETE_UBO_KYC');
    expect(status.checks.find((check: { name: string }) => check.name === 'UBO_KYC_APPROVED')).toMatchObject({ passed: false, required: true });

    // The director's KYC is decided by the sandbox control: the review then passes.
    t.clock.advance(1000);
    const directorOnboarding = await startKyc(t, director.id);
    const decided = await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${directorOnboarding.onboardingId}/outcome`, body: { outcome: 'APPROVED' } });
    expect(decided.status).toBe(200);
    expect(decided.body.data).toMatchObject({ status: 'PROCESSING', verificationStatus: 'APPROVED' });
    await upload(t, { customerId: director.id, documentType: 'DOC_FATCA_W9' });
    await upload(t, { customerId: director.id, documentType: 'DOC_SOURCE_OF_FUNDS' });
    expect((await complianceStatus(t, director.id)).onboardingStatus).toBe('APPROVED');

    status = await businessStatus(t, business.id);
    expect(status).toMatchObject({ onboardingStatus: 'PROCESSING', verificationStatus: 'APPROVED', nextAction: 'UPLOAD_BUSINESS_DOCUMENT' });
    expect(status.summary.requiredFailed).toEqual(['KYB_STATUS', 'DOC_BUSINESS_REGISTRATION', 'DOC_SOURCE_OF_FUNDS']);

    // Business documents: an individual's route refuses a business, the business route takes it.
    const wrongRoute = await upload(t, { customerId: business.id, documentType: 'DOC_PROOF_OF_ADDRESS' });
    expect(wrongRoute.status).toBe(400);
    expect(wrongRoute.body.code).toBe('WRONG_CUSTOMER_TYPE');
    t.clock.advance(1000);
    const registration = await upload(t, { customerId: business.id, documentType: 'DOC_BUSINESS_REGISTRATION', business: true });
    expect(registration.status).toBe(201);
    expect((await businessStatus(t, business.id)).summary.requiredFailed).toEqual(['KYB_STATUS', 'DOC_SOURCE_OF_FUNDS']);

    t.clock.advance(1000);
    const declaration = await t.request({
      method: 'POST',
      url: `/v1/compliance/business/onboardings/${businessOnboardingId}/source-of-funds`,
      body: { sources: [{ type: 'INCOME', description: 'Revenue from consulting' }, { type: 'LOAN_PROCEEDS' }] },
      headers: { 'x-trace-id': 'trace-kyb-sof' },
    });
    expect(declaration.status).toBe(201);

    status = await businessStatus(t, business.id);
    expect(status).toMatchObject({ onboardingStatus: 'APPROVED', verificationStatus: 'APPROVED', isCompliant: true, nextAction: null });
    const customer = await t.request({ url: `/v1/customers/${business.id}` });
    expect(customer.body.data.onboardingId).toBe(businessOnboardingId);
    expect(customer.body.data.bankingInfo.virtual_account_number).toMatch(/^70\d{10}$/);

    const events = await eventsOf(t, business.id);
    expect(events.map((event) => [event.type, event.data.status ?? null, event.data.traceId])).toEqual([
      ['CUSTOMER_CREATED', null, expect.any(String)],
      ['CUSTOMER_KYB_STARTED', 'PROCESSING', 'trace-kyb-start'],
      ['CUSTOMER_KYB_FINISHED', 'APPROVED', 'trace-kyb-sof'],
      ['VIRTUAL_ACCOUNT_CREATED', null, 'trace-kyb-sof'],
    ]);
    expect(events[1].data).toEqual({ customerId: business.id, status: 'PROCESSING', businessOnboardingId, traceId: 'trace-kyb-start' });
    expect(events[2].data).toEqual({ customerId: business.id, status: 'APPROVED', businessOnboardingId, traceId: 'trace-kyb-sof' });
    expect(expectPayloadsMatchSchemas(events)).toBe(3);
  });

  it('is denied when a related person\'s KYC is denied', async () => {
    const business = await createBusinessWith(t);
    const owner = await createReadyIndividual(t);
    const director = await createReadyIndividual(t);
    await relate(t, business.id, owner.id, 'SHAREHOLDER');
    await relate(t, business.id, director.id, 'REPRESENTATIVE');
    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    expect(started.status).toBe(201);
    const ownerKyc = await startKyc(t, owner.id);
    const denied = await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${ownerKyc.onboardingId}/outcome`, body: { outcome: 'DENIED_IDENTITY_THEFT' } });
    expect(denied.status).toBe(200);
    const status = await businessStatus(t, business.id);
    expect(status).toMatchObject({ onboardingStatus: 'DENIED_COMPLIANCE', verificationStatus: 'DENIED_COMPLIANCE', nextAction: 'CONTACT_SUPPORT', isCompliant: false });
    const events = await eventsOf(t, business.id);
    expect(events.at(-1)).toMatchObject({ type: 'CUSTOMER_KYB_FINISHED', data: { status: 'DENIED_COMPLIANCE' } });
  });

  it('goes to manual review for a magic legal name, and the sandbox outcome decides it', async () => {
    const business = await createBusinessWith(t, t.clientA, { legalName: 'Review Holdings LLC' });
    const owner = await createReadyIndividual(t);
    await relate(t, business.id, owner.id, 'SHAREHOLDER');
    await relate(t, business.id, owner.id, 'REPRESENTATIVE');
    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    expect(started.body.data.verificationStatus).toBe('MANUAL_REVIEW');
    let status = await businessStatus(t, business.id);
    expect(status.nextAction).toBe('COMPLETE_UBO_KYC');
    // The owner is approved, leaving only the review.
    const forced = await t.request({ method: 'POST', url: `/v1/sandbox/customers/${business.id}/compliance-checks`, body: { name: 'UBO_KYC_APPROVED', passed: true } });
    expect(forced.status).toBe(200);
    status = await businessStatus(t, business.id);
    expect(status.nextAction).toBe('WAIT');
    const error = await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.body.data.businessOnboardingId}/outcome`, body: { outcome: 'ERROR' } });
    expect(error.status).toBe(400);
    const approved = await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.body.data.businessOnboardingId}/outcome`, body: { outcome: 'APPROVED' } });
    expect(approved.status).toBe(200);
    status = await businessStatus(t, business.id);
    expect(status.nextAction).toBe('UPLOAD_BUSINESS_DOCUMENT');

    // The business's data changed after the review's verdict is reviewed again: the owner's own
    // KYC is not approved, so the review waits again; a magic name sends it to manual review.
    const renamed = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { kyb: { legalName: 'Totally Different Holdings Ltd' } } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    status = await businessStatus(t, business.id);
    expect(status).toMatchObject({ onboardingStatus: 'PROCESSING', verificationStatus: 'PENDING' });
    const review = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { kyb: { legalName: 'Review Again Holdings LLC' } } });
    expect(review.status).toBe(200);
    expect((await businessStatus(t, business.id)).verificationStatus).toBe('MANUAL_REVIEW');
    // Fields outside the kyb block leave the verdict alone.
    await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.body.data.businessOnboardingId}/outcome`, body: { outcome: 'APPROVED' } });
    expect((await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { email: `renamed-${business.id}@example.com` } })).status).toBe(200);
    expect((await businessStatus(t, business.id)).verificationStatus).toBe('APPROVED');
  });
});

describe('a representative counts while its representingRange covers the day', () => {
  it('a business whose only representative stopped representing it (or has not started) cannot start KYB; a current range, or none, lets it', async () => {
    // Until 2026-12-06 the range was never read: a representative whose range ended in 2011 was
    // enough for the KYB (found by an audit).
    const business = await createBusinessWith(t);
    const owner = await createReadyIndividual(t);
    const director = await createReadyIndividual(t);
    await relate(t, business.id, owner.id, 'SHAREHOLDER');
    const today = t.clock.now().toISOString().slice(0, 10);
    const related = await t.request({
      method: 'POST',
      url: `/v1/customers/business/${business.id}/related-persons`,
      body: { userId: director.id, role: 'REPRESENTATIVE', representingRange: { startDate: '2001-01-01', endDate: '2011-06-30' } },
    });
    expect(related.status, JSON.stringify(related.body)).toBe(201);
    const refused = async () => {
      const status = await businessStatus(t, business.id);
      expect(status.nextAction).toBe('ADD_PERSON_RELATIONS');
      const start = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
      expect([start.status, start.body.code]).toEqual([422, 'COMPLIANCE_PROFILE_INCOMPLETE']);
      expect(start.body.details).toEqual([
        { field: 'relatedPersons', message: `at least one SHAREHOLDER and one REPRESENTATIVE must be related to the business; the representatives related to it do not represent it on ${today} (their representingRange does not cover the day)` },
      ]);
    };
    await refused();
    const patch = (representingRange: unknown) =>
      t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}/related-persons`, body: { userId: director.id, role: 'REPRESENTATIVE', representingRange } });
    // Not started yet.
    expect((await patch({ startDate: '2999-01-01', endDate: null })).status).toBe(200);
    await refused();
    // Ending today still covers today.
    expect((await patch({ startDate: '2020-01-01', endDate: today })).status).toBe(200);
    expect((await businessStatus(t, business.id)).nextAction).toBe('START_KYB');
    expect((await patch(null)).status).toBe(200);
    expect((await businessStatus(t, business.id)).nextAction).toBe('START_KYB');
    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
  });
});

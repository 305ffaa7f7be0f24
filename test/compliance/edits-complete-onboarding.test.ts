import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { approveIndividual, businessStatus, complianceStatus, createBusinessWith, createReadyIndividual, relate, setOutcome, startKyc, upload } from './helpers.js';

/**
 * A running onboarding is looked at again after every write that can change what it checks. A
 * customer PATCH or a related person added back can be the write that completes it: the
 * onboarding is then approved in that same transaction, as after an upload, and never left
 * PROCESSING with nextAction WAIT while nothing is pending (found by an audit).
 */

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('a KYC completed by a customer PATCH', () => {
  it('is approved by the PATCH that restores the last missing requirement; the customer then shows the virtual account (on GET, as the specification gives bankingInfo)', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    expect((await setOutcome(t, started.onboardingId, 'APPROVED')).status).toBe(200);
    // The tax country can always change: cleared while PROCESSING, the documents arrive, then it comes back.
    expect((await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id as string}`, body: { kyc: { taxIdCountry: null } } })).status).toBe(200);
    expect((await upload(t, { customerId: customer.id, documentType: 'DOC_FATCA_W9' })).status).toBe(201);
    expect((await upload(t, { customerId: customer.id, documentType: 'DOC_SOURCE_OF_FUNDS' })).status).toBe(201);
    expect(await complianceStatus(t, customer.id)).toMatchObject({ onboardingStatus: 'PROCESSING', nextAction: 'UPDATE_PROFILE' });

    const restored = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id as string}`, body: { kyc: { taxIdCountry: 'US' } } });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(await complianceStatus(t, customer.id)).toMatchObject({ onboardingStatus: 'APPROVED', isCompliant: true, nextAction: null });
    expect(restored.body.data).not.toHaveProperty('bankingInfo');
    expect((await t.request({ url: `/v1/customers/${customer.id as string}` })).body.data.bankingInfo).toBeTruthy();
    const finished = await t.request({ url: `/v1/events?type=CUSTOMER_KYC_FINISHED&limit=200` });
    expect((finished.body.data as Array<{ data: { customerId: string } }>).filter((event) => event.data.customerId === customer.id)).toHaveLength(1);
  });

  it('a PATCH that completes nothing leaves the onboarding as it was', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    await setOutcome(t, started.onboardingId, 'APPROVED');
    // A field that may change after the verification's verdict (identity data may not: kyc-routes.test.ts).
    const patched = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id as string}`, body: { kyc: { occupation: '13' } } });
    expect(patched.status).toBe(200);
    expect(await complianceStatus(t, customer.id)).toMatchObject({ onboardingStatus: 'PROCESSING', nextAction: 'UPLOAD_DOCUMENT' });
  });
});

describe('a KYB completed by a related person added back', () => {
  it('is approved by the relation write that restores the last missing requirement', async () => {
    const owner = await approveIndividual(t);
    const director = await approveIndividual(t);
    const business = await createBusinessWith(t);
    await relate(t, business.id, owner.id, 'SHAREHOLDER');
    await relate(t, business.id, director.id, 'REPRESENTATIVE');
    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const onboardingId = started.body.data.businessOnboardingId as string;
    expect(await businessStatus(t, business.id)).toMatchObject({ onboardingStatus: 'PROCESSING', verificationStatus: 'APPROVED' });

    const removed = await t.request({ method: 'DELETE', url: `/v1/customers/business/${business.id as string}/related-persons`, body: { userId: director.id, role: 'REPRESENTATIVE' } });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect((await upload(t, { customerId: business.id, documentType: 'DOC_BUSINESS_REGISTRATION', business: true })).status).toBe(201);
    const declaration = await t.request({ method: 'POST', url: `/v1/compliance/business/onboardings/${onboardingId}/source-of-funds`, body: { sources: [{ type: 'INCOME', description: 'Revenue' }] } });
    expect(declaration.status, JSON.stringify(declaration.body)).toBe(201);
    expect((await businessStatus(t, business.id)).onboardingStatus).toBe('PROCESSING');

    await relate(t, business.id, director.id, 'REPRESENTATIVE');
    expect(await businessStatus(t, business.id)).toMatchObject({ onboardingStatus: 'APPROVED', isCompliant: true, nextAction: null });
  });
});

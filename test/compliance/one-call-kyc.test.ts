import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { balanceOf, expectLedgerClean } from '../bank/fixtures.js';
import { approveIndividual, complianceStatus, createBusinessWith, createReadyIndividual, eventsOf, relate, startKyc } from './helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The sandbox's one-call KYC (completeRequirements, the magic last name Instant) and seeding of approved, funded customers. */
let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const typesOf = (events: any[]) => events.map((event) => event.type);

async function outcome(onboardingId: string, body: Record<string, unknown>) {
  return t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${onboardingId}/outcome`, body });
}

describe('200 POST /v1/sandbox/onboardings/:onboardingId/outcome with completeRequirements', () => {
  it('approves a KYC in one call, with the events of the long path and the documents on file', async () => {
    const longPath = await approveIndividual(t);
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    const response = await outcome(started.onboardingId, { outcome: 'APPROVED', completeRequirements: true });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.status).toBe('APPROVED');
    expect(response.body.message).toBe('Onboarding completed: APPROVED');

    expect(typesOf(await eventsOf(t, customer.id))).toEqual(typesOf(await eventsOf(t, longPath.id)));
    expect(typesOf(await eventsOf(t, customer.id))).toEqual(
      expect.arrayContaining(['CUSTOMER_KYC_STARTED', 'CUSTOMER_KYC_SDK_FLOW_REQUIRED', 'CUSTOMER_KYC_SDK_FLOW_COMPLETED', 'CUSTOMER_KYC_FINISHED', 'VIRTUAL_ACCOUNT_CREATED']),
    );
    const status = await complianceStatus(t, customer.id);
    expect(status.onboardingStatus).toBe('APPROVED');
    const documents = await t.deps.db.selectFrom('compliance_documents').select(['document_type', 'content_type', 'content']).where('customer_id', '=', customer.id).execute();
    expect(documents.map((document) => document.document_type).sort()).toEqual(['DOC_FATCA_W9', 'DOC_SOURCE_OF_FUNDS']);
    for (const document of documents) {
      expect(document.content_type).toBe('application/pdf');
      expect(document.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    }
    const wallet = await t.request({ url: `/v1/wallets/${customer.portfolios[0].wallets[0]}` });
    expect(wallet.body.data.virtualAccount.virtualAccountNumber).toMatch(/^70\d{10}$/);
  });

  it('a check forced to fail stops it: the message says the outcome was recorded and the onboarding is still PROCESSING, not completed', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    const forced = await t.request({ method: 'POST', url: `/v1/sandbox/customers/${customer.id}/compliance-checks`, body: { name: 'DOC_FATCA', passed: false } });
    expect(forced.status).toBe(200);
    const response = await outcome(started.onboardingId, { outcome: 'APPROVED', completeRequirements: true });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ status: 'PROCESSING', verificationStatus: 'APPROVED' });
    expect(response.body.message).not.toContain('completed');
    expect(response.body.message).toBe(
      'Outcome APPROVED recorded and any missing required documents put on file; the onboarding is still PROCESSING, waiting for DOC_FATCA (next action UPLOAD_DOCUMENT)',
    );
    expect(await complianceStatus(t, customer.id)).toMatchObject({ onboardingStatus: 'PROCESSING', nextAction: 'UPLOAD_DOCUMENT' });
  });
});

describe('201', () => {
  it('POST /v1/compliance/kyc approves the KYC of a person named Instant as it starts', async () => {
    const customer = await createReadyIndividual(t, t.clientA, { lastName: 'Instant' });
    const started = await startKyc(t, customer.id);
    expect(started.status).toBe('APPROVED');
    expect(started.sdk.link).toContain('/hosted/kyc/');
    const events = typesOf(await eventsOf(t, customer.id));
    expect(events).toEqual(['CUSTOMER_CREATED', 'CUSTOMER_KYC_STARTED', 'CUSTOMER_KYC_SDK_FLOW_REQUIRED', 'CUSTOMER_KYC_SDK_FLOW_COMPLETED', 'CUSTOMER_KYC_FINISHED', 'VIRTUAL_ACCOUNT_CREATED']);
  });
  it('POST /v1/sandbox/customers creates approved customers with funded wallets, in one call', async () => {
    const client = await t.newClient('seeding');
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/customers', key: client.key, body: { count: 3, fundAmount: '250.00' } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const customers = response.body.data.customers as any[];
    expect(customers).toHaveLength(3);
    expect(new Set(customers.map((customer) => customer.virtualAccountNumber)).size).toBe(3);
    for (const customer of customers) {
      expect(customer.funded).toEqual({ amount: '250.00', asset: 'USD' });
      expect((await complianceStatus(t, customer.customerId, client)).onboardingStatus).toBe('APPROVED');
      expect(await balanceOf(t, customer.walletId, 'USD', client)).toEqual({ AVAILABLE: '250.00', RESERVED: '0.00', PENDING: '0.00' });
    }
    const listed = await t.request({ url: '/v1/customers?limit=10', key: client.key });
    expect(listed.body.data).toHaveLength(3);
    await expectLedgerClean(t);
  });
  it('POST /v1/sandbox/customers leaves the wallets empty without fundAmount', async () => {
    const client = await t.newClient('seeding empty');
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/customers', key: client.key, body: { count: 1 } });
    expect(response.status).toBe(201);
    expect(response.body.data.customers[0].funded).toBeNull();
    expect(await balanceOf(t, response.body.data.customers[0].walletId, 'USD', client)).toEqual({ AVAILABLE: '0.00', RESERVED: '0.00', PENDING: '0.00' });
  });
});

describe('400', () => {
  it('completeRequirements goes with APPROVED only, and with a KYC only (400 naming completeRequirements)', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    const review = await outcome(started.onboardingId, { outcome: 'MANUAL_REVIEW', completeRequirements: true });
    expect(review.status).toBe(400);
    expect(review.body.details[0].field).toBe('completeRequirements');
    expect((await complianceStatus(t, customer.id)).onboardingStatus).toBe('PENDING');

    const business = await createBusinessWith(t);
    await relate(t, business.id, (await createReadyIndividual(t)).id, 'SHAREHOLDER');
    await relate(t, business.id, (await createReadyIndividual(t)).id, 'REPRESENTATIVE');
    const kyb = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    expect(kyb.status, JSON.stringify(kyb.body)).toBe(201);
    const refused = await outcome(kyb.body.data.businessOnboardingId, { outcome: 'APPROVED', completeRequirements: true });
    expect(refused.status).toBe(400);
    expect(refused.body.details[0].field).toBe('completeRequirements');
  });

  it('errorMessage goes with ERROR only (400 naming errorMessage), rather than being dropped', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    const approved = await outcome(started.onboardingId, { outcome: 'APPROVED', errorMessage: 'ignored?' });
    expect(approved.status).toBe(400);
    expect(approved.body.details[0].field).toBe('errorMessage');
    expect((await complianceStatus(t, customer.id)).onboardingStatus).toBe('PENDING');
    expect((await outcome(started.onboardingId, { outcome: 'ERROR', errorMessage: 'vendor down' })).status).toBe(200);
  });

  it.each([
    ['count 0', { count: 0 }, 'count'],
    ['count above 100', { count: 101 }, 'count'],
    ['a fund amount as a JSON number', { count: 1, fundAmount: 10 }, 'fundAmount'],
    ['an asset bank rails do not carry', { count: 1, fundAmount: '10.00', asset: 'BTC' }, 'asset'],
    ['an asset bank rails do not carry, without fundAmount', { count: 1, asset: 'BTC' }, 'asset'],
    ['an unknown field', { count: 1, amount: '10.00' }, 'amount'],
  ])('POST /v1/sandbox/customers refuses %s (400 naming the field)', async (_name, body, field) => {
    const client = await t.newClient('seeding refused');
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/customers', key: client.key, body });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.details ?? response.body.message)).toContain(field);
    expect((await t.request({ url: '/v1/customers', key: client.key })).body.data).toHaveLength(0);
  });
});

describe('409', () => {
  it('POST /v1/sandbox/customers under the EXTERNAL onboarding strategy, which the one-call KYC cannot approve: nothing is kept', async () => {
    const client = await t.newClient('seeding external');
    expect((await t.request({ method: 'PATCH', url: '/v1/compliance/settings', key: client.key, body: { onboardingStrategy: 'EXTERNAL' } })).status).toBe(200);
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/customers', key: client.key, body: { count: 2, fundAmount: '10.00' } });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('INVALID_STATE');
    expect(response.body.message).toContain('STANDARD');
    expect((await t.request({ url: '/v1/customers', key: client.key })).body.data).toHaveLength(0);
  });

  it('completeRequirements on an EXTERNAL onboarding, whose verification takes no outcome: nothing put on file', async () => {
    const client = await t.newClient('complete external');
    expect((await t.request({ method: 'PATCH', url: '/v1/compliance/settings', key: client.key, body: { onboardingStrategy: 'EXTERNAL' } })).status).toBe(200);
    const customer = await createReadyIndividual(t, client);
    const started = await startKyc(t, customer.id, client);
    const before = await complianceStatus(t, customer.id, client);
    const response = await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.onboardingId}/outcome`, key: client.key, body: { outcome: 'APPROVED', completeRequirements: true } });
    expect(response.status, JSON.stringify(response.body)).toBe(409);
    expect(response.body).toMatchObject({ code: 'INVALID_STATE', message: expect.stringContaining('NOT_REQUIRED') });
    expect(await complianceStatus(t, customer.id, client)).toEqual(before);
  });

  it('completeRequirements on a decided onboarding', async () => {
    const approved = await approveIndividual(t);
    const response = await outcome(approved.onboardingId, { outcome: 'APPROVED', completeRequirements: true });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('INVALID_STATE');
  });
});

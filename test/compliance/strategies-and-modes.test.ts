import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { businessStatus, complianceStatus, createBusinessWith, createReadyIndividual, eventsOf, relate, upload } from './helpers.js';

/** The EXTERNAL strategy, the compliance settings, the KYB routes by outcome, and production mode. */

let t: TestContext;
let production: TestContext;
const missingId = '019ca945-0a00-74c1-8797-3bfde107f365';

beforeAll(async () => {
  t = await createTestApp();
  production = await createTestApp({ env: { OPENBAAS_MODE: 'production' } });
});
afterAll(async () => {
  await t.close();
  await production.close();
});

async function expectCode(response: { status: number; body: { code: string } }, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.code).toBe(code);
}

describe('compliance settings', () => {
  it('default to STANDARD and change per client', async () => {
    const client = await t.newClient('Settings client');
    expect((await t.request({ url: '/v1/compliance/settings', key: client.key })).body.data).toEqual({ onboardingStrategy: 'STANDARD' });
    const changed = await t.request({ method: 'PATCH', url: '/v1/compliance/settings', key: client.key, body: { onboardingStrategy: 'EXTERNAL' } });
    expect(changed.status).toBe(200);
    expect((await t.request({ url: '/v1/compliance/settings', key: client.key })).body.data).toEqual({ onboardingStrategy: 'EXTERNAL' });
    expect((await t.request({ url: '/v1/compliance/settings' })).body.data).toEqual({ onboardingStrategy: 'STANDARD' });
    await expectCode(await t.request({ method: 'PATCH', url: '/v1/compliance/settings', key: client.key, body: { onboardingStrategy: 'MAGIC' } }), 400, 'VALIDATION_ERROR');
  });
});

describe('EXTERNAL strategy', () => {
  it('starts without an SDK link and is approved automatically once every required document is uploaded', async () => {
    const client = await t.newClient('External KYC client');
    await t.request({ method: 'PATCH', url: '/v1/compliance/settings', key: client.key, body: { onboardingStrategy: 'EXTERNAL' } });
    const customer = await createReadyIndividual(t, client);
    let status = await complianceStatus(t, customer.id, client);
    expect(status.checks.find((check: { name: string }) => check.name === 'SDK_VERIFICATION_COMPLETED')).toEqual({
      name: 'SDK_VERIFICATION_COMPLETED',
      passed: true,
      required: false,
      suggestedAction: null,
    });
    expect(status.nextAction).toBe('START_KYC');

    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyc', key: client.key, body: { customerId: customer.id } });
    expect(started.status).toBe(201);
    expect(started.body.data).toMatchObject({ status: 'PROCESSING', sdk: null });
    status = await complianceStatus(t, customer.id, client);
    expect(status).toMatchObject({ onboardingStrategy: 'EXTERNAL', onboardingStatus: 'PROCESSING', verificationStatus: 'NOT_REQUIRED', nextAction: 'UPLOAD_DOCUMENT' });
    expect(status.summary.requiredFailed).toEqual(['KYC_STATUS', 'DOC_SOURCE_OF_FUNDS', 'DOC_FATCA', 'DOC_BIOMETRIC_REPORT', 'DOC_PROOF_OF_ADDRESS']);

    for (const documentType of ['DOC_SOURCE_OF_FUNDS', 'DOC_FATCA_W9', 'DOC_BIOMETRIC_REPORT']) {
      expect((await upload(t, { customerId: customer.id, documentType, key: client.key })).status).toBe(201);
    }
    expect((await complianceStatus(t, customer.id, client)).onboardingStatus).toBe('PROCESSING');
    expect((await upload(t, { customerId: customer.id, documentType: 'DOC_PROOF_OF_ADDRESS', key: client.key })).status).toBe(201);
    status = await complianceStatus(t, customer.id, client);
    expect(status).toMatchObject({ onboardingStatus: 'APPROVED', isCompliant: true, nextAction: null });
    const types = (await eventsOf(t, customer.id, client)).map((event) => event.type);
    expect(types).toEqual(['CUSTOMER_CREATED', 'CUSTOMER_KYC_STARTED', 'CUSTOMER_KYC_FINISHED', 'VIRTUAL_ACCOUNT_CREATED']);
    // The verification was not the sandbox's to decide.
    await expectCode(
      await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.body.data.onboardingId}/outcome`, key: client.key, body: { outcome: 'APPROVED' } }),
      409,
      'INVALID_STATE',
    );
  });

  it('a business under EXTERNAL needs no related persons\' KYC but an ownership structure document', async () => {
    const client = await t.newClient('External KYB client');
    await t.request({ method: 'PATCH', url: '/v1/compliance/settings', key: client.key, body: { onboardingStrategy: 'EXTERNAL' } });
    const business = await createBusinessWith(t, client);
    const person = await createReadyIndividual(t, client);
    await relate(t, business.id, person.id, 'SHAREHOLDER', client);
    await relate(t, business.id, person.id, 'REPRESENTATIVE', client);
    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyb', key: client.key, body: { customerId: business.id } });
    expect(started.body.data).toMatchObject({ status: 'PROCESSING', verificationStatus: 'NOT_REQUIRED' });
    for (const documentType of ['DOC_BUSINESS_REGISTRATION', 'DOC_SOURCE_OF_FUNDS', 'DOC_OWNERSHIP_STRUCTURE']) {
      expect((await upload(t, { customerId: business.id, documentType, business: true, key: client.key })).status).toBe(201);
    }
    expect(await businessStatus(t, business.id, client)).toMatchObject({ onboardingStatus: 'APPROVED', isCompliant: true });
  });
});

describe('POST /v1/compliance/kyb', () => {
  it('400 for an individual, pointing at KYC', async () => {
    const person = await createReadyIndividual(t);
    const response = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: person.id } });
    await expectCode(response, 400, 'WRONG_CUSTOMER_TYPE');
    expect(response.body.message).toContain('/v1/compliance/kyc');
    expect(response.body.details).toEqual([{ field: 'customerId', message: 'is an individual (PRIVATE) customer; use POST /v1/compliance/kyc' }]);
  });

  it('404 for a missing, malformed and other client\'s business', async () => {
    const other = await createBusinessWith(t, t.clientB);
    for (const customerId of [missingId, '1', other.id]) await expectCode(await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId } }), 404, 'NOT_FOUND');
  });

  it('422 names the missing business data', async () => {
    const business = await createBusinessWith(t, t.clientA, { naicsCode: undefined, identification: undefined, mainAddress: undefined });
    const response = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    await expectCode(response, 422, 'COMPLIANCE_PROFILE_INCOMPLETE');
    expect(response.body.details.map((detail: { field: string }) => detail.field)).toEqual(['kyb.naicsCode', 'kyb.identification', 'kyb.mainAddress', 'relatedPersons']);
    expect((await businessStatus(t, business.id)).nextAction).toBe('UPDATE_BUSINESS_DATA');
  });

  it('422 names each check a sandbox override forces to fail as an override, not as missing data', async () => {
    const business = await createBusinessWith(t);
    await relate(t, business.id, (await createReadyIndividual(t)).id, 'SHAREHOLDER');
    await relate(t, business.id, (await createReadyIndividual(t)).id, 'REPRESENTATIVE');
    for (const name of ['KYB_DATA_PRESENT', 'BUSINESS_ADDRESS', 'RELATED_PERSONS']) {
      expect((await t.request({ method: 'POST', url: `/v1/sandbox/customers/${business.id}/compliance-checks`, body: { name, passed: false } })).status).toBe(200);
    }
    const response = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    await expectCode(response, 422, 'COMPLIANCE_PROFILE_INCOMPLETE');
    const override = (check: string) => expect.stringMatching(new RegExp(`^was marked failing by a sandbox check override \\(${check}\\)`));
    expect(response.body.details).toEqual([
      { field: 'kyb', message: override('KYB_DATA_PRESENT') },
      { field: 'kyb.mainAddress', message: override('BUSINESS_ADDRESS') },
      { field: 'relatedPersons', message: override('RELATED_PERSONS') },
    ]);
  });

  it('409 after a decision: a denied business cannot start again', async () => {
    const business = await createBusinessWith(t, t.clientA, { legalName: 'Deny Trading Co' });
    const person = await createReadyIndividual(t);
    await relate(t, business.id, person.id, 'SHAREHOLDER');
    await relate(t, business.id, person.id, 'REPRESENTATIVE');
    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } });
    expect(started.body.data).toMatchObject({ status: 'DENIED_COMPLIANCE' });
    await expectCode(await t.request({ method: 'POST', url: '/v1/compliance/kyb', body: { customerId: business.id } }), 409, 'INVALID_STATE');
    await expectCode(await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.body.data.businessOnboardingId}/expire` }), 409, 'INVALID_STATE');
  });

  it('GET /v1/compliance/business/status answers 400 for an individual', async () => {
    const person = await createReadyIndividual(t);
    const response = await t.request({ url: `/v1/compliance/business/status/${person.id}` });
    await expectCode(response, 400, 'WRONG_CUSTOMER_TYPE');
    expect(response.body.details).toEqual([{ field: 'customerId', message: 'is an individual (PRIVATE) customer; use GET /v1/compliance/status/:customerId' }]);
  });
});

describe('production mode', () => {
  it('has no sandbox controls and no hosted page (404)', async () => {
    await expectCode(await production.request({ method: 'POST', url: `/v1/sandbox/onboardings/${missingId}/outcome`, body: { outcome: 'APPROVED' } }), 404, 'ROUTE_NOT_FOUND');
    await expectCode(await production.request({ method: 'POST', url: `/v1/sandbox/onboardings/${missingId}/expire` }), 404, 'ROUTE_NOT_FOUND');
    await expectCode(await production.request({ method: 'POST', url: `/v1/sandbox/customers/${missingId}/compliance-checks`, body: { name: 'OCCUPATION', passed: true } }), 404, 'ROUTE_NOT_FOUND');
    expect((await production.request({ url: `/hosted/kyc/${'A'.repeat(43)}`, key: null })).status).toBe(404);
  });

  it('answers 503 for STANDARD KYC (no identity vendor ships) and runs EXTERNAL onboarding', async () => {
    const customer = await createReadyIndividual(production);
    const standard = await production.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: customer.id } });
    await expectCode(standard, 503, 'IDENTITY_PROVIDER_UNAVAILABLE');
    expect((await complianceStatus(production, customer.id)).onboardingStatus).toBeNull();
    await production.request({ method: 'PATCH', url: '/v1/compliance/settings', body: { onboardingStrategy: 'EXTERNAL' } });
    const external = await production.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: customer.id } });
    expect(external.status).toBe(201);
    expect(external.body.data.sdk).toBeNull();
  });
});

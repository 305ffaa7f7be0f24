import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { createBusinessWith, createReadyIndividual, complianceStatus, eventsOf, expectPayloadsMatchSchemas, pathOf, setOutcome, startKyc, upload } from './helpers.js';
import { expireDueLinks } from '../../src/modules/compliance/index.js';
import { individualBody } from '../customers/fixtures.js';

/** The KYC routes by outcome, the re-run, the expiry by the injected clock and every illegal transition over HTTP. */

let t: TestContext;
const missingId = '019ca945-0a00-74c1-8797-3bfde107f365';

beforeAll(async () => {
  t = await createTestApp({ env: { KYC_LINK_TTL_MINUTES: '30' } });
});
afterAll(async () => {
  await t.close();
});

async function expectCode(response: { status: number; body: { code: string } }, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.code).toBe(code);
}

/** Each final (or archived) state, reached through the API. */
async function onboardingIn(state: 'APPROVED' | 'DENIED_COMPLIANCE' | 'DENIED_IDENTITY_THEFT' | 'EXPIRED' | 'ARCHIVED') {
  const customer = await createReadyIndividual(t);
  const started = await startKyc(t, customer.id);
  if (state === 'EXPIRED') {
    await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.onboardingId}/expire` });
  } else if (state === 'ARCHIVED') {
    await t.request({ method: 'POST', url: `/v1/compliance/kyc/${started.onboardingId}/rerun` });
  } else if (state === 'APPROVED') {
    await setOutcome(t, started.onboardingId, 'APPROVED');
    await upload(t, { customerId: customer.id, documentType: 'DOC_FATCA_W9' });
    await upload(t, { customerId: customer.id, documentType: 'DOC_SOURCE_OF_FUNDS' });
  } else {
    await setOutcome(t, started.onboardingId, state);
  }
  const onboarding = await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` });
  expect(onboarding.body.data.status).toBe(state);
  return { customerId: customer.id as string, onboardingId: started.onboardingId as string };
}

describe('POST /v1/compliance/kyc', () => {
  describe('201', () => {
    it('starts PENDING with a link that expires after KYC_LINK_TTL_MINUTES', async () => {
      const customer = await createReadyIndividual(t);
      const started = await startKyc(t, customer.id);
      const onboarding = await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` });
      expect(onboarding.body.data).toMatchObject({ kind: 'KYC', strategy: 'STANDARD', status: 'PENDING', verificationStatus: 'PENDING', previousOnboardingId: null });
      expect(new Date(onboarding.body.data.sdkExpiresAt).getTime() - t.clock.now().getTime()).toBe(30 * 60_000);
    });

    it('starts again after the last onboarding expired', async () => {
      const { customerId } = await onboardingIn('EXPIRED');
      expect((await complianceStatus(t, customerId)).nextAction).toBe('START_KYC');
      const again = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId } });
      expect(again.status).toBe(201);
    });
  });

  describe('400', () => {
    it('refuses a business customer, pointing at KYB', async () => {
      const business = await createBusinessWith(t);
      const response = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: business.id } });
      await expectCode(response, 400, 'WRONG_CUSTOMER_TYPE');
      expect(response.body.message).toContain('/v1/compliance/kyb');
      expect(response.body.details).toEqual([{ field: 'customerId', message: 'is a business (LEGAL) customer; use POST /v1/compliance/kyb' }]);
    });

    it('refuses unknown fields and a missing customerId', async () => {
      await expectCode(await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: missingId, strategy: 'EXTERNAL' } }), 400, 'VALIDATION_ERROR');
      const missing = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: {} });
      await expectCode(missing, 400, 'VALIDATION_ERROR');
      expect(missing.body.details).toEqual([{ field: 'customerId', message: 'is required' }]);
    });
  });

  describe('404', () => {
    it('answers the same for a missing, a malformed and another client\'s customer', async () => {
      const other = await createReadyIndividual(t, t.clientB);
      for (const customerId of [missingId, 'not-a-uuid', other.id]) {
        const response = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId } });
        await expectCode(response, 404, 'NOT_FOUND');
        expect(response.body.message).toBe('Customer not found');
      }
    });
  });

  describe('409', () => {
    it('refuses while a KYC runs (re-run instead), after approval and after a denial', async () => {
      const customer = await createReadyIndividual(t);
      const started = await startKyc(t, customer.id);
      const running = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: customer.id } });
      await expectCode(running, 409, 'INVALID_STATE');
      expect(running.body.message).toContain(`/v1/compliance/kyc/${started.onboardingId}/rerun`);
      for (const state of ['APPROVED', 'DENIED_COMPLIANCE'] as const) {
        const { customerId } = await onboardingIn(state);
        await expectCode(await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId } }), 409, 'INVALID_STATE');
      }
    });
  });

  describe('422', () => {
    it('names every missing field of the KYC data, address and tax country', async () => {
      const created = await t.request({ method: 'POST', url: '/v1/customers/individual', body: individualBody({}, { documentSsn: undefined }) });
      const response = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: created.body.data.id } });
      await expectCode(response, 422, 'COMPLIANCE_PROFILE_INCOMPLETE');
      expect(response.body.details.map((detail: { field: string }) => detail.field)).toEqual(['kyc.documentSsn', 'kyc.mainAddress', 'kyc.taxIdCountry']);
      // Any identity document will do, which the detail says: a passport alone lets KYC start.
      expect(response.body.details[0].message).toContain('documentPassport');
    });

    it('names each check a sandbox override forces to fail as an override, beside what is really missing; a field on file is never said to be required', async () => {
      const customer = await createReadyIndividual(t);
      const force = async (name: string) => expect((await t.request({ method: 'POST', url: `/v1/sandbox/customers/${customer.id}/compliance-checks`, body: { name, passed: false } })).status).toBe(200);
      const start = async () => {
        const response = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: customer.id } });
        await expectCode(response, 422, 'COMPLIANCE_PROFILE_INCOMPLETE');
        return response.body;
      };
      const override = (field: string, check: string) => ({ field, message: expect.stringMatching(new RegExp(`^was marked failing by a sandbox check override \\(${check}\\)`)) });

      await force('KYC_DATA_PRESENT');
      expect((await start()).details).toEqual([override('kyc', 'KYC_DATA_PRESENT')]);
      // The address is on file: the forced REGISTRATION_ADDRESS is an override, not "is required".
      await force('REGISTRATION_ADDRESS');
      const forcedBoth = await start();
      expect(forcedBoth.details).toEqual([override('kyc', 'KYC_DATA_PRESENT'), override('kyc.mainAddress', 'REGISTRATION_ADDRESS')]);
      expect(forcedBoth.message).toContain('sandbox check override');
      // Fields really missing are named beside the overrides, which stay named.
      const emptied = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { documentSsn: null, taxIdCountry: null } } });
      expect(emptied.status, JSON.stringify(emptied.body)).toBe(200);
      expect((await start()).details).toEqual([
        { field: 'kyc.documentSsn', message: expect.stringContaining('an identity document is required before KYC') },
        override('kyc', 'KYC_DATA_PRESENT'),
        override('kyc.mainAddress', 'REGISTRATION_ADDRESS'),
        { field: 'kyc.taxIdCountry', message: 'is required before KYC' },
      ]);
      // A field both missing and forced to fail is named for each.
      expect((await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { mainAddress: null } } })).status).toBe(200);
      expect((await start()).details.filter((detail: { field: string }) => detail.field === 'kyc.mainAddress')).toEqual([
        { field: 'kyc.mainAddress', message: 'is required before KYC' },
        override('kyc.mainAddress', 'REGISTRATION_ADDRESS'),
      ]);
      expect((await complianceStatus(t, customer.id)).onboardingId).toBeNull();
    });
  });
});

describe('POST /v1/compliance/kyc/:onboardingId/rerun', () => {
  it('201: archives the onboarding, starts a new one with a new link and records the events', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    t.clock.advance(1000);
    const rerun = await t.request({ method: 'POST', url: `/v1/compliance/kyc/${started.onboardingId}/rerun`, headers: { 'x-trace-id': 'trace-rerun' } });
    expect(rerun.status).toBe(201);
    const { onboardingId, previousOnboardingId, sdk } = rerun.body.data;
    expect(previousOnboardingId).toBe(started.onboardingId);
    expect(onboardingId).not.toBe(started.onboardingId);
    expect(sdk.link).not.toBe(started.sdk.link);
    expect(sdk.qrCode).toMatch(/^data:image\/png;base64,/);
    const previous = await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` });
    expect(previous.body.data).toMatchObject({ status: 'ARCHIVED', archivedAt: t.clock.now().toISOString() });
    expect((await t.request({ url: `/v1/customers/${customer.id}` })).body.data.onboardingId).toBe(onboardingId);
    // The old link no longer leads to a form.
    const oldPage = await t.request({ url: pathOf(started.sdk.link), key: null });
    expect(oldPage.status).toBe(410);
    expect(oldPage.body).not.toContain('<form');

    const events = (await eventsOf(t, customer.id)).filter((event) => event.data.traceId === 'trace-rerun');
    expect(events.map((event) => event.type)).toEqual(['CUSTOMER_KYC_RESTARTED', 'CUSTOMER_KYC_STARTED', 'CUSTOMER_KYC_SDK_FLOW_REQUIRED']);
    expect(events[0].data).toEqual({ customerId: customer.id, status: 'PENDING', onboardingId, previousOnboardingId: started.onboardingId, traceId: 'trace-rerun' });
    expect(expectPayloadsMatchSchemas(events)).toBe(3);
  });

  it('201: the archived link\'s expiry is no longer pending: the clock counts the new link alone', async () => {
    const client = await t.newClient();
    const started = await startKyc(t, (await createReadyIndividual(t, client)).id, client);
    const clock = async () => (await t.request({ url: '/v1/sandbox/clock', key: client.key })).body.data;
    expect((await clock()).pendingTimers).toBe(1);
    const rerun = await t.request({ method: 'POST', url: `/v1/compliance/kyc/${started.onboardingId}/rerun`, key: client.key });
    expect(rerun.status).toBe(201);
    expect((await clock()).pendingTimers).toBe(1);
    expect((await setOutcome(t, rerun.body.data.onboardingId, 'DENIED_COMPLIANCE', client)).status).toBe(200);
    expect(await clock()).toMatchObject({ pendingTimers: 0, nextTimerDueAt: null });
  });

  it('201: a PROCESSING onboarding can be re-run too', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    await setOutcome(t, started.onboardingId, 'MANUAL_REVIEW');
    const rerun = await t.request({ method: 'POST', url: `/v1/compliance/kyc/${started.onboardingId}/rerun` });
    expect(rerun.status).toBe(201);
    expect((await complianceStatus(t, customer.id)).nextAction).toBe('COMPLETE_SDK_FLOW');
  });

  it('404: a missing, malformed, KYB or other client\'s onboarding', async () => {
    const other = await startKyc(t, (await createReadyIndividual(t, t.clientB)).id, t.clientB);
    for (const id of [missingId, 'nope', other.onboardingId]) {
      await expectCode(await t.request({ method: 'POST', url: `/v1/compliance/kyc/${id}/rerun` }), 404, 'NOT_FOUND');
    }
  });

  it.each(['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'EXPIRED', 'ARCHIVED'] as const)('409: refused when %s', async (state) => {
    const { onboardingId } = await onboardingIn(state);
    const response = await t.request({ method: 'POST', url: `/v1/compliance/kyc/${onboardingId}/rerun` });
    await expectCode(response, 409, 'INVALID_STATE');
    expect(response.body.message).toContain(state);
  });

  it('422: a profile emptied while PENDING is re-run no more than it would start, naming every missing field; nothing changes', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    const emptied = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { mainAddress: null, documentSsn: null, taxIdCountry: null } } });
    expect(emptied.status, JSON.stringify(emptied.body)).toBe(200);
    const response = await t.request({ method: 'POST', url: `/v1/compliance/kyc/${started.onboardingId}/rerun` });
    await expectCode(response, 422, 'COMPLIANCE_PROFILE_INCOMPLETE');
    expect(response.body.details.map((detail: { field: string }) => detail.field)).toEqual(['kyc.documentSsn', 'kyc.mainAddress', 'kyc.taxIdCountry']);
    const onboarding = await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` });
    expect(onboarding.body.data.status).toBe('PENDING');
  });
});

describe('SDK link expiry by the injected clock', () => {
  it('the worker expires a PENDING link once its deadline passes, not before', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    t.clock.advance(29 * 60_000);
    await expireDueLinks(t.deps.db, t.clock.now(), () => 'trace-expiry-early');
    expect((await complianceStatus(t, customer.id)).onboardingStatus).toBe('PENDING');
    const page = await t.request({ url: pathOf(started.sdk.link), key: null });
    expect(page.status).toBe(200);

    t.clock.advance(60_000);
    // The page already refuses the link before the worker runs.
    const expiredPage = await t.request({ url: pathOf(started.sdk.link), key: null });
    expect(expiredPage.status).toBe(410);
    const expired = await expireDueLinks(t.deps.db, t.clock.now(), () => crypto.randomUUID());
    expect(expired).toBeGreaterThanOrEqual(1);
    const status = await complianceStatus(t, customer.id);
    expect(status).toMatchObject({ onboardingStatus: 'EXPIRED', verificationStatus: 'EXPIRED', nextAction: 'START_KYC' });
    const last = (await eventsOf(t, customer.id)).at(-1);
    expect(last).toMatchObject({ type: 'CUSTOMER_KYC_SDK_EXPIRED', data: { customerId: customer.id, status: 'EXPIRED', onboardingId: started.onboardingId } });
    // Running it again finds nothing more for this link.
    await expireDueLinks(t.deps.db, t.clock.now(), () => crypto.randomUUID());
    expect((await eventsOf(t, customer.id)).filter((event) => event.type === 'CUSTOMER_KYC_SDK_EXPIRED')).toHaveLength(1);
  });

  it('submitting the page after the deadline expires the link instead of verifying', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    t.clock.advance(31 * 60_000);
    const submitted = await t.request({ method: 'POST', url: pathOf(started.sdk.link), key: null, rawBody: 'outcome=APPROVED', contentType: 'application/x-www-form-urlencoded' });
    expect(submitted.status).toBe(410);
    expect(submitted.body).toContain('has expired');
    expect((await complianceStatus(t, customer.id)).onboardingStatus).toBe('EXPIRED');
  });

  it('the outcome control after the deadline expires the link instead of deciding it: 409 INVALID_STATE, no approval', async () => {
    // The timer had not run yet (no worker, or an advance still on its way to it): the control
    // approved a KYC whose link had expired by the client's clock (found by an audit).
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    t.clock.advance(31 * 60_000);
    const decided = await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.onboardingId}/outcome`, body: { outcome: 'APPROVED', completeRequirements: true } });
    expect([decided.status, decided.body.code], JSON.stringify(decided.body)).toEqual([409, 'INVALID_STATE']);
    expect(await complianceStatus(t, customer.id)).toMatchObject({ onboardingStatus: 'EXPIRED', verificationStatus: 'EXPIRED', nextAction: 'START_KYC' });
    const types = (await eventsOf(t, customer.id)).map((event) => event.type);
    expect(types.filter((type) => type === 'CUSTOMER_KYC_SDK_EXPIRED')).toHaveLength(1);
    expect(types).not.toContain('CUSTOMER_KYC_FINISHED');
  });
});

describe('hosted page magic values and outcomes', () => {
  async function submitFor(lastName: string, outcome = 'AUTO') {
    const customer = await createReadyIndividual(t, t.clientA, { lastName });
    const started = await startKyc(t, customer.id);
    const page = await t.request({ url: pathOf(started.sdk.link), key: null });
    expect(page.body).toContain(lastName);
    const submitted = await t.request({ method: 'POST', url: pathOf(started.sdk.link), key: null, rawBody: `outcome=${outcome}`, contentType: 'application/x-www-form-urlencoded' });
    expect(submitted.status).toBe(303);
    return { customerId: customer.id as string, onboardingId: started.onboardingId as string, link: started.sdk.link as string };
  }

  it('Deny: denied straight from PENDING, with SDK_FLOW_COMPLETED then FINISHED', async () => {
    const { customerId } = await submitFor('Deny');
    expect(await complianceStatus(t, customerId)).toMatchObject({ onboardingStatus: 'DENIED_COMPLIANCE', nextAction: 'CONTACT_SUPPORT' });
    const types = (await eventsOf(t, customerId)).map((event) => [event.type, event.data.status]);
    expect(types.slice(-2)).toEqual([
      ['CUSTOMER_KYC_SDK_FLOW_COMPLETED', 'DENIED_COMPLIANCE'],
      ['CUSTOMER_KYC_FINISHED', 'DENIED_COMPLIANCE'],
    ]);
  });

  it.each(['DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'APPROVED'])('the sandbox outcome %s on a PENDING KYC answers the onboarding as stored, sdkCompletedAt set', async (outcome) => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    const answered = await setOutcome(t, started.onboardingId, outcome);
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const stored = await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId as string}` });
    expect(answered.body.data.sdkCompletedAt).not.toBeNull();
    expect(answered.body.data).toEqual(stored.body.data);
  });

  it('Theft: DENIED_IDENTITY_THEFT', async () => {
    const { customerId } = await submitFor('Theft');
    expect((await complianceStatus(t, customerId)).onboardingStatus).toBe('DENIED_IDENTITY_THEFT');
  });

  it('Review: PROCESSING under manual review, so the next action is WAIT until the review decides', async () => {
    const { customerId, onboardingId } = await submitFor('Review');
    expect(await complianceStatus(t, customerId)).toMatchObject({ onboardingStatus: 'PROCESSING', verificationStatus: 'MANUAL_REVIEW', nextAction: 'WAIT' });
    await setOutcome(t, onboardingId, 'APPROVED');
    expect((await complianceStatus(t, customerId)).nextAction).toBe('UPLOAD_DOCUMENT');
  });

  it('Error: CUSTOMER_KYC_ERROR with errorType and errorMessage, status unchanged, next action RERUN_KYC', async () => {
    const { customerId, onboardingId, link } = await submitFor('Error');
    expect(await complianceStatus(t, customerId)).toMatchObject({ onboardingStatus: 'PENDING', verificationStatus: 'ERROR', nextAction: 'RERUN_KYC' });
    const last = (await eventsOf(t, customerId)).at(-1);
    expect(last.type).toBe('CUSTOMER_KYC_ERROR');
    expect(last.data).toMatchObject({ customerId, status: 'PENDING', onboardingId, errorType: 'VERIFICATION_SYSTEM_ERROR', errorMessage: expect.any(String) });
    expect(expectPayloadsMatchSchemas([last])).toBe(1);
    const page = await t.request({ url: pathOf(link), key: null });
    expect(page.body).toContain('ask for a new verification link');
    const rerun = await t.request({ method: 'POST', url: `/v1/compliance/kyc/${onboardingId}/rerun` });
    expect(rerun.status).toBe(201);
  });

  it('400: an errorMessage with control or formatting characters, or blank, is refused (it goes into CUSTOMER_KYC_ERROR); nothing changes', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    for (const errorMessage of ['a\u0007b', 'right\u202Eleft', '   ', '\u3164']) {
      const refused = await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.onboardingId}/outcome`, body: { outcome: 'ERROR', errorMessage } });
      await expectCode(refused, 400, 'VALIDATION_ERROR');
      expect(refused.body.details[0].field).toBe('errorMessage');
    }
    expect((await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` })).body.data).toMatchObject({ verificationStatus: 'PENDING', errorMessage: null });
  });

  it('a later verdict clears the error: an onboarding under review or approved shows no system error', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    expect((await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.onboardingId}/outcome`, body: { outcome: 'ERROR', errorMessage: 'boom' } })).status).toBe(200);
    const errored = await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` });
    expect(errored.body.data).toMatchObject({ verificationStatus: 'ERROR', errorType: 'VERIFICATION_SYSTEM_ERROR', errorMessage: 'boom' });
    expect((await setOutcome(t, started.onboardingId, 'MANUAL_REVIEW')).status).toBe(200);
    const reviewed = await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` });
    expect(reviewed.body.data).toMatchObject({ verificationStatus: 'MANUAL_REVIEW', errorType: null, errorMessage: null });
  });

  it('expiry clears the error too: an expired onboarding shows no system error', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    expect((await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.onboardingId}/outcome`, body: { outcome: 'ERROR', errorMessage: 'vendor down' } })).status).toBe(200);
    expect((await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.onboardingId}/expire` })).status).toBe(200);
    const expired = await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` });
    expect(expired.body.data).toMatchObject({ status: 'EXPIRED', verificationStatus: 'EXPIRED', errorType: null, errorMessage: null });
  });

  it('an explicit choice on the page wins over the magic name', async () => {
    const { customerId } = await submitFor('Deny', 'MANUAL_REVIEW');
    expect((await complianceStatus(t, customerId)).verificationStatus).toBe('MANUAL_REVIEW');
  });

  it('a second submission changes nothing, and an unknown token is a 404 page', async () => {
    const { customerId, link } = await submitFor('Lovelace');
    const before = (await eventsOf(t, customerId)).length;
    const again = await t.request({ method: 'POST', url: pathOf(link), key: null, rawBody: 'outcome=DENIED_COMPLIANCE', contentType: 'application/x-www-form-urlencoded' });
    expect(again.status).toBe(303);
    expect((await complianceStatus(t, customerId)).verificationStatus).toBe('APPROVED');
    expect((await eventsOf(t, customerId)).length).toBe(before);
    const unknown = await t.request({ url: `/hosted/kyc/${'A'.repeat(43)}`, key: null });
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toContain('text/html');
    expect((await t.request({ url: '/hosted/kyc/short', key: null })).status).toBe(404);
  });
});

describe('hosted page submissions the form does not send', () => {
  const form = 'application/x-www-form-urlencoded';

  /** A person named Deny, whose AUTO outcome is a final denial, with the link open. */
  async function openLink() {
    const customer = await createReadyIndividual(t, t.clientA, { lastName: 'Deny' });
    const started = await startKyc(t, customer.id);
    const before = { status: await complianceStatus(t, customer.id), events: (await eventsOf(t, customer.id)).length };
    const unchanged = async () => {
      expect(await complianceStatus(t, customer.id)).toEqual(before.status);
      expect((await eventsOf(t, customer.id)).length).toBe(before.events);
    };
    return { customerId: customer.id as string, path: pathOf(started.sdk.link), unchanged };
  }

  function expectRefusalPage(response: { status: number; body: unknown; headers: Record<string, unknown> }, status: number) {
    expect(response.status, String(response.body)).toBe(status);
    expect(response.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
    });
    expect(response.headers['content-security-policy']).toContain("default-src 'none'");
    expect(response.headers.location).toBeUndefined();
    const body = String(response.body);
    expect(body).toContain('Nothing was changed');
    for (const value of ['AUTO', 'APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'MANUAL_REVIEW', 'ERROR']) expect(body).toContain(`<code>${value}</code>`);
    return body;
  }

  it('400: a missing, repeated or unknown outcome gets a page saying what the form sends; nothing changes (a person named Deny is not denied)', async () => {
    const { path, customerId, unchanged } = await openLink();
    const cases: Array<[string, string]> = [
      ['', 'no outcome field'],
      ['foo=1', 'no outcome field'],
      ['outcome=AUTO&outcome=AUTO', 'outcome field 2 times'],
      ['outcome=APPROVED&outcome=DENIED_COMPLIANCE', 'outcome field 2 times'],
      ['outcome=APPROVE', '&quot;APPROVE&quot; is not one the page knows'],
      ['outcome=approved', '&quot;approved&quot; is not one the page knows'],
      ['outcome=', '&quot;&quot; is not one the page knows'],
      ['outcome=%3Cb%3E', '&quot;&lt;b&gt;&quot; is not one the page knows'],
    ];
    for (const [rawBody, problem] of cases) {
      const response = await t.request({ method: 'POST', url: path, key: null, rawBody, contentType: form });
      expect(expectRefusalPage(response, 400), rawBody).toContain(problem);
    }
    // No body and no Content-Type at all: no outcome either.
    expect(expectRefusalPage(await t.request({ method: 'POST', url: path, key: null }), 400)).toContain('no outcome field');
    await unchanged();
    // The link still takes a proper submission (a charset parameter is fine).
    const submitted = await t.request({ method: 'POST', url: path, key: null, rawBody: 'outcome=MANUAL_REVIEW', contentType: `${form}; charset=UTF-8` });
    expect(submitted.status).toBe(303);
    expect((await complianceStatus(t, customerId)).verificationStatus).toBe('MANUAL_REVIEW');
  });

  it('415: a body that is not a form (JSON included) gets a page; nothing changes', async () => {
    const { path, unchanged } = await openLink();
    const bodies: Array<[string, string]> = [
      ['{"outcome":"APPROVED"}', 'application/json'],
      ['{"outcome":"AUTO"}', 'application/json'],
      ['outcome=APPROVED', 'text/plain'],
      ['outcome=APPROVED', 'multipart/form-data; boundary=x'],
    ];
    for (const [rawBody, contentType] of bodies) {
      const response = await t.request({ method: 'POST', url: path, key: null, rawBody, contentType });
      expect(expectRefusalPage(response, 415), contentType).toContain('not a form');
    }
    await unchanged();
  });
});

describe('illegal transitions over HTTP are refused with 409', () => {
  const finalStates = ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'EXPIRED', 'ARCHIVED'] as const;

  it.each(finalStates)('no outcome, expiry or declaration once %s', async (state) => {
    const { onboardingId } = await onboardingIn(state);
    for (const outcome of ['APPROVED', 'DENIED_COMPLIANCE', 'DENIED_IDENTITY_THEFT', 'MANUAL_REVIEW', 'ERROR']) {
      await expectCode(await setOutcome(t, onboardingId, outcome), 409, 'INVALID_STATE');
    }
    await expectCode(await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${onboardingId}/expire` }), 409, 'INVALID_STATE');
    await expectCode(
      await t.request({ method: 'POST', url: `/v1/compliance/onboardings/${onboardingId}/source-of-funds`, body: { sources: [{ type: 'SAVINGS' }] } }),
      409,
      'INVALID_STATE',
    );
  });

  it('PROCESSING cannot expire, and a verification under manual review cannot go to manual review again', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    await setOutcome(t, started.onboardingId, 'MANUAL_REVIEW');
    await expectCode(await t.request({ method: 'POST', url: `/v1/sandbox/onboardings/${started.onboardingId}/expire` }), 409, 'INVALID_STATE');
    await expectCode(await setOutcome(t, started.onboardingId, 'MANUAL_REVIEW'), 409, 'INVALID_STATE');
  });

  it('an approved verification takes no further outcome while documents are awaited', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    await setOutcome(t, started.onboardingId, 'APPROVED');
    await expectCode(await setOutcome(t, started.onboardingId, 'APPROVED'), 409, 'INVALID_STATE');
    await expectCode(await setOutcome(t, started.onboardingId, 'MANUAL_REVIEW'), 409, 'INVALID_STATE');
  });

  it('KYC data cannot change after a denial or an expiry (the customers rule)', async () => {
    for (const state of ['DENIED_COMPLIANCE', 'EXPIRED'] as const) {
      const { customerId } = await onboardingIn(state);
      await expectCode(await t.request({ method: 'PATCH', url: `/v1/customers/${customerId}`, body: { kyc: { firstName: 'Other' } } }), 409, 'INVALID_STATE');
    }
  });
});

describe('identity data under a verification verdict', () => {
  it('200: identity data changes while PROCESSING (the specification allows it), status unchanged; an approved verification goes to MANUAL_REVIEW, one in review stays', async () => {
    for (const verdict of ['APPROVED', 'MANUAL_REVIEW'] as const) {
      const customer = await createReadyIndividual(t);
      const started = await startKyc(t, customer.id);
      await setOutcome(t, started.onboardingId, verdict);
      for (const kyc of [{ lastName: 'Renamed' }, { birthDate: '1950-01-01' }, { documentSsn: '222-33-4444' }, { occupation: '13', firstName: 'Maria' }]) {
        const changed = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc } });
        expect(changed.status, JSON.stringify(changed.body)).toBe(200);
        const onboarding = (await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` })).body.data;
        expect(onboarding).toMatchObject({ status: 'PROCESSING', verificationStatus: 'MANUAL_REVIEW' });
      }
      const stored = (await t.request({ url: `/v1/customers/${customer.id}` })).body.data;
      expect(stored.kyc).toMatchObject({ firstName: 'Maria', lastName: 'Renamed', birthDate: '1950-01-01' });
      const status = await t.request({ url: `/v1/compliance/status/${customer.id}` });
      expect(status.body.data.nextAction).toBe('WAIT');
    }
  });

  it('200: other fields change without touching the verdict', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    await setOutcome(t, started.onboardingId, 'APPROVED');
    const other = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { occupation: '13' }, email: 'other@example.com' } });
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    expect((await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` })).body.data.verificationStatus).toBe('APPROVED');
  });

  it('the documents alone no longer approve changed data: the review decides, then the onboarding is APPROVED on the new data', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    await setOutcome(t, started.onboardingId, 'APPROVED');
    expect((await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { lastName: 'Renamed' } } })).status).toBe(200);
    await upload(t, { customerId: customer.id, documentType: 'DOC_FATCA_W9' });
    await upload(t, { customerId: customer.id, documentType: 'DOC_SOURCE_OF_FUNDS' });
    expect((await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` })).body.data).toMatchObject({ status: 'PROCESSING', verificationStatus: 'MANUAL_REVIEW' });
    expect((await setOutcome(t, started.onboardingId, 'APPROVED')).status).toBe(200);
    expect((await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` })).body.data).toMatchObject({ status: 'APPROVED', verificationStatus: 'APPROVED' });
    expect((await t.request({ url: `/v1/customers/${customer.id}` })).body.data.kyc.lastName).toBe('Renamed');
  });

  it('a PATCH refused for another field changes nothing: the verdict stays', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    await setOutcome(t, started.onboardingId, 'APPROVED');
    await expectCode(await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { lastName: 'Renamed', nationality: 'XX' } } }), 400, 'VALIDATION_ERROR');
    expect((await t.request({ url: `/v1/compliance/onboardings/${started.onboardingId}` })).body.data.verificationStatus).toBe('APPROVED');
    expect((await t.request({ url: `/v1/customers/${customer.id}` })).body.data.kyc.lastName).toBe(customer.kyc.lastName);
  });

  it('200: before a verdict (verification PENDING or ERROR) and after a re-run, identity data changes', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    expect((await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { lastName: 'Pending' } } })).status).toBe(200);
    await setOutcome(t, started.onboardingId, 'ERROR');
    expect((await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { lastName: 'Errored' } } })).status).toBe(200);
    const second = await startKyc(t, (await createReadyIndividual(t)).id);
    await setOutcome(t, second.onboardingId, 'APPROVED');
    const rerun = await t.request({ method: 'POST', url: `/v1/compliance/kyc/${second.onboardingId}/rerun` });
    expect(rerun.status).toBe(201);
    const onboarding = await t.request({ url: `/v1/compliance/onboardings/${rerun.body.data.onboardingId}` });
    const changed = await t.request({ method: 'PATCH', url: `/v1/customers/${onboarding.body.data.customerId}`, body: { kyc: { lastName: 'Renamed' } } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.data.kyc.lastName).toBe('Renamed');
  });
});

describe('GET /v1/compliance/status/:customerId', () => {
  it('400 for a business (its status has its own route)', async () => {
    const business = await createBusinessWith(t);
    const response = await t.request({ url: `/v1/compliance/status/${business.id}` });
    await expectCode(response, 400, 'WRONG_CUSTOMER_TYPE');
    expect(response.body.message).toContain('/v1/compliance/business/status');
    expect(response.body.details).toEqual([{ field: 'customerId', message: 'is a business (LEGAL) customer; use GET /v1/compliance/business/status/:customerId' }]);
  });

  it('404 for missing, malformed and other client\'s customers', async () => {
    const other = await createReadyIndividual(t, t.clientB);
    for (const id of [missingId, 'x', other.id]) await expectCode(await t.request({ url: `/v1/compliance/status/${id}` }), 404, 'NOT_FOUND');
  });
});

describe('concurrent requests on one customer', () => {
  it('two KYC starts at once: exactly one onboarding, the other refused', async () => {
    const customer = await createReadyIndividual(t);
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: customer.id } })),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409, 409, 409]);
    const rows = await t.deps.db.selectFrom('onboardings').select('id').where('customer_id', '=', customer.id).execute();
    expect(rows).toHaveLength(1);
    expect((await eventsOf(t, customer.id)).filter((event) => event.type === 'CUSTOMER_KYC_STARTED')).toHaveLength(1);
  });

  it('uploads that complete the onboarding at once approve it once, with one virtual account', async () => {
    const customer = await createReadyIndividual(t);
    const started = await startKyc(t, customer.id);
    await setOutcome(t, started.onboardingId, 'APPROVED');
    const responses = await Promise.all([
      upload(t, { customerId: customer.id, documentType: 'DOC_FATCA_W9' }),
      upload(t, { customerId: customer.id, documentType: 'DOC_SOURCE_OF_FUNDS' }),
      upload(t, { customerId: customer.id, documentType: 'DOC_FATCA_W9' }),
    ]);
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201]);
    const types = (await eventsOf(t, customer.id)).map((event) => event.type);
    expect(types.filter((type) => type === 'CUSTOMER_KYC_FINISHED')).toHaveLength(1);
    expect(types.filter((type) => type === 'VIRTUAL_ACCOUNT_CREATED')).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../harness.js';
import { address, individualBody } from '../customers/fixtures.js';
import { complianceStatus, eventsOf, expectPayloadsMatchSchemas, pathOf, upload } from './helpers.js';

/**
 * The whole individual journey through HTTP only: create the customer, start KYC, open the SDK
 * link's page and submit its form, watch the events and the next actions, upload documents,
 * declare the source of funds, and end APPROVED with a virtual account.
 */

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('individual KYC journey', () => {
  it('goes from a new customer to APPROVED with a virtual account', async () => {
    // 1. A customer without a tax country: the profile comes first.
    const created = await t.request({ method: 'POST', url: '/v1/customers/individual', body: individualBody({}, { mainAddress: address, firstName: 'Grace', lastName: 'Hopper' }) });
    expect(created.status).toBe(201);
    const customerId: string = created.body.data.id;
    let status = await complianceStatus(t, customerId);
    expect(status).toMatchObject({ onboardingId: null, onboardingStatus: null, verificationStatus: null, isCompliant: false, nextAction: 'UPDATE_PROFILE', onboardingStrategy: 'STANDARD' });
    expect(status.checks.find((check: { name: string }) => check.name === 'TAX_COUNTRY')).toEqual({ name: 'TAX_COUNTRY', passed: false, required: true, suggestedAction: 'UPDATE_PROFILE' });

    const tooEarly = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId } });
    expect(tooEarly.status).toBe(422);
    expect(tooEarly.body.code).toBe('COMPLIANCE_PROFILE_INCOMPLETE');
    expect(tooEarly.body.details).toEqual([{ field: 'kyc.taxIdCountry', message: 'is required before KYC' }]);

    const patched = await t.request({ method: 'PATCH', url: `/v1/customers/${customerId}`, body: { kyc: { taxIdCountry: 'US' } } });
    expect(patched.status).toBe(200);
    status = await complianceStatus(t, customerId);
    expect(status.nextAction).toBe('START_KYC');

    // 2. Start KYC: an SDK link under PUBLIC_BASE_URL and its QR code.
    t.clock.advance(1000);
    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId }, headers: { 'x-trace-id': 'trace-kyc-start' } });
    expect(started.status).toBe(201);
    const { onboardingId, sdk } = started.body.data;
    expect(started.body.data.status).toBe('PENDING');
    expect(sdk.link).toMatch(/^http:\/\/openbaas\.test\/hosted\/kyc\/[A-Za-z0-9_-]{43}$/);
    expect(sdk.qrCode).toMatch(/^data:image\/png;base64,/);
    expect(Buffer.from(sdk.qrCode.split(',')[1], 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
    const customer = await t.request({ url: `/v1/customers/${customerId}` });
    expect(customer.body.data.onboardingId).toBe(onboardingId);
    status = await complianceStatus(t, customerId);
    expect(status).toMatchObject({ onboardingId, onboardingStatus: 'PENDING', verificationStatus: 'PENDING', nextAction: 'COMPLETE_SDK_FLOW' });

    // KYC data stays editable while PENDING.
    const editWhilePending = await t.request({ method: 'PATCH', url: `/v1/customers/${customerId}`, body: { kyc: { middleName: 'Brewster' } } });
    expect(editWhilePending.status).toBe(200);

    // 3. The person opens the link: a plain HTML page with their name and a form.
    t.clock.advance(60_000);
    const page = await t.request({ url: pathOf(sdk.link), key: null });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('Grace Hopper');
    const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1];
    expect(action).toBe(pathOf(sdk.link));
    expect(page.body).toContain('name="outcome" value="AUTO"');

    const submitted = await t.request({
      method: 'POST',
      url: action ?? '',
      key: null,
      rawBody: 'outcome=AUTO',
      contentType: 'application/x-www-form-urlencoded',
      headers: { 'x-trace-id': 'trace-sdk-submit' },
    });
    expect(submitted.status).toBe(303);
    expect(submitted.headers.location).toBe(pathOf(sdk.link));
    const result = await t.request({ url: pathOf(sdk.link), key: null });
    expect(result.status).toBe(200);
    expect(result.body).toContain('id="verification-status">APPROVED');
    expect(result.body).not.toContain('<form');

    status = await complianceStatus(t, customerId);
    expect(status).toMatchObject({ onboardingStatus: 'PROCESSING', verificationStatus: 'APPROVED', nextAction: 'UPLOAD_DOCUMENT', isCompliant: false });
    expect(status.summary.requiredFailed).toEqual(['KYC_STATUS', 'DOC_SOURCE_OF_FUNDS', 'DOC_FATCA']);

    // 4. Documents: the W-9, then the source-of-funds declaration completes the onboarding.
    t.clock.advance(60_000);
    const w9 = await upload(t, { customerId, documentType: 'DOC_FATCA_W9', fileName: 'w9.pdf' });
    expect(w9.status).toBe(201);
    expect(w9.body.data).toMatchObject({ customerId, documentType: 'DOC_FATCA_W9', contentType: 'application/pdf', fileName: 'w9.pdf' });
    expect(w9.body.data.sha256).toMatch(/^[0-9a-f]{64}$/);
    status = await complianceStatus(t, customerId);
    expect(status).toMatchObject({ onboardingStatus: 'PROCESSING', nextAction: 'UPLOAD_DOCUMENT' });
    expect(status.summary.requiredFailed).toEqual(['KYC_STATUS', 'DOC_SOURCE_OF_FUNDS']);

    t.clock.advance(60_000);
    const declaration = await t.request({
      method: 'POST',
      url: `/v1/compliance/onboardings/${onboardingId}/source-of-funds`,
      body: { sources: [{ type: 'INCOME', description: 'Salary' }, { type: 'SAVINGS' }] },
      headers: { 'x-trace-id': 'trace-sof' },
    });
    expect(declaration.status).toBe(201);
    const stored = await t.deps.db.selectFrom('compliance_documents').selectAll().where('id', '=', declaration.body.data.documentId).executeTakeFirstOrThrow();
    expect(stored.document_type).toBe('DOC_SOURCE_OF_FUNDS');
    expect(stored.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(stored.sha256.toString('hex')).toBe(declaration.body.data.sha256);

    // 5. APPROVED, compliant, with a virtual account on the primary wallet.
    status = await complianceStatus(t, customerId);
    expect(status).toMatchObject({ onboardingStatus: 'APPROVED', verificationStatus: 'APPROVED', isCompliant: true, nextAction: null });
    // Not required under STANDARD, so not needed for approval: occupation, biometric report, proof of address.
    expect(status.summary).toEqual({ passed: 8, failed: 3, requiredFailed: [] });
    const approved = await t.request({ url: `/v1/customers/${customerId}` });
    const virtualAccountNumber: string = approved.body.data.bankingInfo.virtual_account_number;
    expect(virtualAccountNumber).toMatch(/^70\d{10}$/);
    const primaryWalletId: string = approved.body.data.portfolios[0].wallets[0];
    const wallet = await t.request({ url: `/v1/wallets/${primaryWalletId}` });
    expect(wallet.body.data.virtualAccount).toMatchObject({ virtualAccountNumber });

    // KYC data is frozen once approved.
    const editAfter = await t.request({ method: 'PATCH', url: `/v1/customers/${customerId}`, body: { kyc: { lastName: 'Murray' } } });
    expect(editAfter.status).toBe(409);
    expect(editAfter.body.code).toBe('INVALID_STATE');

    // 6. The events, in order, each with the fields of the specification and the request's trace id.
    const events = await eventsOf(t, customerId);
    expect(events.map((event) => [event.type, event.data.status ?? null, event.data.traceId])).toEqual([
      ['CUSTOMER_CREATED', null, expect.any(String)],
      ['CUSTOMER_KYC_STARTED', 'PENDING', 'trace-kyc-start'],
      ['CUSTOMER_KYC_SDK_FLOW_REQUIRED', 'PENDING', 'trace-kyc-start'],
      ['CUSTOMER_KYC_SDK_FLOW_COMPLETED', 'PROCESSING', 'trace-sdk-submit'],
      ['CUSTOMER_KYC_FINISHED', 'APPROVED', 'trace-sof'],
      ['VIRTUAL_ACCOUNT_CREATED', null, 'trace-sof'],
    ]);
    for (const event of events.slice(1, 5)) expect(event.data).toEqual({ customerId, status: event.data.status, onboardingId, traceId: event.data.traceId });
    expect(events[5].data).toEqual({ customerId, walletId: primaryWalletId, traceId: 'trace-sof' });
    expect(expectPayloadsMatchSchemas(events)).toBe(5);

    // 7. Another wallet of the approved customer gets its own number on request; the primary one has one already.
    const portfolioId: string = approved.body.data.portfolios[0].id;
    const second = await t.request({ method: 'POST', url: `/v1/customers/${customerId}/portfolios/${portfolioId}/wallets`, body: { name: 'Travel' } });
    expect(second.status).toBe(201);
    const extra = await t.request({ method: 'POST', url: '/v1/virtual-accounts', body: { walletId: second.body.data.id } });
    expect(extra.status).toBe(201);
    expect(extra.body.data.walletId).toBe(second.body.data.id);
    expect(extra.body.data.virtualAccountNumber).toMatch(/^70\d{10}$/);
    expect(extra.body.data.virtualAccountNumber).not.toBe(virtualAccountNumber);
    const again = await t.request({ method: 'POST', url: '/v1/virtual-accounts', body: { walletId: primaryWalletId } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('VIRTUAL_ACCOUNT_EXISTS');
    const lastEvent = (await eventsOf(t, customerId)).at(-1);
    expect(lastEvent).toMatchObject({ type: 'VIRTUAL_ACCOUNT_CREATED', data: { customerId, walletId: second.body.data.id } });
  });
});

import type { TestClient, TestContext } from '../harness.js';
import { approveIndividual, createBusinessWith, createReadyIndividual, relate, startKyc } from '../compliance/helpers.js';
import { multipart, samplePdf } from '../compliance/files.js';
import type { PreparedRequest, SecurityCase } from './types.js';

/** Security cases of the compliance, virtual-account and sandbox identity routes. */

async function uploadForm(customerId: string, documentType: string): Promise<Pick<PreparedRequest, 'rawBody' | 'contentType'>> {
  const form = multipart([
    { name: 'customerId', value: customerId },
    { name: 'documentType', value: documentType },
    { name: 'file', file: { content: await samplePdf(), fileName: 'document.pdf', contentType: 'application/pdf' } },
  ]);
  return { rawBody: form.body, contentType: form.contentType };
}

async function kycOnboarding(t: TestContext, client: TestClient): Promise<{ customerId: string; onboardingId: string }> {
  const customer = await createReadyIndividual(t, client);
  const started = await startKyc(t, customer.id, client);
  return { customerId: customer.id, onboardingId: started.onboardingId };
}

/** A business with a shareholder and a representative, ready for KYB. */
async function readyBusiness(t: TestContext, client: TestClient): Promise<string> {
  const business = await createBusinessWith(t, client);
  const person = await createReadyIndividual(t, client);
  await relate(t, business.id, person.id, 'SHAREHOLDER', client);
  await relate(t, business.id, person.id, 'REPRESENTATIVE', client);
  return business.id;
}

async function kybOnboarding(t: TestContext, client: TestClient): Promise<string> {
  const businessId = await readyBusiness(t, client);
  const response = await t.request({ method: 'POST', url: '/v1/compliance/kyb', key: client.key, body: { customerId: businessId } });
  if (response.status !== 201) throw new Error(`starting KYB failed: ${JSON.stringify(response.body)}`);
  return response.body.data.businessOnboardingId;
}

/** A second wallet of an approved customer: it may get a virtual account. */
async function walletOfApprovedCustomer(t: TestContext, client: TestClient): Promise<string> {
  const customer = await approveIndividual(t, client);
  const portfolioId: string = customer.portfolios[0].id;
  const wallet = await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/portfolios/${portfolioId}/wallets`, key: client.key, body: { name: 'Extra' } });
  if (wallet.status !== 201) throw new Error(`creating a wallet failed: ${JSON.stringify(wallet.body)}`);
  return wallet.body.data.id;
}

export const complianceSecurityCases: SecurityCase[] = [
  { method: 'GET', route: '/v1/compliance/settings', ownsResource: false, prepare: async () => ({ url: '/v1/compliance/settings' }) },
  {
    method: 'PATCH',
    route: '/v1/compliance/settings',
    ownsResource: false,
    prepare: async () => ({ url: '/v1/compliance/settings', body: { onboardingStrategy: 'STANDARD' } }),
  },
  {
    method: 'POST',
    route: '/v1/compliance/kyc',
    ownsResource: true,
    prepare: async (t, client) => ({ url: '/v1/compliance/kyc', body: { customerId: (await createReadyIndividual(t, client)).id } }),
  },
  {
    method: 'POST',
    route: '/v1/compliance/kyc/:onboardingId/rerun',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/compliance/kyc/${(await kycOnboarding(t, client)).onboardingId}/rerun` }),
  },
  {
    method: 'GET',
    route: '/v1/compliance/onboardings/:onboardingId',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/compliance/onboardings/${(await kycOnboarding(t, client)).onboardingId}` }),
  },
  {
    method: 'GET',
    route: '/v1/compliance/status/:customerId',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/compliance/status/${(await createReadyIndividual(t, client)).id}` }),
  },
  {
    method: 'POST',
    route: '/v1/compliance/onboardings/:onboardingId/source-of-funds',
    ownsResource: true,
    prepare: async (t, client) => ({
      url: `/v1/compliance/onboardings/${(await kycOnboarding(t, client)).onboardingId}/source-of-funds`,
      body: { sources: [{ type: 'SAVINGS' }] },
    }),
  },
  {
    method: 'POST',
    route: '/v1/compliance/upload-document',
    ownsResource: true,
    prepare: async (t, client) => ({ url: '/v1/compliance/upload-document', ...(await uploadForm((await createReadyIndividual(t, client)).id, 'DOC_FATCA_W9')) }),
  },
  {
    method: 'POST',
    route: '/v1/compliance/kyb',
    ownsResource: true,
    prepare: async (t, client) => ({ url: '/v1/compliance/kyb', body: { customerId: await readyBusiness(t, client) } }),
  },
  {
    method: 'GET',
    route: '/v1/compliance/business/status/:customerId',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/compliance/business/status/${(await createBusinessWith(t, client)).id}` }),
  },
  {
    method: 'POST',
    route: '/v1/compliance/business/upload-document',
    ownsResource: true,
    prepare: async (t, client) => ({
      url: '/v1/compliance/business/upload-document',
      ...(await uploadForm((await createBusinessWith(t, client)).id, 'DOC_BUSINESS_REGISTRATION')),
    }),
  },
  {
    method: 'POST',
    route: '/v1/compliance/business/onboardings/:onboardingId/source-of-funds',
    ownsResource: true,
    prepare: async (t, client) => ({
      url: `/v1/compliance/business/onboardings/${await kybOnboarding(t, client)}/source-of-funds`,
      body: { sources: [{ type: 'INCOME' }] },
    }),
  },
  {
    method: 'POST',
    route: '/v1/virtual-accounts',
    ownsResource: true,
    prepare: async (t, client) => ({ url: '/v1/virtual-accounts', body: { walletId: await walletOfApprovedCustomer(t, client) } }),
  },
  {
    method: 'POST',
    route: '/v1/baas/virtual-accounts',
    ownsResource: true,
    prepare: async (t, client) => ({ url: '/v1/baas/virtual-accounts', body: { walletId: await walletOfApprovedCustomer(t, client) } }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/onboardings/:onboardingId/outcome',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/sandbox/onboardings/${(await kycOnboarding(t, client)).onboardingId}/outcome`, body: { outcome: 'MANUAL_REVIEW' } }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/onboardings/:onboardingId/expire',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/sandbox/onboardings/${(await kycOnboarding(t, client)).onboardingId}/expire` }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/customers/:customerId/compliance-checks',
    ownsResource: true,
    prepare: async (t, client) => ({
      url: `/v1/sandbox/customers/${(await createReadyIndividual(t, client)).id}/compliance-checks`,
      body: { name: 'DOC_PROOF_OF_ADDRESS', passed: true },
    }),
  },
];

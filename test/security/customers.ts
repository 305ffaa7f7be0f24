import type { TestClient, TestContext } from '../harness.js';
import { address, businessBody, createBusiness, createIndividual, individualBody } from '../customers/fixtures.js';
import type { SecurityCase } from './types.js';

async function businessWithShareholder(t: TestContext, client: TestClient) {
  const business = await createBusiness(t, client);
  const person = await createIndividual(t, client);
  const response = await t.request({
    method: 'POST',
    url: `/v1/customers/business/${business.id}/related-persons`,
    key: client.key,
    body: { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: '10' },
  });
  if (response.status !== 201) throw new Error(`adding a relation failed: ${JSON.stringify(response.body)}`);
  return { business, person };
}

const relationsUrl = (businessId: string) => `/v1/customers/business/${businessId}/related-persons`;

export const customerSecurityCases: SecurityCase[] = [
  { method: 'POST', route: '/v1/customers/individual', ownsResource: false, prepare: async () => ({ url: '/v1/customers/individual', body: individualBody() }) },
  { method: 'POST', route: '/v1/customers', ownsResource: false, prepare: async () => ({ url: '/v1/customers', body: individualBody() }) },
  { method: 'POST', route: '/v1/customers/business', ownsResource: false, prepare: async () => ({ url: '/v1/customers/business', body: businessBody() }) },
  { method: 'GET', route: '/v1/customers', ownsResource: false, prepare: async () => ({ url: '/v1/customers' }) },
  { method: 'GET', route: '/v1/customers/membership-programs', ownsResource: false, prepare: async () => ({ url: '/v1/customers/membership-programs' }) },
  {
    method: 'GET',
    route: '/v1/customers/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/customers/${(await createIndividual(t, client)).id}` }),
  },
  {
    method: 'PATCH',
    route: '/v1/customers/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/customers/${(await createIndividual(t, client)).id}`, body: { billingAddress: address, kyc: { occupation: '15' } } }),
  },
  {
    method: 'PATCH',
    route: '/v1/customers/business/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/customers/business/${(await createBusiness(t, client)).id}`, body: { kyb: { naicsCode: '52' } } }),
  },
  {
    method: 'POST',
    route: '/v1/customers/business/:businessUserId/related-persons',
    ownsResource: true,
    prepare: async (t, client) => {
      const business = await createBusiness(t, client);
      const person = await createIndividual(t, client);
      return { url: relationsUrl(business.id), body: { userId: person.id, role: 'REPRESENTATIVE', representingRange: { startDate: '2025-01-01' } } };
    },
  },
  {
    method: 'GET',
    route: '/v1/customers/business/:businessUserId/related-persons',
    ownsResource: true,
    prepare: async (t, client) => ({ url: relationsUrl((await businessWithShareholder(t, client)).business.id) }),
  },
  {
    method: 'PATCH',
    route: '/v1/customers/business/:businessUserId/related-persons',
    ownsResource: true,
    prepare: async (t, client) => {
      const { business, person } = await businessWithShareholder(t, client);
      return { url: relationsUrl(business.id), body: { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: '20' } };
    },
  },
  {
    method: 'DELETE',
    route: '/v1/customers/business/:businessUserId/related-persons',
    ownsResource: true,
    prepare: async (t, client) => {
      const { business, person } = await businessWithShareholder(t, client);
      return { url: relationsUrl(business.id), body: { userId: person.id, role: 'SHAREHOLDER' } };
    },
  },
  {
    method: 'GET',
    route: '/v1/customers/:customerId/portfolios',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/customers/${(await createIndividual(t, client)).id}/portfolios` }),
  },
  {
    method: 'POST',
    route: '/v1/customers/:customerId/portfolios',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/customers/${(await createIndividual(t, client)).id}/portfolios`, body: { name: 'Savings' } }),
  },
  {
    method: 'GET',
    route: '/v1/customers/:customerId/portfolios/:portfolioId',
    ownsResource: true,
    prepare: async (t, client) => {
      const customer = await createIndividual(t, client);
      return { url: `/v1/customers/${customer.id}/portfolios/${customer.portfolios[0].id}` };
    },
  },
  {
    method: 'POST',
    route: '/v1/customers/:customerId/portfolios/:portfolioId/wallets',
    ownsResource: true,
    prepare: async (t, client) => {
      const customer = await createIndividual(t, client);
      return { url: `/v1/customers/${customer.id}/portfolios/${customer.portfolios[0].id}/wallets`, body: { name: 'Travel' } };
    },
  },
  {
    method: 'GET',
    route: '/v1/wallets',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/wallets?customerId=${(await createIndividual(t, client)).id}` }),
  },
  {
    method: 'GET',
    route: '/v1/wallets/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/wallets/${(await createIndividual(t, client)).portfolios[0].wallets[0]}` }),
  },
];

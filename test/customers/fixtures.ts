import type { TestClient, TestContext } from '../harness.js';

/** Request bodies and helpers shared by the customers tests. */

let counter = 0;
export function uniqueEmail(prefix = 'person'): string {
  counter += 1;
  return `${prefix}.${Date.now().toString(36)}.${counter}@example.com`;
}

export const address = { street1: '350 Fifth Avenue', cityCounty: 'New York', stateRegion: 'NY', zip: '10118', countryCode: 'US' };

export function individualBody(overrides: Record<string, unknown> = {}, kyc: Record<string, unknown> = {}) {
  return {
    email: uniqueEmail(),
    phoneNumber: '212 555 0123',
    phoneCountryCode: '+1',
    kyc: {
      firstName: 'Ada',
      lastName: 'Lovelace',
      birthDate: '1990-12-10',
      nationality: 'US',
      documentSsn: '123-45-6789',
      ...kyc,
    },
    ...overrides,
  };
}

export function businessBody(overrides: Record<string, unknown> = {}, kyb: Record<string, unknown> = {}) {
  return {
    email: uniqueEmail('business'),
    phoneNumber: '212 555 0188',
    phoneCountryCode: '1',
    kyb: {
      legalName: 'Analytical Engines LLC',
      structureType: 'LLC',
      naicsCode: '5415',
      taxInformation: { taxId: '12-3456789', taxIdCountry: 'US' },
      identification: { type: 'REGISTRATION_NUMBER', number: '5512345', issuingCountry: 'US' },
      mainAddress: { street1: '1 Market Street', cityCounty: 'San Francisco', stateRegion: 'CA', zip: '94105', countryCode: 'US' },
      ...kyb,
    },
    ...overrides,
  };
}

// Test helpers read response bodies freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function createIndividual(t: TestContext, client: TestClient = t.clientA, overrides: Record<string, unknown> = {}): Promise<any> {
  const response = await t.request({ method: 'POST', url: '/v1/customers/individual', key: client.key, body: individualBody(overrides) });
  if (response.status !== 201) throw new Error(`creating an individual failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function createBusiness(t: TestContext, client: TestClient = t.clientA, overrides: Record<string, unknown> = {}): Promise<any> {
  const response = await t.request({ method: 'POST', url: '/v1/customers/business', key: client.key, body: businessBody(overrides) });
  if (response.status !== 201) throw new Error(`creating a business failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/** Counts rows of a table for the client, to show that a refused request stored nothing. */
export async function countRows(t: TestContext, table: 'customers' | 'portfolios' | 'wallets' | 'events' | 'business_person_relations', clientId = t.clientA.id): Promise<number> {
  const row = await t.deps.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { address, businessBody, countRows, createBusiness, createIndividual, uniqueEmail } from '../../../test/customers/fixtures.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function expectRefusedBusiness(body: unknown, status: number, field: string) {
  const before = await countRows(t, 'customers');
  const response = await t.request({ method: 'POST', url: '/v1/customers/business', body });
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.details?.map((detail: { field: string }) => detail.field)).toContain(field);
  expect(await countRows(t, 'customers')).toBe(before);
  return response;
}

describe('POST /v1/customers/business', () => {
  describe('201', () => {
    it('creates a LEGAL customer with its KYB data, default portfolio and primary wallet', async () => {
      const body = businessBody({ billingAddress: address }, { tradeName: 'Engines', incorporationDate: '2019-04-01', incorporationCountry: 'US', website: 'https://engines.example.com' });
      const response = await t.request({ method: 'POST', url: '/v1/customers/business', body });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      const customer = response.body.data;
      expect(customer.type).toBe('LEGAL');
      expect(customer).not.toHaveProperty('kyc');
      expect(customer).not.toHaveProperty('name');
      expect(customer.kyb).toEqual({
        legalName: 'Analytical Engines LLC',
        tradeName: 'Engines',
        structureType: 'LLC',
        naicsCode: '5415',
        incorporationDate: '2019-04-01',
        incorporationCountry: 'US',
        website: 'https://engines.example.com',
        taxInformation: { taxId: '12-3456789', taxIdCountry: 'US' },
        identification: { type: 'REGISTRATION_NUMBER', number: '5512345', issuingCountry: 'US' },
        mainAddress: { street1: '1 Market Street', street2: null, cityCounty: 'San Francisco', stateRegion: 'CA', zip: '94105', countryCode: 'US' },
      });
      expect(customer.billingAddress).toEqual({ ...address, street2: null });
      expect(customer.portfolios).toHaveLength(1);
      expect(customer.portfolios[0].wallets).toHaveLength(1);

      const events = await t.request({ url: '/v1/events?type=CUSTOMER_CREATED&limit=200' });
      expect(events.body.data.some((event: { data: { customerId: string } }) => event.data.customerId === customer.id)).toBe(true);
    });

    it('needs only an email: KYB data is optional', async () => {
      const response = await t.request({ method: 'POST', url: '/v1/customers/business', body: { email: uniqueEmail('bare') } });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body.data.kyb.legalName).toBeNull();
      expect(response.body.data.phoneNumber).toBeNull();
    });

    it('takes both phone fields null as no phone (as a PATCH clears it); one null with the other given is refused', async () => {
      const cleared = await t.request({ method: 'POST', url: '/v1/customers/business', body: { email: uniqueEmail('nullphone'), phoneNumber: null, phoneCountryCode: null } });
      expect(cleared.status, JSON.stringify(cleared.body)).toBe(201);
      expect(cleared.body.data.phoneNumber).toBeNull();
      const half = await t.request({ method: 'POST', url: '/v1/customers/business', body: { email: uniqueEmail('halfphone'), phoneNumber: '212 555 0188', phoneCountryCode: null } });
      expect(half.status).toBe(400);
      expect(half.body.details[0].field).toBe('phoneCountryCode');
    });
  });

  describe('400', () => {
    it('refuses a missing email', async () => {
      const { email: _email, ...body } = businessBody();
      await expectRefusedBusiness(body, 400, 'email');
    });

    it.each([
      [{ naicsCode: '5' }, 'kyb.naicsCode'],
      [{ naicsCode: '5415a' }, 'kyb.naicsCode'],
      [{ naicsCode: '1234567' }, 'kyb.naicsCode'],
      [{ naicsCode: '99' }, 'kyb.naicsCode'],
      [{ naicsCode: '00' }, 'kyb.naicsCode'],
      [{ naicsCode: '191000' }, 'kyb.naicsCode'],
      [{ structureType: 'PARTNERSHIP_ISH' }, 'kyb.structureType'],
      [{ incorporationCountry: 'USA' }, 'kyb.incorporationCountry'],
      [{ incorporationDate: '2023-02-30' }, 'kyb.incorporationDate'],
      [{ incorporationDate: '2030-01-01' }, 'kyb.incorporationDate'],
      [{ taxInformation: { taxId: '12-3456789', taxIdCountry: 'us' } }, 'kyb.taxInformation.taxIdCountry'],
      [{ identification: { type: 'PASSPORT', number: '1', issuingCountry: 'US' } }, 'kyb.identification.type'],
      [{ mainAddress: { ...address, street1: 'z'.repeat(10_000) } }, 'kyb.mainAddress.street1'],
      [{ legalName: undefined }, 'kyb.legalName'],
      [{ website: 'javascript:alert(1)' }, 'kyb.website'],
      [{ website: 'ftp://engines.example.com' }, 'kyb.website'],
      [{ website: 'https://:::' }, 'kyb.website'],
      [{ website: 'https://@' }, 'kyb.website'],
      [{ website: 'https://engines.example.com:99999' }, 'kyb.website'],
      [{ website: 'https://engines.example.com:0' }, 'kyb.website'],
      [{ website: 'https://user:secret@engines.example.com' }, 'kyb.website'],
      [{ website: 'https://localhost' }, 'kyb.website'],
      [{ website: 'https://192.0.2.10' }, 'kyb.website'],
      [{ website: 'https://@engines.example.com' }, 'kyb.website'],
      [{ website: 'https://:@engines.example.com/' }, 'kyb.website'],
      [{ website: 'https://engines%2Eexample.com' }, 'kyb.website'],
      [{ website: 'https://-engines.example.com' }, 'kyb.website'],
      [{ website: 'https://engines.example.com.' }, 'kyb.website'],
      [{ legalName: '\u200b' }, 'kyb.legalName'],
      [{ taxInformation: { taxId: '12\n34', taxIdCountry: 'US' } }, 'kyb.taxInformation.taxId'],
    ])('refuses the KYB data %j', async (kyb, field) => {
      await expectRefusedBusiness(businessBody({}, kyb), 400, field);
    });

    it('refuses a phone number without its calling code, and an unknown program', async () => {
      const { phoneCountryCode: _code, ...withoutCode } = businessBody();
      await expectRefusedBusiness(withoutCode, 400, 'phoneCountryCode');
      await expectRefusedBusiness(businessBody({ membershipProgram: 'Enterprise' }), 400, 'membershipProgram');
    });
  });

  describe('409', () => {
    it('refuses an email already used by any customer of the client, individual or business', async () => {
      const person = await createIndividual(t);
      const response = await expectRefusedBusiness(businessBody({ email: person.email }), 409, 'email');
      expect(response.body.code).toBe('DUPLICATE_EMAIL');
    });
  });
});

describe('PATCH /v1/customers/business/:id', () => {
  describe('200', () => {
    it('takes a website with a port, a path and an internationalised domain as given, and refuses one that is no URL of a domain', async () => {
      const business = await createBusiness(t);
      const website = 'https://xn--bcher-kva.example.com:8443/About?lang=de';
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { kyb: { website } } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.data.kyb.website).toBe(website);
      const refused = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { kyb: { website: 'https://a:99999' } } });
      expect(refused.status).toBe(400);
      expect(refused.body.details).toEqual([{ field: 'kyb.website', message: 'must be an absolute http or https URL' }]);
    });

    it('changes only the KYB fields sent and keeps the rest', async () => {
      const business = await createBusiness(t);
      const response = await t.request({
        method: 'PATCH',
        url: `/v1/customers/business/${business.id}`,
        body: { kyb: { naicsCode: '52', mainAddress: address }, deliveryAddress: address, membershipProgram: 'Premium' },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.data.kyb).toEqual({ ...business.kyb, naicsCode: '52', mainAddress: { ...address, street2: null } });
      expect(response.body.data.deliveryAddress).toEqual({ ...address, street2: null });
      expect(response.body.data.membershipProgramId).not.toBe(business.membershipProgramId);
    });

    it('clears the phone with both fields null (a business\'s phone is optional: both or neither)', async () => {
      const business = await createBusiness(t);
      const set = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { phoneNumber: '212 555 0188', phoneCountryCode: '1' } });
      expect(set.body.data).toMatchObject({ phoneNumber: '2125550188', phoneCountryCode: '1' });
      const half = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { phoneNumber: null } });
      expect(half.status).toBe(400);
      expect(half.body.details[0].field).toBe('phoneNumber');
      const cleared = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { phoneNumber: null, phoneCountryCode: null } });
      expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
      expect(cleared.body.data).toMatchObject({ phoneNumber: null, phoneCountryCode: null });
    });
  });

  describe('400', () => {
    it('refuses a change of type', async () => {
      const business = await createBusiness(t);
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { type: 'PRIVATE' } });
      expect(response.status).toBe(400);
      expect(response.body.details[0].field).toBe('type');
    });

    it('refuses an individual on the business route', async () => {
      const person = await createIndividual(t);
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/business/${person.id}`, body: { billingAddress: address } });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('WRONG_CUSTOMER_TYPE');
      expect(response.body.message).toContain('PATCH /v1/customers/:id');
      expect(response.body.details).toEqual([{ field: 'id', message: 'is an individual (PRIVATE) customer; update it with PATCH /v1/customers/:id' }]);
    });

    it('refuses a bad NAICS code and stores nothing', async () => {
      const business = await createBusiness(t);
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { kyb: { naicsCode: '1' } } });
      expect(response.status).toBe(400);
      expect((await t.request({ url: `/v1/customers/${business.id}` })).body.data).toEqual(business);
    });
  });

  describe('404', () => {
    it('answers another client\'s business like a missing one', async () => {
      const other = await createBusiness(t, t.clientB);
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/business/${other.id}`, body: { kyb: { naicsCode: '52' } } });
      expect(response.status).toBe(404);
      expect((await t.request({ method: 'PATCH', url: '/v1/customers/business/nope', body: { kyb: { naicsCode: '52' } } })).status).toBe(404);
    });
  });

  describe('409', () => {
    it('freezes the KYB data once the onboarding is decided', async () => {
      const business = await createBusiness(t);
      await t.deps.db.updateTable('customers').set({ onboarding_status: 'DENIED_COMPLIANCE' }).where('id', '=', business.id).execute();
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { kyb: { legalName: 'Other Name LLC' } } });
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('INVALID_STATE');
      expect(response.body.message).toContain('DENIED_COMPLIANCE');
      const billing = await t.request({ method: 'PATCH', url: `/v1/customers/business/${business.id}`, body: { billingAddress: address } });
      expect(billing.status).toBe(200);
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { address, countRows, createBusiness, createIndividual, individualBody, uniqueEmail } from '../../../test/customers/fixtures.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const customerFields = [
  'id',
  'type',
  'email',
  'phoneNumber',
  'phoneCountryCode',
  'onboardingId',
  'membershipProgramId',
  'kyc',
  'billingAddress',
  'deliveryAddress',
  'portfolios',
  'createdAt',
  'updatedAt',
].sort();

/** Sends a create that must be refused, and checks that nothing at all was stored. */
async function expectRefusedCreate(body: unknown, status: number, field: string, url = '/v1/customers/individual') {
  const before = await Promise.all([countRows(t, 'customers'), countRows(t, 'portfolios'), countRows(t, 'wallets'), countRows(t, 'events')]);
  const response = await t.request({ method: 'POST', url, body });
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.details?.map((detail: { field: string }) => detail.field)).toContain(field);
  const after = await Promise.all([countRows(t, 'customers'), countRows(t, 'portfolios'), countRows(t, 'wallets'), countRows(t, 'events')]);
  expect(after).toEqual(before);
  return response;
}

describe('POST /v1/customers/individual', () => {
  describe('201', () => {
    it('creates a PRIVATE customer with exactly the specified fields, a default portfolio and a primary wallet', async () => {
      const body = individualBody(
        { billingAddress: { ...address, street2: 'Floor 3' }, deliveryAddress: address },
        {
          middleName: 'King',
          sex: 'FEMALE',
          documentPassport: 'X1234567',
          documentIdCard: 'ID-99',
          documentLicense: 'D123 456',
          taxIdCountry: 'GB',
          occupation: '15',
          ipAddress: '2001:db8::1',
          mainAddress: address,
        },
      );
      const response = await t.request({ method: 'POST', url: '/v1/customers/individual', body });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      const customer = response.body.data;
      expect(Object.keys(customer).sort()).toEqual(customerFields);
      expect(customer).not.toHaveProperty('name');
      expect(customer).not.toHaveProperty('bankingInfo');
      expect(customer.type).toBe('PRIVATE');
      expect(customer.email).toBe(body.email);
      expect(customer.phoneNumber).toBe('2125550123');
      expect(customer.phoneCountryCode).toBe('1');
      expect(customer.onboardingId).toBeNull();
      expect(customer.kyc).toEqual({
        firstName: 'Ada',
        middleName: 'King',
        lastName: 'Lovelace',
        sex: 'FEMALE',
        birthDate: '1990-12-10',
        documentSsn: '***-**-6789',
        documentIdCard: '*D-99',
        documentLicense: '**** 456',
        documentPassport: '****4567',
        nationality: 'US',
        taxIdCountry: 'GB',
        occupation: '15',
        ipAddress: '2001:db8::1',
        mainAddress: { ...address, street2: null },
      });
      expect(customer.billingAddress).toEqual({ ...address, street2: 'Floor 3' });
      expect(customer.deliveryAddress).toEqual({ ...address, street2: null });
      expect(customer.portfolios).toHaveLength(1);
      const [portfolio] = customer.portfolios;
      expect(portfolio).toMatchObject({ customerId: customer.id, name: 'Default', default: true });
      expect(portfolio.wallets).toHaveLength(1);

      const wallet = await t.request({ url: `/v1/wallets/${portfolio.wallets[0]}` });
      expect(wallet.status).toBe(200);
      expect(wallet.body.data).toMatchObject({ customerId: customer.id, portfolioId: portfolio.id, primary: true, virtualAccount: null });
    });

    it('uses the default membership program when none is named, and accepts a program by name or id', async () => {
      const programs = (await t.request({ url: '/v1/customers/membership-programs' })).body.data;
      const standard = programs.find((program: { default: boolean }) => program.default);
      const premium = programs.find((program: { name: string }) => program.name === 'Premium');
      expect(standard.name).toBe('Standard');

      expect((await createIndividual(t)).membershipProgramId).toBe(standard.id);
      expect((await createIndividual(t, t.clientA, { membershipProgram: 'premium' })).membershipProgramId).toBe(premium.id);
      expect((await createIndividual(t, t.clientA, { membershipProgram: premium.id })).membershipProgramId).toBe(premium.id);
    });

    it('records CUSTOMER_CREATED with the customer id and the trace id of the request', async () => {
      const response = await t.request({ method: 'POST', url: '/v1/customers/individual', body: individualBody(), headers: { 'x-trace-id': 'trace-customer-created' } });
      expect(response.status).toBe(201);
      const events = await t.request({ url: '/v1/events?type=CUSTOMER_CREATED&limit=200' });
      const event = events.body.data.find((item: { data: { customerId: string } }) => item.data.customerId === response.body.data.id);
      expect(event?.data).toEqual({ customerId: response.body.data.id, traceId: 'trace-customer-created' });
    });

    it('serves the earlier form POST /v1/customers with the same behaviour', async () => {
      const response = await t.request({ method: 'POST', url: '/v1/customers', body: individualBody() });
      expect(response.status).toBe(201);
      expect(response.body.data.type).toBe('PRIVATE');
      expect(response.body.data.portfolios).toHaveLength(1);
    });

    it('stores the SSN and document numbers encrypted, never in clear', async () => {
      const customer = await createIndividual(t, t.clientA, { kyc: { ...individualBody().kyc, documentSsn: '321-54-9876', documentPassport: 'P7654321' } });
      const row = await t.deps.db.selectFrom('customers').selectAll().where('id', '=', customer.id).executeTakeFirstOrThrow();
      const text = JSON.stringify(row);
      expect(text).not.toContain('321-54-9876');
      expect(text).not.toContain('321549876');
      expect(text).not.toContain('P7654321');
      expect(row.ssn_ciphertext).toMatch(/^v1\./);
      expect(row.ssn_last4).toBe('9876');
      expect(customer.kyc.documentSsn).toBe('***-**-9876');
      expect(customer.kyc.documentPassport).toBe('****4321');
    });

    it('accepts an SSN without dashes and a phone code without +', async () => {
      const customer = await createIndividual(t, t.clientA, { phoneCountryCode: '44', phoneNumber: '020 7183 8750', kyc: { ...individualBody().kyc, documentSsn: '123456789' } });
      expect(customer.kyc.documentSsn).toBe('***-**-6789');
      expect(customer.phoneCountryCode).toBe('44');
      expect(customer.phoneNumber).toBe('2071838750');
    });
  });

  describe('400', () => {
    it('names each missing required field', async () => {
      const response = await expectRefusedCreate({ kyc: { firstName: 'Ada' } }, 400, 'email');
      const fields = response.body.details.map((detail: { field: string }) => detail.field);
      expect(fields).toEqual(expect.arrayContaining(['email', 'phoneNumber', 'phoneCountryCode', 'kyc.lastName', 'kyc.birthDate', 'kyc.nationality']));
      expect(response.body.code).toBe('VALIDATION_ERROR');
    });

    it.each([
      ['USA', 'kyc.nationality'],
      ['us', 'kyc.nationality'],
      ['ZZ', 'kyc.nationality'],
    ])('refuses the country %s', async (country, field) => {
      await expectRefusedCreate(individualBody({}, { nationality: country }), 400, field);
    });

    it('refuses bad countries in tax and address fields too', async () => {
      await expectRefusedCreate(individualBody({}, { taxIdCountry: 'usa' }), 400, 'kyc.taxIdCountry');
      await expectRefusedCreate(individualBody({ billingAddress: { ...address, countryCode: 'US ' } }), 400, 'billingAddress.countryCode');
    });

    it.each([
      ['2023-02-30', 'a day that does not exist'],
      ['2026-03-02', 'a date in the future'],
      ['2026-03-01', 'today'],
      ['1899-12-31', 'before 1900'],
      ['10/12/1990', 'another format'],
    ])('refuses the birth date %s (%s)', async (birthDate) => {
      await expectRefusedCreate(individualBody({}, { birthDate }), 400, 'kyc.birthDate');
    });

    it.each(['99', 'Other', '00', '1'])('refuses the occupation %s', async (occupation) => {
      await expectRefusedCreate(individualBody({}, { occupation }), 400, 'kyc.occupation');
    });

    it.each(['000-12-3456', '666-12-3456', '900-12-3456', '123-00-4567', '123-45-0000', '12-345-6789', '123-45-678', '123-456789', '12345-6789'])('refuses the SSN %s without echoing it', async (ssn) => {
      const response = await expectRefusedCreate(individualBody({}, { documentSsn: ssn }), 400, 'kyc.documentSsn');
      expect(JSON.stringify(response.body)).not.toContain(ssn);
    });

    it('refuses a membership program that does not exist', async () => {
      await expectRefusedCreate(individualBody({ membershipProgram: 'Platinum' }), 400, 'membershipProgram');
      await expectRefusedCreate(individualBody({ membershipProgram: '0196a8f0-0000-7000-8000-000000000000' }), 400, 'membershipProgram');
    });

    it('refuses a 10,000-character street', async () => {
      await expectRefusedCreate(individualBody({ billingAddress: { ...address, street1: 'x'.repeat(10_000) } }), 400, 'billingAddress.street1');
    });

    it('refuses an address without its required fields', async () => {
      const { zip: _zip, ...withoutZip } = address;
      await expectRefusedCreate(individualBody({}, { mainAddress: withoutZip }), 400, 'kyc.mainAddress.zip');
      await expectRefusedCreate(individualBody({ deliveryAddress: { ...address, cityCounty: '   ' } }), 400, 'deliveryAddress.cityCounty');
    });

    it('refuses malformed email, phone, calling code and IP address', async () => {
      await expectRefusedCreate(individualBody({ email: 'not-an-email' }), 400, 'email');
      await expectRefusedCreate(individualBody({ email: `${'a'.repeat(250)}@example.com` }), 400, 'email');
      await expectRefusedCreate(individualBody({ phoneCountryCode: '12345' }), 400, 'phoneCountryCode');
      await expectRefusedCreate(individualBody({ phoneCountryCode: '999' }), 400, 'phoneCountryCode');
      await expectRefusedCreate(individualBody({ phoneNumber: '12' }), 400, 'phoneNumber');
      await expectRefusedCreate(individualBody({ phoneNumber: 'call me' }), 400, 'phoneNumber');
      await expectRefusedCreate(individualBody({}, { ipAddress: '300.1.1.1' }), 400, 'kyc.ipAddress');
      await expectRefusedCreate(individualBody({}, { ipAddress: 'fe80::1%eth0' }), 400, 'kyc.ipAddress');
    });

    it.each([
      ['a line break in a name', { firstName: 'Ada\r\nX-Injected: 1' }, 'kyc.firstName'],
      ['an escape sequence in a name', { lastName: 'Love\u001b[2Jlace' }, 'kyc.lastName'],
      ['a city of one zero-width space', { mainAddress: { ...address, cityCounty: '\u200b' } }, 'kyc.mainAddress.cityCounty'],
      ['a state of one soft hyphen', { mainAddress: { ...address, stateRegion: '\u00ad' } }, 'kyc.mainAddress.stateRegion'],
      ['a bell in a street', { mainAddress: { ...address, street1: '1 Main St\u0007' } }, 'kyc.mainAddress.street1'],
      ['a right-to-left override in a middle name', { middleName: 'A\u202eB' }, 'kyc.middleName'],
      // Letters and symbols that show as nothing, and a combining mark alone, are not a name either.
      ['a first name of one Hangul filler', { firstName: '\u3164' }, 'kyc.firstName'],
      ['a last name of one braille blank', { lastName: '\u2800' }, 'kyc.lastName'],
      ['a first name of a combining accent alone', { firstName: '\u0301' }, 'kyc.firstName'],
      ['a city of halfwidth Hangul fillers', { mainAddress: { ...address, cityCounty: '\uffa0\uffa0' } }, 'kyc.mainAddress.cityCounty'],
    ])('refuses %s, naming the field, and stores nothing', async (_name, kyc, field) => {
      const response = await expectRefusedCreate(individualBody({}, kyc), 400, field);
      expect(response.body.code).toBe('VALIDATION_ERROR');
    });

    it('refuses a Unicode noncharacter in a name, naming the field and the code point, and takes a private-use character', async () => {
      const response = await expectRefusedCreate(individualBody({}, { firstName: 'Ada\uffff' }), 400, 'kyc.firstName');
      expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'kyc.firstName', message: expect.stringContaining('(U+FFFF)') }] });
      const privateUse = await t.request({ method: 'POST', url: '/v1/customers/individual', body: individualBody({}, { lastName: 'Ch\ue000n' }) });
      expect(privateUse.status, JSON.stringify(privateUse.body)).toBe(201);
    });

    it('names only the offending field inside a nullable object, never "must be null" for the object', async () => {
      const wrongType = await expectRefusedCreate(individualBody({}, { mainAddress: { ...address, zip: 10118 } }), 400, 'kyc.mainAddress.zip');
      expect(wrongType.body.details).toEqual([{ field: 'kyc.mainAddress.zip', message: 'must be string' }]);
      const unknown = await expectRefusedCreate(individualBody({ billingAddress: { ...address, country: 'US' } }), 400, 'billingAddress.country');
      expect(unknown.body.details).toEqual([{ field: 'billingAddress.country', message: 'is not a known field' }]);
      const { zip: _zip, ...withoutZip } = address;
      const missing = await expectRefusedCreate(individualBody({ billingAddress: withoutZip }), 400, 'billingAddress.zip');
      expect(missing.body.details).toEqual([{ field: 'billingAddress.zip', message: 'is required' }]);
      // A nullable value that is not an object still says null is allowed.
      const sex = await expectRefusedCreate(individualBody({}, { sex: 'OTHER' }), 400, 'kyc.sex');
      expect(sex.body.details[0].message).toContain('null');
    });

    it('takes names and addresses in any script, accents included', async () => {
      const response = await t.request({ method: 'POST', url: '/v1/customers/individual', body: individualBody({}, { firstName: 'Zoë', lastName: 'Ångström-李', mainAddress: { ...address, cityCounty: 'São Paulo' } }) });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body.data.kyc).toMatchObject({ firstName: 'Zoë', lastName: 'Ångström-李' });
    });

    it('refuses unknown fields, a derived name and a JSON number where text is expected', async () => {
      await expectRefusedCreate({ ...individualBody(), name: 'Ada Lovelace' }, 400, 'name');
      await expectRefusedCreate(individualBody({ phoneCountryCode: 1 }), 400, 'phoneCountryCode');
      await expectRefusedCreate(individualBody({}, { sex: 'OTHER' }), 400, 'kyc.sex');
    });
  });

  describe('409', () => {
    it('refuses an email address already in use, whatever its letter case', async () => {
      const email = uniqueEmail('dup');
      await createIndividual(t, t.clientA, { email });
      const response = await expectRefusedCreate(individualBody({ email: email.toUpperCase() }), 409, 'email');
      expect(response.body.code).toBe('DUPLICATE_EMAIL');
      expect(response.body.message).toContain('already exists');
    });

    it('treats emails per client: another client may use the same address', async () => {
      const email = uniqueEmail('shared');
      await createIndividual(t, t.clientA, { email });
      await createIndividual(t, t.clientB, { email });
    });

    it('answers one of two simultaneous creates with the same email with 409', async () => {
      const email = uniqueEmail('race');
      const responses = await Promise.all([1, 2].map(() => t.request({ method: 'POST', url: '/v1/customers/individual', body: individualBody({ email }) })));
      expect(responses.map((response) => response.status).sort()).toEqual([201, 409]);
    });
  });
});

describe('GET /v1/customers/:id', () => {
  describe('200', () => {
    it('returns the customer; bankingInfo appears only once the primary wallet has a virtual account', async () => {
      const customer = await createIndividual(t);
      const plain = await t.request({ url: `/v1/customers/${customer.id}` });
      expect(plain.status).toBe(200);
      expect(plain.body.data).toEqual(customer);
      expect(plain.body.data).not.toHaveProperty('bankingInfo');

      const walletId = customer.portfolios[0].wallets[0];
      await t.deps.db.updateTable('wallets').set({ virtual_account_number: '709876543210' }).where('id', '=', walletId).execute();
      const withAccount = await t.request({ url: `/v1/customers/${customer.id}` });
      expect(withAccount.body.data.bankingInfo).toEqual({ virtual_account_number: '709876543210' });
      const listed = await t.request({ url: `/v1/customers?email=${encodeURIComponent(customer.email)}` });
      expect(listed.body.data[0]).not.toHaveProperty('bankingInfo');

      await t.deps.db.updateTable('wallets').set({ vrn: '729876543210' }).where('id', '=', walletId).execute();
      const withVrn = await t.request({ url: `/v1/customers/${customer.id}` });
      expect(withVrn.body.data.bankingInfo).toEqual({ virtual_account_number: '709876543210', virtual_reference_number: '729876543210' });
      const wallet = await t.request({ url: `/v1/wallets/${walletId}` });
      expect(wallet.body.data.virtualAccount).toEqual({ virtualAccountNumber: '709876543210', dedicatedAccountNumber: null, vrn: '729876543210' });
      // Only GET /v1/customers/:id carries it (specification): not the answer of a PATCH.
      const patched = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { membershipProgram: 'Premium' } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body.data).not.toHaveProperty('bankingInfo');
    });
  });

  describe('404', () => {
    it('answers a missing id, a malformed id and another client\'s id alike', async () => {
      const other = await createIndividual(t, t.clientB);
      for (const id of ['0196a8f0-0000-7000-8000-000000000000', 'not-a-uuid', other.id]) {
        const response = await t.request({ url: `/v1/customers/${id}` });
        expect(response.status).toBe(404);
        expect(response.body).toMatchObject({ code: 'NOT_FOUND', message: 'Customer not found' });
      }
    });
  });
});

describe('GET /v1/customers', () => {
  it('filters by email (any case) and type, newest first', async () => {
    // Ids are UUIDv7 from the injected clock: move it so the two are ordered by time, not by chance.
    t.clock.advance(5);
    const person = await createIndividual(t);
    t.clock.advance(5);
    const business = await createBusiness(t);
    const byEmail = await t.request({ url: `/v1/customers?email=${encodeURIComponent(person.email.toUpperCase())}` });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body.data.map((customer: { id: string }) => customer.id)).toEqual([person.id]);
    expect(byEmail.body.pagination).toEqual({ totalResults: 1, totalResultsExact: true, hasMoreResults: false, nextStartAfterId: null });

    const legal = await t.request({ url: '/v1/customers?type=LEGAL&limit=200' });
    expect(legal.body.data.every((customer: { type: string }) => customer.type === 'LEGAL')).toBe(true);
    expect(legal.body.data[0].id).toBe(business.id);
    expect(legal.body.data[0]).not.toHaveProperty('kyc');

    const all = await t.request({ url: '/v1/customers?limit=2' });
    expect(all.body.data[0].id).toBe(business.id);
    expect(all.body.data[1].id).toBe(person.id);
  });

  it('filters by creation time', async () => {
    t.clock.advance(60_000);
    const since = t.clock.now().toISOString();
    const recent = await createIndividual(t);
    const response = await t.request({ url: `/v1/customers?createdAfter=${since}` });
    expect(response.body.data.map((customer: { id: string }) => customer.id)).toEqual([recent.id]);
    const before = await t.request({ url: `/v1/customers?createdBefore=${since}&limit=200` });
    expect(before.body.data.map((customer: { id: string }) => customer.id)).not.toContain(recent.id);
  });

  it('never lists another client\'s customers', async () => {
    const other = await createIndividual(t, t.clientB);
    const response = await t.request({ url: `/v1/customers?email=${encodeURIComponent(other.email)}` });
    expect(response.body.data).toEqual([]);
  });

  it('refuses an unknown type or query parameter with 400', async () => {
    expect((await t.request({ url: '/v1/customers?type=BUSINESS' })).status).toBe(400);
    expect((await t.request({ url: '/v1/customers?name=Ada' })).status).toBe(400);
  });
});

describe('PATCH /v1/customers/:id', () => {
  describe('200', () => {
    it('changes only the fields sent, including addresses and the membership program', async () => {
      const customer = await createIndividual(t);
      t.clock.advance(1000);
      const response = await t.request({
        method: 'PATCH',
        url: `/v1/customers/${customer.id}`,
        body: { membershipProgram: 'Premium', billingAddress: address, kyc: { occupation: '13', lastName: 'Byron' } },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const updated = response.body.data;
      const programs = (await t.request({ url: '/v1/customers/membership-programs' })).body.data;
      expect(updated.membershipProgramId).toBe(programs.find((program: { name: string }) => program.name === 'Premium').id);
      expect(updated.billingAddress).toEqual({ ...address, street2: null });
      expect(updated.kyc).toEqual({ ...customer.kyc, occupation: '13', lastName: 'Byron' });
      expect(updated.email).toBe(customer.email);
      expect(updated.updatedAt).not.toBe(customer.updatedAt);
      expect(updated.createdAt).toBe(customer.createdAt);

      const cleared = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { billingAddress: null, kyc: { occupation: null, documentSsn: null } } });
      expect(cleared.body.data.billingAddress).toBeNull();
      expect(cleared.body.data.kyc.occupation).toBeNull();
      expect(cleared.body.data.kyc.documentSsn).toBeNull();
    });

    it('changes the email and phone, normalised', async () => {
      const customer = await createIndividual(t);
      const email = uniqueEmail('new');
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { email, phoneNumber: '(415) 555-0100' } });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ email, phoneNumber: '4155550100', phoneCountryCode: '1' });
      // Its own address again is no conflict.
      const same = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { email: email.toUpperCase() } });
      expect(same.status).toBe(200);
    });

    it('allows identity changes while onboarding is PENDING or PROCESSING', async () => {
      for (const status of ['PENDING', 'PROCESSING']) {
        const customer = await createIndividual(t);
        await t.deps.db.updateTable('customers').set({ onboarding_status: status }).where('id', '=', customer.id).execute();
        const response = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { firstName: 'Augusta', birthDate: '1991-01-01' } } });
        expect(response.status).toBe(200);
        expect(response.body.data.kyc).toMatchObject({ firstName: 'Augusta', birthDate: '1991-01-01' });
      }
    });
  });

  describe('400', () => {
    it('an update with no field (an empty body, or none) changes nothing and is refused, as every other PATCH is', async () => {
      const customer = await createIndividual(t);
      const business = await createBusiness(t);
      t.clock.advance(1000);
      for (const [url, body] of [
        [`/v1/customers/${customer.id as string}`, {}],
        [`/v1/customers/${customer.id as string}`, undefined],
        [`/v1/customers/business/${business.id as string}`, {}],
        // An empty kyc or kyb block is no field either (it answered 200 and moved updatedAt).
        [`/v1/customers/${customer.id as string}`, { kyc: {} }],
        [`/v1/customers/business/${business.id as string}`, { kyb: {} }],
      ] as const) {
        const response = await t.request({ method: 'PATCH', url, ...(body === undefined ? {} : { body }) });
        expect(response.status, url).toBe(400);
        expect(response.body.code).toBe('VALIDATION_ERROR');
        if (body && 'kyc' in body) expect(response.body.details[0].field).toBe('kyc');
        if (body && 'kyb' in body) expect(response.body.details[0].field).toBe('kyb');
      }
      expect((await t.request({ url: `/v1/customers/${customer.id as string}` })).body.data.updatedAt).toBe(customer.updatedAt);
      expect((await t.request({ url: `/v1/customers/${business.id as string}` })).body.data.updatedAt).toBe(business.updatedAt);
    });

    it('refuses a change of type, naming the field', async () => {
      const customer = await createIndividual(t);
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { type: 'LEGAL' } });
      expect(response.status).toBe(400);
      expect(response.body.details).toEqual([{ field: 'type', message: expect.stringContaining('cannot be changed') }]);
    });

    it('refuses bad values and stores nothing', async () => {
      const customer = await createIndividual(t);
      for (const [body, field] of [
        [{ kyc: { birthDate: '2023-02-30' } }, 'kyc.birthDate'],
        [{ kyc: { nationality: 'USA' } }, 'kyc.nationality'],
        [{ kyc: { occupation: 'Other' } }, 'kyc.occupation'],
        [{ membershipProgram: 'Gold' }, 'membershipProgram'],
        [{ deliveryAddress: { ...address, street1: 'y'.repeat(10_000) } }, 'deliveryAddress.street1'],
        [{ kyc: { firstName: null } }, 'kyc.firstName'],
      ] as const) {
        const response = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body });
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(response.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
      }
      expect((await t.request({ url: `/v1/customers/${customer.id}` })).body.data).toEqual(customer);
    });

    it('sends a business to its own route', async () => {
      const business = await createBusiness(t);
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/${business.id}`, body: { billingAddress: address } });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('WRONG_CUSTOMER_TYPE');
      expect(response.body.message).toContain('PATCH /v1/customers/business/:id');
      expect(response.body.details).toEqual([{ field: 'id', message: 'is a business (LEGAL) customer; update it with PATCH /v1/customers/business/:id' }]);
    });
  });

  describe('404', () => {
    it('answers another client\'s customer like a missing one', async () => {
      const other = await createIndividual(t, t.clientB);
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/${other.id}`, body: { kyc: { occupation: '11' } } });
      expect(response.status).toBe(404);
      expect((await t.request({ url: `/v1/customers/${other.id}`, key: t.clientB.key })).body.data.kyc.occupation).toBeNull();
    });
  });

  describe('409', () => {
    it('refuses identity changes once onboarding is decided, naming the status', async () => {
      const customer = await createIndividual(t);
      await t.deps.db.updateTable('customers').set({ onboarding_status: 'APPROVED' }).where('id', '=', customer.id).execute();
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { lastName: 'Byron' } } });
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('INVALID_STATE');
      expect(response.body.message).toContain('APPROVED');
      expect(response.body.details).toEqual([{ field: 'kyc.lastName', message: expect.stringContaining('APPROVED') }]);
      // Occupation, tax country and addresses outside the kyc identity stay editable.
      const allowed = await t.request({ method: 'PATCH', url: `/v1/customers/${customer.id}`, body: { kyc: { occupation: '23' }, deliveryAddress: address } });
      expect(allowed.status).toBe(200);
      expect(allowed.body.data.kyc.lastName).toBe('Lovelace');
    });

    it('refuses an email address used by another customer', async () => {
      const first = await createIndividual(t);
      const second = await createIndividual(t);
      const response = await t.request({ method: 'PATCH', url: `/v1/customers/${second.id}`, body: { email: first.email } });
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('DUPLICATE_EMAIL');
    });
  });
});

describe('removed endpoints', () => {
  it('answers 410 for the removed address and transactions endpoints', async () => {
    const customer = await createIndividual(t);
    const addresses = await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/addresses`, body: address });
    expect(addresses.status).toBe(410);
    expect(addresses.body.message).toContain('PATCH /v1/customers/:id');
    const transactions = await t.request({ url: `/v1/customers/${customer.id}/transactions` });
    expect(transactions.status).toBe(410);
  });
});

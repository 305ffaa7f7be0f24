import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { createIndividual } from '../../../test/customers/fixtures.js';
import { idAt } from '../../platform/ids.js';
import { counterpartiesPerPortfolioMax } from './counterparties.service.js';

let t: TestContext;
let customerId: string;
let portfolioId: string;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  const customer = await createIndividual(t);
  customerId = customer.id;
  portfolioId = customer.portfolios[0].id;
  base = `/v1/customers/${customerId}/portfolios/${portfolioId}/counterparties`;
});
afterAll(async () => {
  await t.close();
});

const address = { street1: '1 Main Street', cityCounty: 'Arlington', stateRegion: 'VA', zip: '22201', countryCode: 'US' };
const achBody = (overrides: Record<string, unknown> = {}) => ({
  transferNetwork: 'ACH_DOMESTIC',
  name: 'Landlord',
  accountHolderName: 'Grace Hopper',
  routingNumber: '021000021',
  accountNumberValue: '123456789',
  ...address,
  ...overrides,
});
const create = (body: Record<string, unknown>, url = base) => t.request({ method: 'POST', url, body });

const usNetworks = ['ACH_DOMESTIC', 'ACH_CROSSBORDER', 'FEDWIRE_DOMESTIC'] as const;
const bicNetworks = ['FEDWIRE_CROSSBORDER', 'SWIFT'] as const;

describe('201', () => {
  it.each(usNetworks)('%s with a routing number: bank data stored from the directory', async (network) => {
    const response = await create(achBody({ transferNetwork: network }));
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toEqual({
      id: expect.any(String),
      customerId,
      portfolioId,
      transferNetwork: network,
      name: 'Landlord',
      accountHolderName: 'Grace Hopper',
      routingNumber: '021000021',
      bicSwiftCode: null,
      accountNumberValue: '123456789',
      countryCode: 'US',
      street1: '1 Main Street',
      street2: null,
      cityCounty: 'Arlington',
      stateRegion: 'VA',
      zip: '22201',
      bankName: 'JPMorgan Chase Bank, N.A.',
      bankCity: 'Columbus',
      bankState: 'OH',
      bankCountry: 'US',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it.each(bicNetworks)('%s with a BIC and an IBAN: bank data from the BIC directory', async (network) => {
    const response = await create({ transferNetwork: network, accountHolderName: 'Karl Weierstrass', bicSwiftCode: 'deutdeff', accountNumberValue: 'DE89370400440532013000', countryCode: 'DE' });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject({
      transferNetwork: network,
      routingNumber: null,
      bicSwiftCode: 'DEUTDEFF',
      accountNumberValue: 'DE89370400440532013000',
      bankName: 'Deutsche Bank AG',
      bankCity: 'Frankfurt am Main',
      bankState: null,
      bankCountry: 'DE',
    });
  });

  it('takes accented letters and other scripts in the names and the address, as sent', async () => {
    const text = { name: 'Fournisseur à Zürich', accountHolderName: 'Zoë Dvořák-Ñúñez', street1: 'Hauptstraße 1', street2: 'Bâtiment B', cityCounty: 'Zürich', stateRegion: 'Île-de-France', zip: 'Ōsaka 530' };
    const response = await create(achBody(text));
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject(text);
  });

  it('stores a lower-case or print-form IBAN in its electronic form (upper case), as it does the BIC, on create and on PATCH', async () => {
    const response = await create({ transferNetwork: 'SWIFT', accountHolderName: 'X', bicSwiftCode: 'deutdeff', accountNumberValue: 'de89370400440532013000' });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject({ bicSwiftCode: 'DEUTDEFF', accountNumberValue: 'DE89370400440532013000' });
    const url = `${base}/${response.body.data.id}`;
    expect((await t.request({ url })).body.data.accountNumberValue).toBe('DE89370400440532013000');
    const patched = await t.request({ method: 'PATCH', url, body: { accountNumberValue: 'gb29nwbk60161331926819' } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data.accountNumberValue).toBe('GB29NWBK60161331926819');
    // An account number that is not an IBAN is kept as sent.
    expect((await create(achBody({ accountNumberValue: '00012ab' }))).body.data.accountNumberValue).toBe('00012ab');
  });

  it('needs only transferNetwork, accountHolderName and the network\'s identifier', async () => {
    const response = await create({ transferNetwork: 'ACH_DOMESTIC', accountHolderName: 'Minimal', routingNumber: '021000021' });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ name: null, accountNumberValue: null, street1: null });
  });
});

describe('400', () => {
  it.each(usNetworks)('%s without routingNumber, or with bicSwiftCode as well', async (network) => {
    const missing = await create(achBody({ transferNetwork: network, routingNumber: undefined }));
    expect(missing.status).toBe(400);
    expect(missing.body.details).toContainEqual({ field: 'routingNumber', message: `is required for ${network}` });
    const both = await create(achBody({ transferNetwork: network, bicSwiftCode: 'DEUTDEFF' }));
    expect(both.status).toBe(400);
    expect(both.body.details[0]).toEqual({ field: 'bicSwiftCode', message: expect.stringMatching(/is not allowed/) });
  });

  it.each(bicNetworks)('%s without bicSwiftCode, or with routingNumber as well', async (network) => {
    const missing = await create(achBody({ transferNetwork: network }));
    expect(missing.status).toBe(400);
    expect(missing.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['bicSwiftCode', 'routingNumber']);
  });

  it('transferNetwork and accountHolderName are required on create', async () => {
    const response = await create({ routingNumber: '021000021' });
    expect(response.status).toBe(400);
    expect(response.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['accountHolderName', 'transferNetwork']);
  });

  it.each([
    ['accountNumberType', 'IBAN', /accountNumberValue/],
    ['financialInstitutionId', '021000021', /renamed routingNumber/],
  ])('refuses the removed field %s, naming the replacement', async (field, value, replacement) => {
    const response = await create(achBody({ [field]: value }));
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('FIELD_REMOVED');
    expect(response.body.details[0].field).toBe(field);
    expect(response.body.message).toMatch(replacement);
  });

  it.each([
    ['the long s', 'CHA\u017fUS33'],
    ['the ligature ff (7 characters)', 'DEUTDE\ufb00'],
    ['the dotless i', 'C\u0131T\u0131US33'],
    ['the sharp s', 'DEUTDE\u00df'],
  ])('a BIC with %s, which case mapping turns into ASCII letters, is refused as sent on create and on PATCH (400 INVALID_SWIFT_CODE), not stored as another bank\'s code', async (_name, bic) => {
    // Until 2026-12-05 counterparties upper-cased the code before checking it: CHAſUS33 was stored
    // as CHASUS33, and DEUTDEß looked up as DEUTDESS (found by an audit).
    const created = await create({ transferNetwork: 'SWIFT', accountHolderName: 'X', bicSwiftCode: bic });
    expect(created.status, JSON.stringify(created.body)).toBe(400);
    expect(created.body).toMatchObject({ code: 'INVALID_SWIFT_CODE', details: [{ field: 'bicSwiftCode' }] });
    const good = await create({ transferNetwork: 'SWIFT', accountHolderName: 'X', bicSwiftCode: 'DEUTDEFF' });
    expect(good.status).toBe(201);
    const patched = await t.request({ method: 'PATCH', url: `${base}/${good.body.data.id as string}`, body: { bicSwiftCode: bic } });
    expect(patched.status).toBe(400);
    expect(patched.body.code).toBe('INVALID_SWIFT_CODE');
    expect((await t.request({ url: `${base}/${good.body.data.id as string}` })).body.data.bicSwiftCode).toBe('DEUTDEFF');
  });

  it('a bad routing checksum, a malformed BIC, a bad IBAN, a bad country code, an old network name', async () => {
    expect((await create(achBody({ routingNumber: '021000022' }))).body.code).toBe('INVALID_ROUTING_NUMBER');
    expect((await create({ transferNetwork: 'SWIFT', accountHolderName: 'x', bicSwiftCode: 'DE' })).body.code).toBe('INVALID_SWIFT_CODE');
    // An empty string is an identifier given, and malformed, as on withdrawals (it was the schema's generic 400).
    const emptyBic = await create({ transferNetwork: 'SWIFT', accountHolderName: 'x', bicSwiftCode: '' });
    expect(emptyBic.body).toMatchObject({ code: 'INVALID_SWIFT_CODE', details: [{ field: 'bicSwiftCode', message: 'a SWIFT/BIC code is 8 or 11 characters long; got 0' }] });
    expect((await create(achBody({ routingNumber: '' }))).body.code).toBe('INVALID_ROUTING_NUMBER');
    const notAllowed = await create({ transferNetwork: 'SWIFT', accountHolderName: 'x', bicSwiftCode: 'DEUTDEFF', routingNumber: '' });
    expect(notAllowed.body.details).toContainEqual({ field: 'routingNumber', message: expect.stringContaining('is not allowed for SWIFT') });
    expect((await create({ transferNetwork: 'SWIFT', accountHolderName: 'x', bicSwiftCode: 'DEUTDEFF', accountNumberValue: 'DE89370400440532013001' })).body.code).toBe('INVALID_IBAN');
    const country = await create(achBody({ countryCode: 'ZZ' }));
    expect(country.status).toBe(400);
    expect(country.body.details[0].field).toBe('countryCode');
    const legacy = await create(achBody({ transferNetwork: 'US_WIRE' }));
    expect(legacy.status).toBe(400);
    expect(legacy.body.details[0].field).toBe('transferNetwork');
  });

  describe('names and address: control characters, format characters, blank values', () => {
    const textFields = ['name', 'accountHolderName', 'street1', 'street2', 'cityCounty', 'stateRegion', 'zip'] as const;
    const expectRefused = (response: Awaited<ReturnType<typeof create>>, field: string, message: RegExp) => {
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
      expect(response.body.details).toContainEqual({ field, message: expect.stringMatching(message) });
    };

    it.each(textFields)('%s with a line break, a bell, DEL, a C1 control, a bidi override or a zero-width space', async (field) => {
      for (const [character, shown] of [['\n', 'U\\+000A'], ['\u0007', 'U\\+0007'], ['\u007f', 'U\\+007F'], ['\u0085', 'U\\+0085'], ['\u202e', 'U\\+202E'], ['\u200b', 'U\\+200B']] as const) {
        expectRefused(await create(achBody({ [field]: `A${character}B` })), field, new RegExp(`^contains characters that are not allowed \\(${shown}\\)`));
      }
    });

    it.each(textFields)('%s that is only white space', async (field) => {
      expectRefused(await create(achBody({ [field]: '   ' })), field, /must not be empty or only white space/);
    });

    it("the audit's bodies: a name with a line break and a bell; a blank SWIFT account holder", async () => {
      const before = (await t.request({ url: `${base}?limit=200` })).body.pagination.totalResults;
      expectRefused(await create({ transferNetwork: 'ACH_DOMESTIC', accountHolderName: 'A\nB\u0007', routingNumber: '021000021' }), 'accountHolderName', /\(U\+000A, U\+0007\)/);
      expectRefused(await create({ transferNetwork: 'SWIFT', accountHolderName: '   ', bicSwiftCode: 'DEUTDEFF' }), 'accountHolderName', /only white space/);
      expect((await t.request({ url: `${base}?limit=200` })).body.pagination.totalResults).toBe(before);
    });

    it('PATCH checks the fields it changes, and leaves the counterparty as it was', async () => {
      const created = (await create(achBody())).body.data;
      const url = `${base}/${created.id}`;
      expectRefused(await t.request({ method: 'PATCH', url, body: { accountHolderName: '\u202eevil' } }), 'accountHolderName', /U\+202E/);
      expectRefused(await t.request({ method: 'PATCH', url, body: { stateRegion: ' ', street2: 'x\r\ny' } }), 'stateRegion', /only white space/);
      expect((await t.request({ url })).body.data).toEqual(created);
    });
  });

  it('ROUTING_NUMBER_NOT_ELIGIBLE for an ACH counterparty at a bank that takes no ACH', async () => {
    const response = await create(achBody({ routingNumber: '031101266' }));
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('ROUTING_NUMBER_NOT_ELIGIBLE');
  });
});

describe('404', () => {
  it('BANK_NOT_FOUND for a well-formed identifier the directory does not know', async () => {
    const response = await create(achBody({ routingNumber: '123456780' }));
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('BANK_NOT_FOUND');
  });

  it("an unknown customer or portfolio, or a portfolio of another customer or client", async () => {
    const other = await createIndividual(t);
    const foreign = await createIndividual(t, t.clientB);
    const urls = [
      `/v1/customers/019ca945-0a00-74c1-8797-3bfde107f365/portfolios/${portfolioId}/counterparties`,
      `/v1/customers/${customerId}/portfolios/${other.portfolios[0].id}/counterparties`,
      `/v1/customers/${foreign.id}/portfolios/${foreign.portfolios[0].id}/counterparties`,
      `/v1/customers/${customerId}/portfolios/nope/counterparties`,
    ];
    for (const url of urls) {
      const response = await create(achBody(), url);
      expect(response.status, url).toBe(404);
      expect((await t.request({ url })).status).toBe(404);
    }
  });
});

describe('GET, PATCH, DELETE', () => {
  it('lists newest first, filters by transferNetwork, and reads one', async () => {
    const customer = await createIndividual(t);
    const url = `/v1/customers/${customer.id}/portfolios/${customer.portfolios[0].id}/counterparties`;
    const first = (await create(achBody(), url)).body.data;
    const second = (await create({ transferNetwork: 'SWIFT', accountHolderName: 'Emmy Noether', bicSwiftCode: 'COBADEFF' }, url)).body.data;
    const list = await t.request({ url });
    expect(list.body.data.map((entry: { id: string }) => entry.id)).toEqual([second.id, first.id]);
    expect(list.body.pagination).toEqual({ totalResults: 2, totalResultsExact: true, hasMoreResults: false, nextStartAfterId: null });
    const swiftOnly = await t.request({ url: `${url}?transferNetwork=SWIFT` });
    expect(swiftOnly.body.data.map((entry: { id: string }) => entry.id)).toEqual([second.id]);
    expect((await t.request({ url: `${url}/${first.id}` })).body.data).toEqual(first);
  });

  it('PATCH changes the network when the identifiers follow (the old one set to null), and refreshes the bank data', async () => {
    const created = (await create(achBody())).body.data;
    const contrary = await t.request({ method: 'PATCH', url: `${base}/${created.id}`, body: { transferNetwork: 'SWIFT', bicSwiftCode: 'BNPAFRPP' } });
    expect(contrary.status).toBe(400);
    expect(contrary.body.details[0].field).toBe('routingNumber');
    const changed = await t.request({ method: 'PATCH', url: `${base}/${created.id}`, body: { transferNetwork: 'SWIFT', routingNumber: null, bicSwiftCode: 'BNPAFRPP', countryCode: 'FR', street2: 'Bâtiment B' } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.data).toMatchObject({
      transferNetwork: 'SWIFT',
      routingNumber: null,
      bicSwiftCode: 'BNPAFRPP',
      bankName: 'BNP Paribas',
      bankCountry: 'FR',
      countryCode: 'FR',
      street2: 'Bâtiment B',
      accountHolderName: 'Grace Hopper',
      name: 'Landlord',
    });
    const cleared = await t.request({ method: 'PATCH', url: `${base}/${created.id}`, body: { name: null } });
    expect(cleared.body.data.name).toBeNull();
    expect((await t.request({ url: `${base}/${created.id}` })).body.data).toEqual(cleared.body.data);
  });

  it('PATCH validates again, refuses removed fields and an empty body, and cannot null transferNetwork', async () => {
    const created = (await create(achBody())).body.data;
    const url = `${base}/${created.id}`;
    expect((await t.request({ method: 'PATCH', url, body: { routingNumber: '021000022' } })).body.code).toBe('INVALID_ROUTING_NUMBER');
    expect((await t.request({ method: 'PATCH', url, body: { financialInstitutionId: '021000021' } })).body.code).toBe('FIELD_REMOVED');
    expect((await t.request({ method: 'PATCH', url, body: {} })).status).toBe(400);
    expect((await t.request({ method: 'PATCH', url, body: { transferNetwork: null } })).status).toBe(400);
    expect((await t.request({ url })).body.data).toEqual(created);
  });

  it('DELETE answers the deleted counterparty; then it is gone', async () => {
    const created = (await create(achBody())).body.data;
    const deleted = await t.request({ method: 'DELETE', url: `${base}/${created.id}` });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual(created);
    expect((await t.request({ url: `${base}/${created.id}` })).status).toBe(404);
    expect((await t.request({ method: 'DELETE', url: `${base}/${created.id}` })).status).toBe(404);
  });

  it("404 for a counterparty of another portfolio or client, or a malformed id", async () => {
    const created = (await create(achBody())).body.data;
    const other = await createIndividual(t);
    const otherUrl = `/v1/customers/${other.id}/portfolios/${other.portfolios[0].id}/counterparties/${created.id}`;
    expect((await t.request({ url: otherUrl })).status).toBe(404);
    expect((await t.request({ url: `${base}/${created.id}`, key: t.clientB.key })).status).toBe(404);
    expect((await t.request({ url: `${base}/not-an-id` })).status).toBe(404);
    expect((await t.request({ method: 'PATCH', url: otherUrl, body: { name: 'x' } })).status).toBe(404);
  });
});

describe('422', () => {
  it(`RESOURCE_LIMIT_REACHED past ${counterpartiesPerPortfolioMax} counterparties in a portfolio`, async () => {
    const customer = await createIndividual(t);
    const url = `/v1/customers/${customer.id}/portfolios/${customer.portfolios[0].id}/counterparties`;
    // Fill the portfolio up to one below the limit directly, then cross it through the API.
    const rows = Array.from({ length: counterpartiesPerPortfolioMax - 1 }, () => ({
      client_id: t.clientA.id,
      id: idAt(t.clock.now()),
      customer_id: customer.id,
      portfolio_id: customer.portfolios[0].id,
      transfer_network: 'ACH_DOMESTIC' as const,
      account_holder_name: 'Filler',
      routing_number: '021000021',
      bank_name: 'JPMorgan Chase Bank, N.A.',
      bank_country: 'US',
      created_at: t.clock.now(),
      updated_at: t.clock.now(),
    }));
    await t.deps.db.insertInto('counterparties').values(rows).execute();
    expect((await create(achBody(), url)).status).toBe(201);
    const refused = await create(achBody(), url);
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('RESOURCE_LIMIT_REACHED');
  });
});

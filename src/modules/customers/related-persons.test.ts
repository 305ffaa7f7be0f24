import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { countRows, createBusiness, createIndividual } from '../../../test/customers/fixtures.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const url = (businessId: string) => `/v1/customers/business/${businessId}/related-persons`;

async function relate(businessId: string, body: Record<string, unknown>, method: 'POST' | 'PATCH' | 'DELETE' = 'POST') {
  return t.request({ method, url: url(businessId), body });
}

/** Sends a write that must be refused and checks the relations did not change. */
async function expectRefused(businessId: string, body: Record<string, unknown>, status: number, field: string | undefined, method: 'POST' | 'PATCH' | 'DELETE' = 'POST') {
  const before = await countRows(t, 'business_person_relations');
  const listBefore = (await t.request({ url: url(businessId) })).body;
  const response = await relate(businessId, body, method);
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  if (field) expect(response.body.details?.map((detail: { field: string }) => detail.field)).toContain(field);
  expect(await countRows(t, 'business_person_relations')).toBe(before);
  expect((await t.request({ url: url(businessId) })).body.data).toEqual(listBefore.data);
  return response;
}

describe('POST related-persons', () => {
  describe('201', () => {
    it('adds a shareholder and a representative and returns every relation with the action', async () => {
      const business = await createBusiness(t);
      const alice = await createIndividual(t);
      const bob = await createIndividual(t);
      const first = await relate(business.id, { userId: alice.id, role: 'SHAREHOLDER', ownershipPercentage: '60.5', representingRange: { startDate: '2024-01-01' } });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      expect(first.body.data.action).toBe('ADD');
      expect(first.body.data.personRelations).toEqual([
        expect.objectContaining({ userId: alice.id, role: 'SHAREHOLDER', ownershipPercentage: '60.5', representingRange: { startDate: '2024-01-01', endDate: null } }),
      ]);
      const second = await relate(business.id, { userId: bob.id, role: 'REPRESENTATIVE', representingRange: { startDate: '2024-02-01', endDate: '2026-12-31' } });
      expect(second.status).toBe(201);
      expect(second.body.data.personRelations).toHaveLength(2);
      expect(second.body.data.personRelations.find((relation: { userId: string }) => relation.userId === bob.id)).toMatchObject({
        role: 'REPRESENTATIVE',
        ownershipPercentage: null,
        representingRange: { startDate: '2024-02-01', endDate: '2026-12-31' },
      });
      // One person can hold both roles.
      const both = await relate(business.id, { userId: bob.id, role: 'SHAREHOLDER', ownershipPercentage: '39.5' });
      expect(both.status).toBe(201);

      const list = await t.request({ url: url(business.id) });
      expect(list.status).toBe(200);
      expect(list.body.data.personRelations).toHaveLength(3);
      expect(list.body.data).not.toHaveProperty('action');
    });

    it('lets the shareholders own exactly 100%', async () => {
      const business = await createBusiness(t);
      for (const share of ['33.3333', '33.3333', '33.3334']) {
        const person = await createIndividual(t);
        expect((await relate(business.id, { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: share })).status).toBe(201);
      }
    });
  });

  describe('400', () => {
    it.each([['101'], ['0'], ['-5'], ['12.34567'], ['1e2'], ['abc'], ['05'], ['007.5'], ['25.']])('refuses the ownership "%s"', async (ownershipPercentage) => {
      const business = await createBusiness(t);
      const person = await createIndividual(t);
      await expectRefused(business.id, { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage }, 400, 'ownershipPercentage');
    });

    it('refuses an ownership given as a JSON number', async () => {
      const business = await createBusiness(t);
      const person = await createIndividual(t);
      await expectRefused(business.id, { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: 25 }, 400, 'ownershipPercentage');
    });

    it('requires ownership for a shareholder and refuses it for a representative', async () => {
      const business = await createBusiness(t);
      const person = await createIndividual(t);
      await expectRefused(business.id, { userId: person.id, role: 'SHAREHOLDER' }, 400, 'ownershipPercentage');
      await expectRefused(business.id, { userId: person.id, role: 'REPRESENTATIVE', ownershipPercentage: '5' }, 400, 'ownershipPercentage');
    });

    it('refuses a relation to a business customer', async () => {
      const business = await createBusiness(t);
      const otherBusiness = await createBusiness(t);
      const response = await expectRefused(business.id, { userId: otherBusiness.id, role: 'REPRESENTATIVE' }, 400, 'userId');
      expect(response.body.code).toBe('WRONG_CUSTOMER_TYPE');
    });

    it('refuses related persons on an individual customer', async () => {
      const person = await createIndividual(t);
      const other = await createIndividual(t);
      const response = await relate(person.id, { userId: other.id, role: 'REPRESENTATIVE' });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('WRONG_CUSTOMER_TYPE');
      expect(response.body.details).toEqual([{ field: 'businessUserId', message: expect.stringContaining('is an individual (PRIVATE) customer') }]);
    });

    it('refuses bad roles and ranges', async () => {
      const business = await createBusiness(t);
      const person = await createIndividual(t);
      await expectRefused(business.id, { userId: person.id, role: 'DIRECTOR' }, 400, 'role');
      await expectRefused(business.id, { userId: person.id, role: 'REPRESENTATIVE', representingRange: { startDate: '2024-02-30' } }, 400, 'representingRange.startDate');
      await expectRefused(
        business.id,
        { userId: person.id, role: 'REPRESENTATIVE', representingRange: { startDate: '2024-02-01', endDate: '2024-01-01' } },
        400,
        'representingRange.endDate',
      );
    });
  });

  describe('404', () => {
    it('answers a person of another client, a missing person and a malformed id alike', async () => {
      const business = await createBusiness(t);
      const stranger = await createIndividual(t, t.clientB);
      for (const userId of [stranger.id, '0196a8f0-0000-7000-8000-000000000000', 'not-an-id']) {
        const response = await expectRefused(business.id, { userId, role: 'REPRESENTATIVE' }, 404, 'userId');
        expect(response.body.code).toBe('NOT_FOUND');
      }
    });
  });

  describe('409', () => {
    it('refuses a total shareholding above 100%', async () => {
      const business = await createBusiness(t);
      const first = await createIndividual(t);
      const second = await createIndividual(t);
      expect((await relate(business.id, { userId: first.id, role: 'SHAREHOLDER', ownershipPercentage: '75' })).status).toBe(201);
      const response = await expectRefused(business.id, { userId: second.id, role: 'SHAREHOLDER', ownershipPercentage: '25.0001' }, 409, 'ownershipPercentage');
      expect(response.body.code).toBe('OWNERSHIP_LIMIT_EXCEEDED');
      expect(response.body.message).toContain('at most 25% is left');
    });

    it('keeps the total at or below 100% under concurrent adds', async () => {
      const business = await createBusiness(t);
      const people = await Promise.all([1, 2, 3].map(() => createIndividual(t)));
      const responses = await Promise.all(people.map((person) => relate(business.id, { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: '40' })));
      expect(responses.map((response) => response.status).sort()).toEqual([201, 201, 409]);
    });

    it('refuses the same person in the same role twice', async () => {
      const business = await createBusiness(t);
      const person = await createIndividual(t);
      expect((await relate(business.id, { userId: person.id, role: 'REPRESENTATIVE' })).status).toBe(201);
      const response = await expectRefused(business.id, { userId: person.id, role: 'REPRESENTATIVE' }, 409, 'userId');
      expect(response.body.code).toBe('DUPLICATE_RELATION');
    });
  });
});

describe('PATCH related-persons', () => {
  it('200: changes the ownership and range of the relation named by userId and role', async () => {
    const business = await createBusiness(t);
    const person = await createIndividual(t);
    await relate(business.id, { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: '50' });
    await relate(business.id, { userId: person.id, role: 'REPRESENTATIVE' });
    const response = await relate(business.id, { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: '100', representingRange: { startDate: '2025-01-01' } }, 'PATCH');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.action).toBe('UPDATE');
    const shareholder = response.body.data.personRelations.find((relation: { role: string }) => relation.role === 'SHAREHOLDER');
    expect(shareholder).toMatchObject({ ownershipPercentage: '100', representingRange: { startDate: '2025-01-01', endDate: null } });
    const representative = response.body.data.personRelations.find((relation: { role: string }) => relation.role === 'REPRESENTATIVE');
    expect(representative.representingRange).toBeNull();
  });

  it('409: refuses an update that takes the total above 100%', async () => {
    const business = await createBusiness(t);
    const [first, second] = await Promise.all([createIndividual(t), createIndividual(t)]);
    await relate(business.id, { userId: first.id, role: 'SHAREHOLDER', ownershipPercentage: '50' });
    await relate(business.id, { userId: second.id, role: 'SHAREHOLDER', ownershipPercentage: '50' });
    const response = await expectRefused(business.id, { userId: second.id, role: 'SHAREHOLDER', ownershipPercentage: '50.01' }, 409, 'ownershipPercentage', 'PATCH');
    expect(response.body.code).toBe('OWNERSHIP_LIMIT_EXCEEDED');
  });

  it('200: a userId in capitals names the same relation, for PATCH and DELETE as for POST', async () => {
    const business = await createBusiness(t);
    const person = await createIndividual(t);
    const userId = String(person.id).toUpperCase();
    expect((await relate(business.id, { userId, role: 'SHAREHOLDER', ownershipPercentage: '50' })).status).toBe(201);
    const patched = await relate(business.id, { userId, role: 'SHAREHOLDER', ownershipPercentage: '60' }, 'PATCH');
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data.personRelations).toEqual([expect.objectContaining({ userId: person.id, ownershipPercentage: '60' })]);
    const removed = await relate(business.id, { userId, role: 'SHAREHOLDER' }, 'DELETE');
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.data.personRelations).toEqual([]);
  });

  it('400: an update with nothing to change (userId and role only), which changes nothing', async () => {
    const business = await createBusiness(t);
    const person = await createIndividual(t);
    await relate(business.id, { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: '50' });
    const response = await expectRefused(business.id, { userId: person.id, role: 'SHAREHOLDER' }, 400, 'body', 'PATCH');
    expect(response.body.code).toBe('VALIDATION_ERROR');
  });

  it('404: a relation that does not exist', async () => {
    const business = await createBusiness(t);
    const person = await createIndividual(t);
    await relate(business.id, { userId: person.id, role: 'REPRESENTATIVE' });
    await expectRefused(business.id, { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: '5' }, 404, 'userId', 'PATCH');
  });
});

describe('DELETE related-persons', () => {
  it('200: removes the relation named by userId and role and returns the rest', async () => {
    const business = await createBusiness(t);
    const person = await createIndividual(t);
    await relate(business.id, { userId: person.id, role: 'SHAREHOLDER', ownershipPercentage: '50' });
    await relate(business.id, { userId: person.id, role: 'REPRESENTATIVE' });
    const response = await relate(business.id, { userId: person.id, role: 'SHAREHOLDER' }, 'DELETE');
    expect(response.status).toBe(200);
    expect(response.body.data.action).toBe('REMOVE');
    expect(response.body.data.personRelations).toEqual([expect.objectContaining({ userId: person.id, role: 'REPRESENTATIVE' })]);
    // The freed share can be given again.
    const other = await createIndividual(t);
    expect((await relate(business.id, { userId: other.id, role: 'SHAREHOLDER', ownershipPercentage: '100' })).status).toBe(201);
  });

  it('404: a relation of another client\'s business', async () => {
    const business = await createBusiness(t, t.clientB);
    const person = await createIndividual(t, t.clientB);
    await t.request({ method: 'POST', url: url(business.id), key: t.clientB.key, body: { userId: person.id, role: 'REPRESENTATIVE' } });
    const response = await relate(business.id, { userId: person.id, role: 'REPRESENTATIVE' }, 'DELETE');
    expect(response.status).toBe(404);
    expect((await t.request({ url: url(business.id), key: t.clientB.key })).body.data.personRelations).toHaveLength(1);
  });
});

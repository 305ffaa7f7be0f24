import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { individualBody } from '../../../test/customers/fixtures.js';
import { fieldCipherOf } from '../../platform/crypto/field-cipher.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { createIndividual } from './customers.service.js';

let t: TestContext;
const customerCount = 1000;
let createdNewestFirst: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  // Created through the service (the same code the POST route runs) in a few transactions, to keep
  // the file fast; the paging under test is all HTTP. One millisecond apart: creation order is id order.
  const created: string[] = [];
  const cipher = fieldCipherOf(t.deps);
  for (let batch = 0; batch < customerCount / 100; batch++) {
    await withTransaction(t.deps.db, async (tx) => {
      for (let index = batch * 100; index < (batch + 1) * 100; index++) {
        t.clock.advance(1);
        const context = { clientId: t.clientA.id, traceId: `paging-${index}`, now: t.clock.now() };
        const customer = await createIndividual(tx, context, cipher, individualBody({ email: `paging.${index}@example.com` }));
        created.push(customer.id);
      }
    });
  }
  createdNewestFirst = created.reverse();
}, 600_000);
afterAll(async () => {
  await t.close();
});

describe('paging 1,000 customers', () => {
  it('walks every customer exactly once with offset', async () => {
    const seen: string[] = [];
    for (let offset = 0; ; offset += 200) {
      const response = await t.request({ url: `/v1/customers?limit=200&offset=${offset}` });
      expect(response.status).toBe(200);
      expect(response.body.pagination.totalResults).toBe(customerCount);
      seen.push(...response.body.data.map((customer: { id: string }) => customer.id));
      if (!response.body.pagination.hasMoreResults) break;
    }
    expect(seen).toEqual(createdNewestFirst);
  });

  it('walks every customer exactly once with startAfterId, in uneven pages', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `&startAfterId=${cursor}` : '';
      const response = await t.request({ url: `/v1/customers?limit=70${query}` });
      expect(response.status).toBe(200);
      seen.push(...response.body.data.map((customer: { id: string }) => customer.id));
      cursor = response.body.pagination.nextStartAfterId;
      expect(response.body.pagination.hasMoreResults).toBe(cursor !== null);
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBe(Math.ceil(customerCount / 70));
    expect(seen).toEqual(createdNewestFirst);
  });

  it('pages the last partial page and past the end', async () => {
    const last = await t.request({ url: `/v1/customers?limit=30&offset=${customerCount - 10}` });
    expect(last.body.data.map((customer: { id: string }) => customer.id)).toEqual(createdNewestFirst.slice(-10));
    expect(last.body.pagination.hasMoreResults).toBe(false);
    const past = await t.request({ url: `/v1/customers?offset=${customerCount + 5}` });
    expect(past.body.data).toEqual([]);
  });

  it('refuses offset together with startAfterId, and limits above 200', async () => {
    const both = await t.request({ url: `/v1/customers?offset=5&startAfterId=${createdNewestFirst[0] ?? ''}` });
    expect(both.status).toBe(400);
    expect(both.body.details[0].field).toBe('offset');
    expect((await t.request({ url: '/v1/customers?limit=201' })).status).toBe(400);
  });

  it('refuses a startAfterId that is not an id, naming it (an empty page would read as the end)', async () => {
    for (const cursor of ['abc', '123', `${createdNewestFirst[0] ?? ''}x`]) {
      const response = await t.request({ url: `/v1/customers?startAfterId=${encodeURIComponent(cursor)}` });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'startAfterId' }] });
    }
    const upper = await t.request({ url: `/v1/customers?limit=3&startAfterId=${(createdNewestFirst[0] ?? '').toUpperCase()}` });
    expect(upper.body.data.map((customer: { id: string }) => customer.id)).toEqual(createdNewestFirst.slice(1, 4));
  });
});

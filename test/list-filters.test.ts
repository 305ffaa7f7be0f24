import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from './harness.js';
import { issuedCard } from './cards/fixtures.js';

/**
 * A list filtered by a resource (a customer, portfolio, wallet or card) answers 404 NOT_FOUND
 * naming the query parameter when the client has no such resource: another client's answers
 * exactly like a missing or malformed id (docs/api-design.md, Lists). Filters that match a link
 * between records (parentTransactionId, cryptoTransactionId, …) are not resources and answer an
 * empty page instead; their own tests cover them.
 */
type Resource = 'customerId' | 'portfolioId' | 'walletId' | 'cardId';
interface Owned {
  customerId: string;
  portfolioId: string;
  walletId: string;
  cardId: string;
}

const filters: ReadonlyArray<readonly [path: string, parameter: string, resource: Resource]> = [
  ['/v1/wallets', 'customerId', 'customerId'],
  ['/v1/wallets', 'portfolioId', 'portfolioId'],
  ['/v1/transactions', 'walletId', 'walletId'],
  ['/v1/baas/transactions', 'walletId', 'walletId'],
  ['/v1/baas/transactions', 'customerId', 'customerId'],
  ['/v1/baas/transactions', 'userId', 'customerId'],
  ['/v1/baas/transactions', 'portfolioId', 'portfolioId'],
  ['/v1/cards', 'customerId', 'customerId'],
  ['/v1/cards/transactions', 'cardId', 'cardId'],
  ['/v1/vault/audit', 'customerId', 'customerId'],
  ['/v1/vault/audit', 'cardId', 'cardId'],
  ['/v1/digital/addresses', 'walletId', 'walletId'],
  ['/v1/digital/transactions', 'walletId', 'walletId'],
  ['/v1/credit-lines', 'customerId', 'customerId'],
];

let t: TestContext;
let ownA: Owned;
let ownB: Owned;

async function owned(client: TestClient): Promise<Owned> {
  const card = await issuedCard(t, client);
  return { customerId: card.wallet.customerId, portfolioId: card.wallet.portfolioId, walletId: card.wallet.walletId, cardId: card.cardId };
}

beforeAll(async () => {
  t = await createTestApp();
  ownA = await owned(t.clientA);
  ownB = await owned(t.clientB);
});
afterAll(async () => {
  await t.close();
});

describe.each(filters)('GET %s?%s=', (path, parameter, resource) => {
  it("200 with the owner's id", async () => {
    const response = await t.request({ url: `${path}?${parameter}=${ownA[resource]}` });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  });

  it("404 naming the parameter for another client's id, the same as for an unknown or malformed one", async () => {
    const answers = [];
    for (const id of [ownB[resource], '019c0000-0000-7000-8000-000000000000', 'not-an-id']) {
      const response = await t.request({ url: `${path}?${parameter}=${id}` });
      expect(response.status, `${id}: ${JSON.stringify(response.body)}`).toBe(404);
      answers.push({ ...response.body, traceId: undefined });
    }
    expect(answers[0]).toMatchObject({ code: 'NOT_FOUND', details: [{ field: parameter }] });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it('400 VALIDATION_ERROR naming the parameter when it is empty (no id at all), on every list alike', async () => {
    const response = await t.request({ url: `${path}?${parameter}=` });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: parameter }] });
  });
});

describe('the paging parameters are checked whatever the filters match', () => {
  it.each([
    ['/v1/transactions?parentTransactionId=019c0000-0000-7000-8000-00000000000a&startAfterId=garbage', 'startAfterId'],
    ['/v1/transactions?cardTransactionId=019c0000-0000-7000-8000-00000000000a&offset=1&startAfterId=019c0000-0000-7000-8000-000000000000', 'offset'],
    ['/v1/transactions?parentBankTransactionId=019c0000-0000-7000-8000-00000000000a&createdAfter=2026-02-30', 'createdAfter'],
  ])('%s: 400 naming %s (a linking filter nothing links to answered an empty page first)', async (url, field) => {
    const response = await t.request({ url });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.details[0].field).toBe(field);
  });

  it.each([
    ['/v1/events?type=CUSTOMER_CREATED&type=CUSTOMER_CREATED', 'type', 2],
    ['/v1/transactions?limit=5&limit=6&limit=7', 'limit', 3],
    ['/v1/customers?email=a%40example.com&email=b%40example.com', 'email', 2],
  ])('%s: 400 naming %s, sent more than once (it was told "must be string; or must be one of …")', async (url, field, times) => {
    const response = await t.request({ url });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.details).toEqual([{ field, message: `must be sent once (it was sent ${times} times)` }]);
  });

  it.each([
    ['email=%zz', 'email'],
    ['email=%C0%AF', 'email'],
    ['email=%ED%A0%80', 'email'],
    ['type=%C0%AF', 'type'],
    ['%zz=1', 'querystring'],
  ])('a query string that does not decode (?%s) is 400 naming %s (it was read as written, or told "must be one of")', async (query, field) => {
    const response = await t.request({ url: `/v1/customers?${query}` });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field, message: expect.stringContaining('percent-encoding') }] });
  });

  it('percent escapes that decode are read as before: %40, %2B, + for a space, %E2%82%AC', async () => {
    for (const query of ['email=a%40example.com', 'email=a%2Bb%40example.com', 'email=a+b%40example.com', 'email=%E2%82%AC%40example.com']) {
      const response = await t.request({ url: `/v1/customers?${query}` });
      expect(response.status, `${query}: ${JSON.stringify(response.body)}`).not.toBe(500);
      expect(JSON.stringify(response.body), query).not.toContain('percent-encoding');
    }
  });

  it('a parameter with an empty name (?=5) is told so (it was said to be the query string, "not a known query parameter")', async () => {
    const response = await t.request({ url: '/v1/customers?=5' });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'querystring', message: 'holds a parameter with an empty name (as in ?=5), which no parameter has' }] });
  });

  it('a linking filter that is not an id is 400 naming it (a typo answered an empty page until 2026-12-08); an id nothing links to answers an empty page', async () => {
    for (const [name, value] of [['parentTransactionId', 'abc'], ['cardTransactionId', '%F0%9F%92%B3'], ['cryptoTransactionId', '%20019c0000-0000-7000-8000-000000000000']] as const) {
      const response = await t.request({ url: `/v1/transactions?${name}=${value}&limit=5` });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: name, message: expect.stringContaining('must be an id') }] });
    }
    const response = await t.request({ url: '/v1/transactions?parentTransactionId=019C0000-0000-7000-8000-00000000000A&limit=5' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ data: [], pagination: { totalResults: 0, hasMoreResults: false, nextStartAfterId: null } });
  });

  it.each(['/v1/baas/transactions', '/v1/digital/transactions'])(
    '%s?cryptoTransactionId=: not an id is 400 naming it, an id nothing links to an empty page, as on /v1/transactions, and paging is checked',
    async (path) => {
      const malformed = await t.request({ url: `${path}?cryptoTransactionId=abc&limit=5` });
      expect(malformed.status, JSON.stringify(malformed.body)).toBe(400);
      expect(malformed.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'cryptoTransactionId' }] });
      const response = await t.request({ url: `${path}?cryptoTransactionId=019c0000-0000-7000-8000-000000000000&limit=5` });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toMatchObject({ data: [], pagination: { totalResults: 0, hasMoreResults: false, nextStartAfterId: null } });
      const badCursor = await t.request({ url: `${path}?cryptoTransactionId=019c0000-0000-7000-8000-000000000000&startAfterId=garbage` });
      expect(badCursor.status).toBe(400);
      expect(badCursor.body.details[0].field).toBe('startAfterId');
    },
  );

  it('GET /v1/baas/transactions with customerId and userId: each is checked (404), two different customers match nothing, and paging is checked', async () => {
    const unknown = await t.request({ url: `/v1/baas/transactions?customerId=${ownA.customerId}&userId=${ownB.customerId}` });
    expect(unknown.status).toBe(404);
    expect(unknown.body.details[0].field).toBe('userId');
    const other = await owned(t.clientA);
    const different = await t.request({ url: `/v1/baas/transactions?customerId=${ownA.customerId}&userId=${other.customerId}` });
    expect(different.status).toBe(200);
    expect(different.body.data).toEqual([]);
    const badCursor = await t.request({ url: `/v1/baas/transactions?customerId=${ownA.customerId}&userId=${other.customerId}&startAfterId=garbage` });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.details[0].field).toBe('startAfterId');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { countRows, createIndividual } from '../../../test/customers/fixtures.js';
import { portfoliosPerCustomerMax } from './customers.service.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('portfolios', () => {
  it('201: creates an empty portfolio that the customer record then lists', async () => {
    const customer = await createIndividual(t);
    t.clock.advance(10);
    const response = await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/portfolios`, body: { name: 'Savings' } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.data).toMatchObject({ customerId: customer.id, name: 'Savings', default: false, wallets: [] });

    const record = await t.request({ url: `/v1/customers/${customer.id}` });
    expect(record.body.data.portfolios.map((portfolio: { name: string }) => portfolio.name)).toEqual(['Default', 'Savings']);

    const list = await t.request({ url: `/v1/customers/${customer.id}/portfolios` });
    expect(list.status).toBe(200);
    expect(list.body.data.map((portfolio: { name: string }) => portfolio.name)).toEqual(['Savings', 'Default']);
    expect(list.body.pagination.totalResults).toBe(2);

    const one = await t.request({ url: `/v1/customers/${customer.id}/portfolios/${response.body.data.id}` });
    expect(one.body.data).toEqual(response.body.data);
  });

  it('400: refuses a missing or too long name', async () => {
    const customer = await createIndividual(t);
    expect((await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/portfolios`, body: {} })).body.details[0].field).toBe('name');
    const long = await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/portfolios`, body: { name: 'p'.repeat(101) } });
    expect(long.status).toBe(400);
    expect(long.body.details[0].field).toBe('name');
  });

  it('404: a portfolio of another customer or client, or a malformed id', async () => {
    const customer = await createIndividual(t);
    const other = await createIndividual(t);
    const stranger = await createIndividual(t, t.clientB);
    for (const path of [
      `/v1/customers/${customer.id}/portfolios/${other.portfolios[0].id}`,
      `/v1/customers/${customer.id}/portfolios/not-an-id`,
      `/v1/customers/${stranger.id}/portfolios/${stranger.portfolios[0].id}`,
      `/v1/customers/${stranger.id}/portfolios`,
    ]) {
      const response = await t.request({ url: path });
      expect(response.status, path).toBe(404);
    }
  });

  it('422: refuses more than the portfolio limit per customer', async () => {
    const customer = await createIndividual(t);
    for (let index = 1; index < portfoliosPerCustomerMax; index++) {
      expect((await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/portfolios`, body: { name: `P${index}` } })).status).toBe(201);
    }
    const response = await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/portfolios`, body: { name: 'One too many' } });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('RESOURCE_LIMIT_REACHED');
  });
});

describe('wallets', () => {
  it('201: adds a non-primary wallet to a portfolio; the portfolio and the customer record list it', async () => {
    const customer = await createIndividual(t);
    const portfolio = customer.portfolios[0];
    t.clock.advance(10);
    const response = await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/portfolios/${portfolio.id}/wallets`, body: { name: 'Travel' } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const wallet = response.body.data;
    expect(wallet).toMatchObject({ customerId: customer.id, portfolioId: portfolio.id, name: 'Travel', primary: false, virtualAccount: null });
    expect(Object.keys(wallet).sort()).toEqual(['createdAt', 'customerId', 'id', 'name', 'portfolioId', 'primary', 'virtualAccount']);

    const record = await t.request({ url: `/v1/customers/${customer.id}/portfolios/${portfolio.id}` });
    expect(record.body.data.wallets).toEqual([portfolio.wallets[0], wallet.id]);
    expect((await t.request({ url: `/v1/wallets/${wallet.id}` })).body.data).toEqual(wallet);
  });

  it('lists wallets by customer and by portfolio, newest first', async () => {
    const customer = await createIndividual(t);
    const portfolio = customer.portfolios[0];
    t.clock.advance(10);
    const savings = (await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/portfolios`, body: { name: 'Savings' } })).body.data;
    t.clock.advance(10);
    const extra = (await t.request({ method: 'POST', url: `/v1/customers/${customer.id}/portfolios/${savings.id}/wallets`, body: { name: 'Rainy day' } })).body.data;
    const byCustomer = await t.request({ url: `/v1/wallets?customerId=${customer.id}` });
    expect(byCustomer.status).toBe(200);
    expect(byCustomer.body.data.map((wallet: { id: string }) => wallet.id)).toEqual([extra.id, portfolio.wallets[0]]);
    const byPortfolio = await t.request({ url: `/v1/wallets?portfolioId=${savings.id}` });
    expect(byPortfolio.body.data.map((wallet: { id: string }) => wallet.id)).toEqual([extra.id]);
    const all = await t.request({ url: '/v1/wallets?limit=200' });
    expect(all.body.data.length).toBeGreaterThanOrEqual(2);
  });

  it('404: unknown, malformed or foreign ids, in the path or the query', async () => {
    const customer = await createIndividual(t);
    const stranger = await createIndividual(t, t.clientB);
    // Another customer of the same client: its portfolio is unknown under this customer, in the query as in the path.
    const neighbour = await createIndividual(t);
    const before = await countRows(t, 'wallets');
    for (const [method, path] of [
      ['GET', `/v1/wallets?customerId=${customer.id}&portfolioId=${neighbour.portfolios[0].id}`],
      ['GET', `/v1/wallets/${stranger.portfolios[0].wallets[0]}`],
      ['GET', '/v1/wallets/not-a-uuid'],
      ['GET', `/v1/wallets?customerId=${stranger.id}`],
      ['GET', '/v1/wallets?customerId=nope'],
      ['GET', `/v1/wallets?portfolioId=${stranger.portfolios[0].id}`],
      ['POST', `/v1/customers/${customer.id}/portfolios/${stranger.portfolios[0].id}/wallets`],
      ['POST', `/v1/customers/${stranger.id}/portfolios/${stranger.portfolios[0].id}/wallets`],
    ] as const) {
      const response = await t.request({ method, url: path, ...(method === 'POST' ? { body: { name: 'X' } } : {}) });
      expect(response.status, path).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
    expect(await countRows(t, 'wallets')).toBe(before);
  });

  it('exports the lookups other modules use', async () => {
    const { findWallet, findCustomer, primaryWalletOf } = await import('./index.js');
    const customer = await createIndividual(t);
    const walletId = customer.portfolios[0].wallets[0];
    expect((await findWallet(t.deps.db, t.clientA.id, walletId))?.customer_id).toBe(customer.id);
    expect(await findWallet(t.deps.db, t.clientB.id, walletId)).toBeUndefined();
    expect(await findWallet(t.deps.db, t.clientA.id, 'not-a-uuid')).toBeUndefined();
    expect((await findCustomer(t.deps.db, t.clientA.id, customer.id))?.email).toBe(customer.email);
    expect(await findCustomer(t.deps.db, t.clientA.id, 'zzz')).toBeUndefined();
    expect((await primaryWalletOf(t.deps.db, t.clientA.id, customer.id))?.id).toBe(walletId);
    expect(await primaryWalletOf(t.deps.db, t.clientB.id, customer.id)).toBeUndefined();
  });
});

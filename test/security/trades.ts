import crypto from 'node:crypto';
import type { SecurityCase } from './types.js';
import { createIndividual } from '../customers/fixtures.js';
import { fundWallet } from '../ledger/fixtures.js';
import type { TestClient, TestContext } from '../harness.js';

/** A new customer of `client` with a primary wallet holding 1 BTC. */
async function btcHolder(t: TestContext, client: TestClient): Promise<{ customerId: string; walletId: string }> {
  const customer = await createIndividual(t, client);
  const wallets = await t.request({ url: `/v1/wallets?customerId=${customer.id}`, key: client.key });
  const walletId = wallets.body.data?.[0]?.id as string | undefined;
  if (!walletId) throw new Error(`no wallet for the new customer: ${JSON.stringify(wallets.body)}`);
  await fundWallet(t, client.id, walletId, 100_000_000n, 'BTC');
  return { customerId: customer.id as string, walletId };
}

const sellHalfBitcoin = (customerId: string) => ({ customerId, fromAssetId: 'BTC', toAssetId: 'USD', fromAmount: '0.5', feeAssetId: 'USD', side: 'sell', direction: 'direct' });

/** An open quote of a new customer of `client`, and the customer's wallet. */
async function openQuote(t: TestContext, client: TestClient): Promise<{ quoteId: string; walletId: string }> {
  const { customerId, walletId } = await btcHolder(t, client);
  const response = await t.request({ method: 'POST', url: '/v1/trades/quotes', key: client.key, body: sellHalfBitcoin(customerId) });
  if (response.status !== 201) throw new Error(`quote failed: ${JSON.stringify(response.body)}`);
  return { quoteId: response.body.data.quoteId as string, walletId };
}

export const tradeSecurityCases: SecurityCase[] = [
  { method: 'GET', route: '/v1/trades/asset-pairs', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/trades/asset-pairs' }) },
  {
    method: 'POST',
    route: '/v1/trades/quotes',
    ownsResource: true,
    prepare: async (t, client) => ({ url: '/v1/trades/quotes', body: sellHalfBitcoin((await btcHolder(t, client)).customerId) }),
  },
  {
    method: 'GET',
    route: '/v1/trades/quotes/:quoteId',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/trades/quotes/${(await openQuote(t, client)).quoteId}` }),
  },
  {
    method: 'POST',
    route: '/v1/trades/quotes/:quoteId/execute',
    ownsResource: true,
    prepare: async (t, client) => {
      const { quoteId, walletId } = await openQuote(t, client);
      return { url: `/v1/trades/quotes/${quoteId}/execute`, body: { walletId } };
    },
  },
];

/** The sandbox price controls act on the caller's own prices and name no resource. */
export const sandboxPriceSecurityCases: SecurityCase[] = [
  { method: 'GET', route: '/v1/sandbox/prices', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/sandbox/prices' }) },
  {
    method: 'PUT',
    route: '/v1/sandbox/prices/:symbol',
    ownsResource: false,
    // A different price each time, so the key-reuse check has a different request to refuse.
    prepare: () => Promise.resolve({ url: '/v1/sandbox/prices/ETH-USD', body: { price: `${3000 + crypto.randomInt(1000)}.00` } }),
  },
];

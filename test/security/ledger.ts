import type { SecurityCase } from './types.js';
import { fundWallet, newWallet } from '../ledger/fixtures.js';
import type { TestClient, TestContext } from '../harness.js';

async function fundedPair(t: TestContext, client: TestClient) {
  const source = await newWallet(t, client);
  const destination = await newWallet(t, client);
  await fundWallet(t, client.id, source, 100_000n);
  return { source, destination };
}

const transferCase = (route: string): SecurityCase => ({
  method: 'POST',
  route,
  ownsResource: true,
  prepare: async (t, client) => {
    const { source, destination } = await fundedPair(t, client);
    return { url: route, body: { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' } };
  },
});

export const ledgerSecurityCases: SecurityCase[] = [
  transferCase('/internal-transfer'),
  transferCase('/v1/internal-transfer'),
  transferCase('/v1/baas/transactions/internal-transfer'),
  {
    method: 'GET',
    route: '/v1/wallets/:id/balance',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/wallets/${await newWallet(t, client)}/balance` }),
  },
  {
    method: 'GET',
    route: '/v1/transactions',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/transactions?walletId=${await newWallet(t, client)}` }),
  },
  {
    method: 'GET',
    route: '/v1/transactions/:id',
    ownsResource: true,
    prepare: async (t, client) => {
      const { source, destination } = await fundedPair(t, client);
      const response = await t.request({
        method: 'POST',
        url: '/internal-transfer',
        key: client.key,
        body: { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' },
      });
      return { url: `/v1/transactions/${response.body.data.source.transactionId}` };
    },
  },
];

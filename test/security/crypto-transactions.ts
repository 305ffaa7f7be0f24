import type { TestClient, TestContext } from '../harness.js';
import { addressOf, cryptoDeposit, destinations, fundCrypto, newWallet } from '../crypto/fixtures.js';
import type { SecurityCase } from './types.js';

/** Security cases of crypto addresses, withdrawals, crypto transaction records and the sandbox chain controls. */

async function pendingCryptoDeposit(t: TestContext, client: TestClient): Promise<string> {
  const walletId = await newWallet(t, client);
  const address = await addressOf(t, walletId, 'BTC', undefined, client);
  const response = await cryptoDeposit(t, { address, asset: 'BTC', amount: '0.01000000' }, client);
  if (response.status !== 201) throw new Error(`the crypto deposit failed: ${JSON.stringify(response.body)}`);
  return response.body.data.id as string;
}

async function fundedWallet(t: TestContext, client: TestClient): Promise<string> {
  const walletId = await newWallet(t, client);
  await fundCrypto(t, walletId, 'USDC', '100.00', 'TRON', client);
  return walletId;
}

export const cryptoTransactionSecurityCases: SecurityCase[] = [
  {
    method: 'POST',
    route: '/v1/digital/addresses',
    ownsResource: true,
    prepare: async (t, client) => ({ url: '/v1/digital/addresses', body: { walletId: await newWallet(t, client), asset: 'BTC' } }),
  },
  {
    method: 'GET',
    route: '/v1/digital/addresses',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/digital/addresses?walletId=${await newWallet(t, client)}` }),
  },
  {
    method: 'POST',
    route: '/v1/digital/withdrawal',
    ownsResource: true,
    prepare: async (t, client) => ({
      url: '/v1/digital/withdrawal',
      body: { walletId: await fundedWallet(t, client), asset: 'USDC', network: 'TRON', amount: '5.00', address: destinations.TRON },
    }),
  },
  {
    method: 'GET',
    route: '/v1/digital/transactions',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/digital/transactions?walletId=${await newWallet(t, client)}` }),
  },
  {
    method: 'GET',
    route: '/v1/digital/transactions/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/digital/transactions/${await pendingCryptoDeposit(t, client)}` }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/crypto-deposits',
    ownsResource: true,
    prepare: async (t, client) => ({
      url: '/v1/sandbox/crypto-deposits',
      body: { address: await addressOf(t, await newWallet(t, client), 'ETH', undefined, client), asset: 'ETH', amount: '0.25' },
    }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/chains/:network/blocks',
    ownsResource: false,
    prepare: async () => ({ url: '/v1/sandbox/chains/BITCOIN/blocks', body: { count: 1 } }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/crypto-transactions/:id/confirm',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/sandbox/crypto-transactions/${await pendingCryptoDeposit(t, client)}/confirm`, body: { confirmations: 1 } }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/crypto-transactions/:id/fail',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/sandbox/crypto-transactions/${await pendingCryptoDeposit(t, client)}/fail`, body: { reason: 'reorg' } }),
  },
];

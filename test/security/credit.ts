/* eslint-disable @typescript-eslint/no-explicit-any */
import crypto from 'node:crypto';
import type { SecurityCase } from './types.js';
import type { TestClient, TestContext } from '../harness.js';
import { cardPrograms } from '../cards/fixtures.js';
import { authorize, onParent } from '../cards/card-network.js';
import { creditCard, openLine } from '../credit/fixtures.js';

/** A line of `client` that owes 50.00 USD of principal, with 100.00 USD in its wallet to repay it. */
async function owingLine(t: TestContext, client: TestClient) {
  const line = await openLine(t, { usd: 10_000n, client });
  const cardId = await creditCard(t, line, client);
  const auth = await authorize(t, cardId, { amount: 50 }, client);
  await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 50 }, client);
  return line;
}

export const creditSecurityCases: SecurityCase[] = [
  {
    method: 'POST',
    route: '/v1/credit-lines',
    ownsResource: true,
    prepare: async (t, client) => {
      const line = await openLine(t, { client, lock: null });
      return { url: '/v1/credit-lines', body: { customerId: line.wallet.customerId, collateralWalletId: line.wallet.walletId, collateralAsset: 'BTC', currency: 'USD', creditLimit: '1000.00' } };
    },
  },
  { method: 'GET', route: '/v1/credit-lines', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/credit-lines' }) },
  {
    method: 'GET',
    route: '/v1/credit-lines/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/credit-lines/${(await openLine(t, { client, lock: null })).lineId}` }),
  },
  {
    method: 'POST',
    route: '/v1/credit-lines/:id/collateral',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/credit-lines/${(await openLine(t, { client, lock: null })).lineId}/collateral`, body: { amount: '0.10000000' } }),
  },
  {
    method: 'POST',
    route: '/v1/credit-lines/:id/collateral/release',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/credit-lines/${(await openLine(t, { client })).lineId}/collateral/release`, body: { amount: '0.10000000' } }),
  },
  {
    method: 'POST',
    route: '/v1/credit-lines/:id/payments',
    ownsResource: true,
    prepare: async (t, client) => {
      const line = await owingLine(t, client);
      return { url: `/v1/credit-lines/${line.lineId}/payments`, body: { walletId: line.wallet.walletId, amount: '10.00' } };
    },
  },
  { method: 'GET', route: '/v1/credit-settings', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/credit-settings' }) },
  {
    method: 'PATCH',
    route: '/v1/sandbox/credit-settings',
    ownsResource: false,
    // A different penalty each time, so the key-reuse check has a different request to refuse.
    prepare: () => Promise.resolve({ url: '/v1/sandbox/credit-settings', body: { liquidationPenaltyRate: `0.0${100 + crypto.randomInt(800)}` } }),
  },
  {
    method: 'POST',
    route: '/v1/cards/credit',
    ownsResource: true,
    prepare: async (t, client) => {
      const line = await openLine(t, { client });
      const programs: Record<string, any> = await cardPrograms(t, client);
      return {
        url: '/v1/cards/credit',
        body: { customerId: line.wallet.customerId, cardProgramId: programs['Crypto-backed Credit'].id, isVirtual: true, isPrimary: false, collateralWalletId: line.wallet.walletId, creditLineId: line.lineId },
      };
    },
  },
];

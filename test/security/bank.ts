import type { TestClient, TestContext } from '../harness.js';
import { createIndividual } from '../customers/fixtures.js';
import { deposit, depositBody, fund, linkedWallet, withdrawalBody } from '../bank/fixtures.js';
import type { SecurityCase } from './types.js';

/** Security cases of the bank rails: account numbers, banking details, counterparties, withdrawals, bank transactions, sandbox controls. */

const counterpartiesUrl = (customer: { id: string; portfolios: { id: string }[] }) =>
  `/v1/customers/${customer.id}/portfolios/${customer.portfolios[0]?.id ?? ''}/counterparties`;

const counterpartyBody = { transferNetwork: 'ACH_DOMESTIC', accountHolderName: 'Grace Hopper', routingNumber: '021000021', accountNumberValue: '123456789' };

async function withCounterparty(t: TestContext, client: TestClient): Promise<string> {
  const customer = await createIndividual(t, client);
  const url = counterpartiesUrl(customer);
  const created = await t.request({ method: 'POST', url, key: client.key, body: counterpartyBody });
  if (created.status !== 201) throw new Error(`creating a counterparty failed: ${JSON.stringify(created.body)}`);
  return `${url}/${created.body.data.id as string}`;
}

async function pendingDeposit(t: TestContext, client: TestClient): Promise<string> {
  const wallet = await linkedWallet(t, client);
  const received = await deposit(t, wallet.virtualAccountNumber, '10.00', {}, client);
  return received.id as string;
}

const accountNumberCases: SecurityCase[] = ['/v1/virtual-accounts', '/v1/baas/virtual-accounts'].flatMap((base): SecurityCase[] => [
  {
    method: 'POST',
    route: `${base}/assign-dedicated-account-number`,
    ownsResource: true,
    prepare: async (t, client) => ({ url: `${base}/assign-dedicated-account-number`, body: { walletId: (await linkedWallet(t, client)).walletId } }),
  },
  {
    method: 'POST',
    route: `${base}/assign-vrn`,
    ownsResource: true,
    prepare: async (t, client) => {
      const wallet = await linkedWallet(t, client);
      return { url: `${base}/assign-vrn`, body: { userId: wallet.customerId, virtualAccountNumber: wallet.virtualAccountNumber } };
    },
  },
  {
    method: 'GET',
    route: `${base}/banking-details/:walletId`,
    ownsResource: true,
    prepare: async (t, client) => ({ url: `${base}/banking-details/${(await linkedWallet(t, client)).walletId}?type=FEDWIRE` }),
  },
]);

const counterpartyCases: SecurityCase[] = [
  {
    method: 'POST',
    route: '/v1/customers/:customerId/portfolios/:portfolioId/counterparties',
    ownsResource: true,
    prepare: async (t, client) => ({ url: counterpartiesUrl(await createIndividual(t, client)), body: counterpartyBody }),
  },
  {
    method: 'GET',
    route: '/v1/customers/:customerId/portfolios/:portfolioId/counterparties',
    ownsResource: true,
    prepare: async (t, client) => ({ url: counterpartiesUrl(await createIndividual(t, client)) }),
  },
  {
    method: 'GET',
    route: '/v1/customers/:customerId/portfolios/:portfolioId/counterparties/:counterpartyId',
    ownsResource: true,
    prepare: async (t, client) => ({ url: await withCounterparty(t, client) }),
  },
  {
    method: 'PATCH',
    route: '/v1/customers/:customerId/portfolios/:portfolioId/counterparties/:counterpartyId',
    ownsResource: true,
    prepare: async (t, client) => ({ url: await withCounterparty(t, client), body: { name: 'Renamed' } }),
  },
  {
    method: 'DELETE',
    route: '/v1/customers/:customerId/portfolios/:portfolioId/counterparties/:counterpartyId',
    ownsResource: true,
    prepare: async (t, client) => ({ url: await withCounterparty(t, client) }),
  },
];

const withdrawalCases: SecurityCase[] = ['/v1/baas/transactions/withdrawal', '/v1/baas/withdrawals'].map((url) => ({
  method: 'POST',
  route: url,
  ownsResource: true,
  prepare: async (t, client) => {
    const wallet = await linkedWallet(t, client);
    await fund(t, wallet, '100.00', 'USD', client);
    return { url, body: withdrawalBody(wallet.walletId) };
  },
}));

const bankTransactionCases: SecurityCase[] = [
  {
    method: 'GET',
    route: '/v1/baas/transactions',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/baas/transactions?walletId=${(await linkedWallet(t, client)).walletId}` }),
  },
  {
    method: 'GET',
    route: '/v1/baas/transactions/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/baas/transactions/${await pendingDeposit(t, client)}` }),
  },
];

const sandboxCases: SecurityCase[] = [
  {
    method: 'POST',
    route: '/v1/sandbox/bank-deposits',
    // A deposit names an account number, not a resource: another client's number is unroutable (201, returned), never credited.
    ownsResource: false,
    prepare: async (t, client) => ({ url: '/v1/sandbox/bank-deposits', body: depositBody((await linkedWallet(t, client)).virtualAccountNumber, '10.00') }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/bank-transactions/:id/settle',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/sandbox/bank-transactions/${await pendingDeposit(t, client)}/settle` }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/bank-transactions/:id/fail',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/sandbox/bank-transactions/${await pendingDeposit(t, client)}/fail`, body: { returnCode: 'R01' } }),
  },
];

export const bankSecurityCases: SecurityCase[] = [...accountNumberCases, ...counterpartyCases, ...withdrawalCases, ...bankTransactionCases, ...sandboxCases];

import { linkedWallet } from '../bank/fixtures.js';
import { cardPrograms, issuedCard } from '../cards/fixtures.js';
import { authorize, fundedCard } from '../cards/card-network.js';
import type { TestClient, TestContext } from '../harness.js';
import type { SecurityCase } from './types.js';
import { CoopReceiver } from '../cards/coop-receiver.js';

let decisionEndpoint: Promise<CoopReceiver> | undefined;
const subscribedClients = new Set<string>();

/** A decision endpoint shared by the cases that need one (it answers "00"); the test process ends with it. One subscription per client (a decision type has one). */
async function subscribedForDecisions(t: TestContext, client: TestClient): Promise<void> {
  if (subscribedClients.has(client.id)) return;
  subscribedClients.add(client.id);
  decisionEndpoint ??= CoopReceiver.start();
  const receiver = await decisionEndpoint;
  const response = await t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: { name: 'Decisions', url: receiver.url(), subscribedEventTypes: ['COOP_AUTH_0100'] } });
  if (response.status !== 201) throw new Error(`subscribing failed: ${JSON.stringify(response.body)}`);
}

/** A lifecycle of `client` with an open hold (a funded card authorized for 10). */
async function openAuthorization(t: TestContext, client: TestClient): Promise<string> {
  const card = await fundedCard(t, '100.00', client);
  return (await authorize(t, card.cardId, { amount: 10 }, client)).parentCardTransactionId as string;
}

const onLifecycle = (action: string, body?: Record<string, unknown>): SecurityCase => ({
  method: 'POST',
  route: `/v1/sandbox/card-transactions/:parentId/${action}`,
  ownsResource: true,
  prepare: async (t, client) => ({ url: `/v1/sandbox/card-transactions/${await openAuthorization(t, client)}/${action}`, ...(body === undefined ? {} : { body }) }),
});

/** Security cases of the cards module: programs and cards. */
export const cardSecurityCases: SecurityCase[] = [
  {
    method: 'POST',
    route: '/v1/sandbox/coop-auth/echo',
    ownsResource: true,
    prepare: async (t, client) => {
      await subscribedForDecisions(t, client);
      return { url: '/v1/sandbox/coop-auth/echo', body: { cardId: (await issuedCard(t, client, { programName: 'Cooperative Debit' })).cardId } };
    },
  },
  { method: 'GET', route: '/v1/cards/programs', ownsResource: false, prepare: async () => ({ url: '/v1/cards/programs' }) },
  {
    method: 'GET',
    route: '/v1/cards/programs/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/cards/programs/${(await cardPrograms(t, client))['Standard Debit'].id as string}` }),
  },
  {
    method: 'PATCH',
    route: '/v1/cards/programs/:id',
    ownsResource: true,
    prepare: async (t, client) => ({
      url: `/v1/cards/programs/${(await cardPrograms(t, client))['Standard Debit'].id as string}`,
      body: { limits: { perTransactionMinor: 100_000, dailyMinor: 200_000, dailyCount: 10 } },
    }),
  },
  {
    method: 'POST',
    route: '/v1/cards/debit',
    ownsResource: true,
    prepare: async (t, client) => {
      const wallet = await linkedWallet(t, client);
      const programs = await cardPrograms(t, client);
      return {
        url: '/v1/cards/debit',
        body: { customerId: wallet.customerId, cardProgramId: programs['Standard Debit'].id, isVirtual: true, isPrimary: false },
      };
    },
  },
  { method: 'GET', route: '/v1/cards', ownsResource: false, prepare: async () => ({ url: '/v1/cards' }) },
  {
    method: 'GET',
    route: '/v1/cards/:cardId',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/cards/${(await issuedCard(t, client)).cardId}` }),
  },
  {
    method: 'PATCH',
    route: '/v1/cards/:cardId',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/cards/${(await issuedCard(t, client)).cardId}`, body: { status: 'SUSPENDED' } }),
  },
  {
    method: 'POST',
    route: '/v1/cards/:cardId/activate',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/cards/${(await issuedCard(t, client, { isVirtual: false })).cardId}/activate` }),
  },
  { method: 'GET', route: '/v1/cards/transactions', ownsResource: false, prepare: async () => ({ url: '/v1/cards/transactions' }) },
  {
    method: 'GET',
    route: '/v1/cards/transactions/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/cards/transactions/${await openAuthorization(t, client)}` }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/cards/:cardId/authorizations',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/sandbox/cards/${(await fundedCard(t, '50.00', client)).cardId}/authorizations`, body: { amount: 5 } }),
  },
  onLifecycle('increments', { amount: 1 }),
  onLifecycle('advices', { amount: 12 }),
  onLifecycle('completions', { amount: 10 }),
  onLifecycle('reversals'),
  onLifecycle('refunds', { amount: 2 }),
  onLifecycle('expire'),
  {
    method: 'POST',
    route: '/v1/sandbox/cards/:cardId/financial',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/sandbox/cards/${(await fundedCard(t, '50.00', client)).cardId}/financial`, body: { amount: 5 } }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/cards/:cardId/force-posts',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/sandbox/cards/${(await fundedCard(t, '50.00', client)).cardId}/force-posts`, body: { amount: 5 } }),
  },
  {
    method: 'POST',
    route: '/v1/sandbox/iso8583',
    // The message names a card by its number: another client's card is answered 0110 "14", not 404.
    ownsResource: false,
    prepare: async () => ({ url: '/v1/sandbox/iso8583', body: { format: 'json', message: { '0': '0100', '2': '4242424242424242', '3': '000000', '4': '000000000100', '7': '0301120000', '11': '000001', '37': '600112000001' } } }),
  },
];

import { linkedWallet } from '../bank/fixtures.js';
import { cardPrograms, issuedCard } from '../cards/fixtures.js';
import type { SecurityCase } from './types.js';

/** Security cases of the cards module: programs and cards. */
export const cardSecurityCases: SecurityCase[] = [
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
];

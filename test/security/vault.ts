import { issuedCard } from '../cards/fixtures.js';
import type { SecurityCase } from './types.js';

/** Security cases of the vault's API-key routes (the reveal endpoints take vault tokens only: src/modules/vault/vault.test.ts). */
export const vaultSecurityCases: SecurityCase[] = [
  { method: 'GET', route: '/v1/vault/config', ownsResource: false, prepare: async () => ({ url: '/v1/vault/config' }) },
  {
    method: 'POST',
    route: '/v1/vault/token',
    ownsResource: true,
    prepare: async (t, client) => {
      const { wallet, cardId } = await issuedCard(t, client);
      return { url: '/v1/vault/token', body: { userId: wallet.customerId, cardId } };
    },
  },
  { method: 'POST', route: '/v1/vault/secret/rotate', ownsResource: false, prepare: async () => ({ url: '/v1/vault/secret/rotate' }) },
  { method: 'GET', route: '/v1/vault/audit', ownsResource: false, prepare: async () => ({ url: '/v1/vault/audit' }) },
];

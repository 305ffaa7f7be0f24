import type { SecurityCase } from './types.js';

/** Security cases of the digital-asset routes. */
export const cryptoSecurityCases: SecurityCase[] = [
  { method: 'GET', route: '/v1/digital/networks', ownsResource: false, prepare: async () => ({ url: '/v1/digital/networks' }) },
  { method: 'GET', route: '/v1/digital/withdrawal-fees', ownsResource: false, prepare: async () => ({ url: '/v1/digital/withdrawal-fees?asset=BTC' }) },
];

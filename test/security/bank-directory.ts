import type { SecurityCase } from './types.js';

// The validation endpoints read global reference data: nothing in them belongs to a client.
export const bankDirectorySecurityCases: SecurityCase[] = [
  {
    method: 'GET',
    route: '/v1/payments/validate/routing/:routingNumber',
    ownsResource: false,
    prepare: async () => ({ url: '/v1/payments/validate/routing/021000021' }),
  },
  {
    method: 'GET',
    route: '/v1/payments/validate/swift/:swiftCode',
    ownsResource: false,
    prepare: async () => ({ url: '/v1/payments/validate/swift/CHASUS33' }),
  },
  {
    method: 'GET',
    route: '/v1/payments/validate/iban/:iban',
    ownsResource: false,
    prepare: async () => ({ url: '/v1/payments/validate/iban/DE89370400440532013000' }),
  },
];

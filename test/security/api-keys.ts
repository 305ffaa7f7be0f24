import { apiKeyPrefix } from '../../src/modules/tenants/api-key.js';
import type { SecurityCase } from './types.js';

export const apiKeySecurityCases: SecurityCase[] = [
  {
    method: 'GET',
    route: '/v1/api-keys',
    // A list of the caller's own keys: nothing in the request names a resource, so no 404 case;
    // instead another client's list must not contain this client's keys.
    ownsResource: false,
    prepare: async () => ({ url: '/v1/api-keys' }),
    ownerMarkers: async (_t, client) => [apiKeyPrefix(client.key), apiKeyPrefix(client.readOnlyKey)],
  },
];

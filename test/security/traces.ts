import crypto from 'node:crypto';
import type { SecurityCase } from './types.js';

export const traceSecurityCases: SecurityCase[] = [
  {
    method: 'GET',
    route: '/v1/traces/:traceId',
    ownsResource: true,
    // A request of `client` sent with its own trace id: the trace then holds that request.
    prepare: async (t, client) => {
      const traceId = `security-${crypto.randomUUID()}`;
      const made = await t.request({ url: '/v1/assets', key: client.key, headers: { 'x-trace-id': traceId } });
      if (made.status !== 200) throw new Error(`the traced request failed: ${JSON.stringify(made.body)}`);
      return { url: `/v1/traces/${traceId}` };
    },
  },
];

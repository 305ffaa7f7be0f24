import type { SecurityCase } from './types.js';

/** Security cases of the sandbox's per-client clock: neither route names a resource (each acts on the caller's own clock). */
export const sandboxClockSecurityCases: SecurityCase[] = [
  { method: 'GET', route: '/v1/sandbox/clock', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/sandbox/clock' }) },
  { method: 'POST', route: '/v1/sandbox/clock/advance', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/sandbox/clock/advance', body: { seconds: 1 } }) },
];

import type { SecurityCase } from './types.js';

/** Security cases of the sandbox's per-client clock: neither route names a resource (each acts on the caller's own clock). */
export const sandboxClockSecurityCases: SecurityCase[] = [
  { method: 'GET', route: '/v1/sandbox/clock', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/sandbox/clock' }) },
  { method: 'POST', route: '/v1/sandbox/clock/advance', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/sandbox/clock/advance', body: { seconds: 1 } }) },
];

/** Seeding names no resource either: it creates the caller's own customers. */
export const sandboxSeedingSecurityCases: SecurityCase[] = [
  { method: 'POST', route: '/v1/sandbox/customers', ownsResource: false, prepare: () => Promise.resolve({ url: '/v1/sandbox/customers', body: { count: 1, fundAmount: '10.00' } }) },
];

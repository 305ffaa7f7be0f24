/**
 * The sandbox's per-client virtual clock: GET /v1/sandbox/clock and POST /v1/sandbox/clock/advance.
 */
export { registerSandboxClockRoutes } from './clock.routes.js';
export { advanceClock, advanceSecondsMax } from './clock.service.js';

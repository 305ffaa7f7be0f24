/**
 * The sandbox bank rail: the rail implementation and the /v1/sandbox bank controls.
 */
export { SandboxBankRail } from './sandbox-bank-rail.js';
export { registerSandboxBankRoutes } from './bank-controls.routes.js';

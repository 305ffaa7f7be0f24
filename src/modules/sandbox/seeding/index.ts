/**
 * Sandbox seeding: POST /v1/sandbox/customers creates approved, funded customers for demos.
 */
export { registerSandboxSeedingRoutes } from './seeding.routes.js';
export { seedCustomers, seedCountMax, type SeededCustomer } from './seeding.service.js';

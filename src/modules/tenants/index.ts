/**
 * The tenants module's public surface for other modules. (The application shell, the CLI and the
 * start-up code use its authentication and administration files directly.)
 */
export { registerApiKeyRoutes } from './api-keys.routes.js';

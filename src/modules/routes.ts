import type { App } from '../platform/http/app-type.js';
import type { Deps } from '../platform/deps.js';
import type { ClientSeeder } from '../platform/deps.js';
import { registerAssetRoutes } from './assets/index.js';
import { registerBankDirectoryRoutes } from './bank-directory/index.js';
import { registerCustomersModuleRoutes, seedMembershipPrograms } from './customers/index.js';
import { registerEventRoutes } from './webhooks/events.routes.js';

/** Every module's routes, registered once by buildApp. */
export function registerModuleRoutes(app: App, deps: Deps): void {
  registerAssetRoutes(app, deps);
  registerEventRoutes(app, deps);
  registerBankDirectoryRoutes(app, deps);
  registerCustomersModuleRoutes(app, deps);
}

/** Work every module does when a client is created (default programs and so on). */
export const clientSeeders: readonly ClientSeeder[] = [seedMembershipPrograms];

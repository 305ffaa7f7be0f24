/**
 * Public surface of the customers module: other modules import only from here.
 */
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import type { CustomersHooks } from './customers-hooks.js';
import { registerCustomerRoutes } from './routes/customers.routes.js';
import { registerPortfolioRoutes } from './routes/portfolios.routes.js';
import { registerRelationRoutes } from './routes/relations.routes.js';

export function registerCustomersModuleRoutes(app: App, deps: Deps, hooks: CustomersHooks = {}): void {
  registerCustomerRoutes(app, deps, hooks);
  registerRelationRoutes(app, deps, hooks);
  registerPortfolioRoutes(app, deps);
}

export type { CustomerChanged, CustomersHooks, IdentityChanging } from './customers-hooks.js';

export { createIndividual, seedMembershipPrograms, revealCustomerDocuments, type CustomerDocuments, findCustomer, findWallet, createWallet, primaryWalletOf, getCustomer, getPortfolio, getWallet, walletView } from './customers.service.js';
export { assertKycEditable, isKycEditable, kycEditableStatuses, maskSsn, occupationGroups, type CustomerType } from './customer-rules.js';
export type { CustomerRow, WalletRow, PortfolioRow } from './customers.store.js';
export type { Address } from './customers.tables.js';
export { CustomerCreatedPayload } from './customers.events.js';

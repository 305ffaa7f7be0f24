/**
 * Public surface of the counterparties module (saved beneficiaries of a portfolio): other modules
 * import only from here.
 */
export { registerCounterpartyRoutes } from './counterparties.routes.js';
export { findSavedCounterparty, type CounterpartyView } from './counterparties.service.js';

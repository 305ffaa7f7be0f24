/**
 * Crypto-backed credit (contract §12.10): credit lines secured by locked BTC or ETH, their LTV
 * monitoring with the six LTV events, liquidation, daily interest, and the funding source of
 * credit cards. Other modules use only what this file exports.
 */
export { registerCreditLineRoutes } from './credit-lines.routes.js';
export {
  creditInterestTimer,
  lineInterestTimer,
  findCreditLine,
  creditPriceChangedHook,
  type CreditLineRow,
} from './credit-lines.service.js';
export { creditLineFunding, creditCardHistoryTypes, type CreditLineFundingSource } from './credit-funding.js';
export type { CreditLineStatus } from './credit.tables.js';

/**
 * Public surface of the bank-transfers module: ACH, Fedwire and SWIFT withdrawals and deposits,
 * their lifecycle records, the rail interface, and the input rules shared with counterparties.
 * Other modules import only from here.
 */
export { registerBankTransferRoutes } from './routes/bank-transfers.routes.js';
export { BankTransactionSchema, BankCounterpartySchema } from './routes/schemas.js';
export * from './withdrawal-rules.js';
export { resolveBank, type BankOfAccount } from './bank-identifiers.js';
export { unconnectedBankRail, type BankRail, type RailPayment, type RailPlan } from './bank-rail.js';
export { requireBankAsset, type BankTransferRuntime, type FindCounterparty, type SavedCounterparty } from './runtime.js';
export { receiveDeposit, type DepositRequest, type DepositOutcome } from './deposits.service.js';
export { createWithdrawal, type WithdrawalRequest } from './withdrawals.service.js';
export { settleBankTransaction, failBankTransaction, runDueSettlements, settlementTimer } from './settlement.service.js';
export { getBankTransaction, listBankTransfers } from './bank-transactions.service.js';
export { bankTransactionView, type BankTransactionView, type BankTransferGroupView } from './bank-transfer.js';
export type { BankNetwork } from './bank-transfers.tables.js';
export { describeReturnCode, magicReturnCode, returnCodeDescriptions, returnCodePattern, defaultReturnCode, unroutableReturnCode } from './return-codes.js';

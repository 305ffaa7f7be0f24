/**
 * The ledger: the only code that changes money. Other modules call these functions inside their
 * own database transaction (they take the caller's `tx`), so a business record, its ledger
 * movement and its events commit together or not at all.
 */
export * from './ledger.js';
export type * from './ledger-operations.js';
export { walletTransactionPurposes } from './ledger-operations.js';
export { LedgerBatch, insufficientFundsMessage, type LoadOptions, type WalletsExist } from './ledger-batch.js';
export { lockWalletAccountText, type AccountRow } from './ledger.store.js';
export {
  runLedgerOperation,
  runLedgerOperations,
  postTransfer,
  placeHold,
  incrementHold,
  captureHold,
  forcePost,
  releaseHold,
  expireHold,
  recordPendingCredit,
  clearPendingCredit,
  failPendingCredit,
  walletBalances,
  walletBalancesMany,
  systemAccountBalance,
  findHold,
  lockWalletAccount,
  lockWalletAccounts,
  findExpiredHolds,
  findPendingCredit,
  type HoldView,
  type PendingCreditView,
} from './ledger.service.js';
export { verifyLedger, formatVerifyReport, ledgerVerifyCommand, type VerifyReport, type VerifyCheck } from './ledger-verify.js';
export type { WalletTransactionsTable } from './ledger.tables.js';
export { registerWalletBalanceRoutes, type WalletExists } from './routes/wallet-balance.routes.js';

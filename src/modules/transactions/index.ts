/** The unified wallet transaction history (read side; the ledger writes the records). */
export { registerTransactionRoutes, WalletTransactionSchema } from './routes/transactions.routes.js';
export { walletTransactionView, linkingFilters, type WalletTransactionView } from './transactions.js';
export { walletTransactionsQuery } from './transactions.store.js';

/** Internal transfers: money between two wallets of one client, through the ledger. */
export { registerInternalTransferRoutes, internalTransferPaths } from './routes/internal-transfer.routes.js';
export { validateInternalTransfer, type InternalTransferData, type InternalTransferRequest } from './internal-transfers.service.js';
export { walletExists, walletsExist } from './wallet-directory.js';

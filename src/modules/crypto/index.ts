export {
  assetNetworks,
  bitcoinNetworkDefault,
  bitcoinNetworkNames,
  confirmationsRequiredDefault,
  confirmationsRequiredMax,
  cryptoAssetCodes,
  cryptoNetworkNames,
  cryptoNetworkOverrides,
  describeCryptoNetwork,
  isBitcoinNetwork,
  isCryptoNetworkName,
  listCryptoNetworks,
  memoSupported,
  requireAssetNetwork,
  resolveAssetNetwork,
  tokenContractOf,
  tokenContracts,
  type AddressFormat,
  type BitcoinNetwork,
  type CryptoNetwork,
  type CryptoNetworkName,
  type NetworkResolution,
  type NetworkSettings,
  type TokenContract,
  type WithdrawalFee,
} from './networks.js';
export { deriveSandboxAddress, type SandboxAddressInput } from './address-derivation.js';
export {
  addressLengthMax,
  decodeBitcoinAddress,
  isOnEd25519Curve,
  memoLengthMax,
  requireValidWithdrawalDestination,
  validateWithdrawalDestination,
  type BitcoinAddress,
  type BitcoinAddressType,
  type DestinationCheck,
  type DestinationErrorCode,
  type DestinationInput,
  type ValidDestination,
} from './address-validation.js';
export {
  formatTxHash,
  generateSandboxTxHash,
  requireValidTxHash,
  txHashByteLengths,
  txHashLengthMax,
  validateTxHash,
  type TxHashCheck,
} from './tx-hash.js';
export { registerCryptoRoutes } from './crypto.routes.js';
export { registerCryptoTransferRoutes, registerSandboxCryptoRoutes, CryptoTransactionSchema, CryptoTransferGroupSchema } from './crypto-transfers.routes.js';
export { listCryptoTransfers, getCryptoTransaction, type CryptoSettings, type CryptoTransferFilters } from './crypto-transfers.service.js';
export type { CryptoTransactionView, CryptoTransferGroupView } from './crypto-transfer.js';
export { mineDueBlocks } from './block-worker.js';

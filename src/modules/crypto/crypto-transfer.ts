import type { Selectable } from 'kysely';
import { assert } from '../../platform/assert.js';
import { formatAmount } from '../../platform/money/amount.js';
import { findAsset, type Asset } from '../../platform/money/assets.js';
import type { CryptoDirection, CryptoStatus, CryptoTransactionType, CryptoTransactionsTable, CryptoTransfersTable } from './crypto.tables.js';
import type { CryptoNetworkName } from './networks.js';

export type CryptoTransferRow = Selectable<CryptoTransfersTable>;
export type CryptoTransactionRow = Selectable<CryptoTransactionsTable>;

/** The record types of each direction (the provider's purpose names). */
export const cryptoTransactionTypes = {
  DEPOSIT: { initiated: 'CRYPTO_DEPOSIT_INITIATED', success: 'CRYPTO_DEPOSIT_SUCCESS', failure: 'CRYPTO_DEPOSIT_FAILURE' },
  WITHDRAWAL: { initiated: 'CRYPTO_WITHDRAWAL_INITIATED', success: 'CRYPTO_WITHDRAWAL_SUCCESS', failure: 'CRYPTO_WITHDRAWAL_FAILURE' },
} as const satisfies Record<CryptoDirection, Record<'initiated' | 'success' | 'failure', CryptoTransactionType>>;

/** The `type` of the records a crypto transfer writes into the unified wallet history. */
export const cryptoHistoryTypes = { DEPOSIT: 'CRYPTO_DEPOSIT', WITHDRAWAL: 'CRYPTO_WITHDRAWAL' } as const;

/** The purpose of the wallet record that pays a withdrawal's fee (contract §12.7). */
export const withdrawalFeePurpose = 'WITHDRAWAL_FEE_REVENUE';

export const cryptoEvents = {
  DEPOSIT: { PENDING: 'CRYPTO_DEPOSIT_TRANSACTION_PENDING', COMPLETED: 'CRYPTO_DEPOSIT_TRANSACTION_COMPLETED', FAILED: 'CRYPTO_DEPOSIT_TRANSACTION_FAILED' },
  WITHDRAWAL: { PENDING: 'CRYPTO_WITHDRAWAL_TRANSACTION_PENDING', COMPLETED: 'CRYPTO_WITHDRAWAL_TRANSACTION_COMPLETED', FAILED: 'CRYPTO_WITHDRAWAL_TRANSACTION_FAILED' },
} as const;

export function cryptoAssetOf(code: string): Asset {
  const asset = findAsset(code, 'production');
  assert(asset !== undefined && asset.kind === 'CRYPTO', `unknown crypto asset ${code}`);
  return asset;
}

export interface CryptoTransactionView {
  id: string;
  parentCryptoTransactionId: string;
  /** The crypto transfer's id is also the parent of its records in the unified wallet history. */
  parentTransactionId: string;
  walletId: string;
  direction: CryptoDirection;
  operation: 'CREDIT' | 'DEBIT';
  type: CryptoTransactionType;
  status: CryptoStatus;
  asset: string;
  network: CryptoNetworkName;
  amount: string;
  netAmount: string;
  grossAmount: boolean;
  fee: string;
  feeAsset: string;
  address: string;
  fromAddress: string | null;
  memo: string | null;
  offCurve: boolean;
  txHash: string;
  confirmations: number;
  confirmationsRequired: number;
  blockNumber: number | null;
  failureReason: string | null;
  referenceNumber: string | null;
  note: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CryptoTransferGroupView extends CryptoTransactionView {
  children: CryptoTransactionView[];
}

function sharedFields(transfer: CryptoTransferRow) {
  const asset = cryptoAssetOf(transfer.asset);
  return {
    parentCryptoTransactionId: transfer.id,
    parentTransactionId: transfer.id,
    walletId: transfer.wallet_id,
    direction: transfer.direction,
    operation: transfer.direction === 'DEPOSIT' ? ('CREDIT' as const) : ('DEBIT' as const),
    asset: asset.code,
    network: transfer.network,
    amount: formatAmount(BigInt(transfer.amount), asset),
    netAmount: formatAmount(BigInt(transfer.net_amount), asset),
    grossAmount: transfer.gross_amount,
    fee: formatAmount(BigInt(transfer.fee), asset),
    feeAsset: asset.code,
    address: transfer.address,
    fromAddress: transfer.from_address,
    memo: transfer.memo,
    offCurve: transfer.off_curve,
    txHash: transfer.tx_hash,
    confirmationsRequired: transfer.confirmations_required,
    blockNumber: transfer.block_number === null ? null : Number(transfer.block_number),
    referenceNumber: transfer.reference_number,
    note: transfer.note,
  };
}

/** One child record: the step it records, with the confirmations the transfer had then. */
export function cryptoTransactionView(transfer: CryptoTransferRow, child: CryptoTransactionRow): CryptoTransactionView {
  assert(child.crypto_transfer_id === transfer.id, `crypto transaction ${child.id} is not a child of ${transfer.id}`);
  const shared = sharedFields(transfer);
  return {
    id: child.id,
    ...shared,
    type: child.type,
    status: child.status,
    confirmations: child.confirmations,
    // The block is set at the first confirmation: a step written before it (0 confirmations) was in
    // no block yet. Until 2026-12-04 every child showed the transfer's block, so an INITIATED record
    // read "0 confirmations, block 2" once the transfer was included (found by an audit).
    blockNumber: child.confirmations === 0 ? null : shared.blockNumber,
    failureReason: child.failure_reason,
    createdAt: child.created_at.toISOString(),
    updatedAt: child.created_at.toISOString(),
  };
}

/** The parent with its current state and its children, oldest first. */
export function cryptoTransferGroupView(transfer: CryptoTransferRow, children: readonly CryptoTransactionRow[]): CryptoTransferGroupView {
  const latest = children[children.length - 1];
  assert(latest, `crypto transfer ${transfer.id} has no child record`);
  return {
    id: transfer.id,
    ...sharedFields(transfer),
    type: latest.type,
    status: transfer.status,
    confirmations: transfer.confirmations,
    failureReason: transfer.failure_reason,
    createdAt: transfer.created_at.toISOString(),
    updatedAt: transfer.updated_at.toISOString(),
    children: children.map((child) => cryptoTransactionView(transfer, child)),
  };
}

/** The data of a CRYPTO_* event (walletId, cryptoTransactionId, the parent and the amounts; traceId is added by recordEvent). */
export function cryptoEventData(transfer: CryptoTransferRow, childId: string) {
  const asset = cryptoAssetOf(transfer.asset);
  return {
    walletId: transfer.wallet_id,
    cryptoTransactionId: childId,
    parentCryptoTransactionId: transfer.id,
    asset: asset.code,
    network: transfer.network,
    amount: formatAmount(BigInt(transfer.amount), asset),
    fee: formatAmount(BigInt(transfer.fee), asset),
    txHash: transfer.tx_hash,
    confirmations: transfer.confirmations,
    status: transfer.status,
    failureReason: transfer.failure_reason,
  };
}

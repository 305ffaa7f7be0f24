import type { Numeric } from '../../platform/db/schema.js';
import type { CryptoNetworkName } from './networks.js';

export type CryptoDirection = 'DEPOSIT' | 'WITHDRAWAL';
export type CryptoStatus = 'PENDING' | 'COMPLETED' | 'FAILED';
export type CryptoTransactionType =
  | 'CRYPTO_DEPOSIT_INITIATED'
  | 'CRYPTO_DEPOSIT_SUCCESS'
  | 'CRYPTO_DEPOSIT_FAILURE'
  | 'CRYPTO_WITHDRAWAL_INITIATED'
  | 'CRYPTO_WITHDRAWAL_SUCCESS'
  | 'CRYPTO_WITHDRAWAL_FAILURE';

export interface CryptoAddressesTable {
  client_id: string;
  id: string;
  wallet_id: string;
  asset: string;
  network: CryptoNetworkName;
  address: string;
  created_at: Date;
}

export interface CryptoTransfersTable {
  client_id: string;
  id: string;
  direction: CryptoDirection;
  wallet_id: string;
  address_id: string | null;
  status: CryptoStatus;
  asset: string;
  network: CryptoNetworkName;
  amount: Numeric;
  net_amount: Numeric;
  fee: Numeric;
  gross_amount: boolean;
  address: string;
  from_address: string | null;
  memo: string | null;
  off_curve: boolean;
  tx_hash: string;
  confirmations: number;
  confirmations_required: number;
  /** bigint column: read back as a string by the driver. */
  block_number: string | number | null;
  hold_id: string | null;
  pending_credit_id: string | null;
  planned_failure: string | null;
  failure_reason: string | null;
  reference_number: string | null;
  note: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface CryptoTransactionsTable {
  client_id: string;
  id: string;
  crypto_transfer_id: string;
  type: CryptoTransactionType;
  status: CryptoStatus;
  confirmations: number;
  failure_reason: string | null;
  created_at: Date;
}

export interface CryptoChainHeightsTable {
  client_id: string;
  network: CryptoNetworkName;
  height: string | number;
  mined_at: Date | null;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    crypto_addresses: CryptoAddressesTable;
    crypto_transfers: CryptoTransfersTable;
    crypto_transactions: CryptoTransactionsTable;
    crypto_chain_heights: CryptoChainHeightsTable;
  }
}

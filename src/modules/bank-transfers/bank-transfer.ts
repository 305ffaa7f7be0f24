import { assert } from '../../platform/assert.js';
import { formatAmount } from '../../platform/money/amount.js';
import { findAsset, type Asset } from '../../platform/money/assets.js';
import type { BankTransactionRow, BankTransferRow } from './bank-transfers.store.js';
import type {
  BankCounterpartyData,
  BankDirection,
  BankNetwork,
  BankTransactionType,
  BankTransferStatus,
  BeneficiaryData,
} from './bank-transfers.tables.js';
import { railOf, type TransferNetwork } from './withdrawal-rules.js';

/**
 * A bank transfer is one payment on a rail (ACH, Fedwire, SWIFT). Its parent record holds what
 * the payment is and where it stands; each step of its life is a child record (a "bank
 * transaction"): DEPOSIT_INITIATED then DEPOSIT_SUCCESS or DEPOSIT_FAILURE, WITHDRAWAL_INITIATED
 * then WITHDRAWAL_SUCCESS or WITHDRAWAL_FAILURE. Children never change once written.
 */

/** The network an outgoing payment travels on, as reported in bankNetwork (FedWire withdrawals report FEDWIRE). */
export function bankNetworkOf(network: TransferNetwork): BankNetwork {
  return railOf[network];
}

export const bankAssets = ['USD', 'USD_TEST'] as const;

export const transactionTypes: Record<BankDirection, { initiated: BankTransactionType; success: BankTransactionType; failure: BankTransactionType }> = {
  DEPOSIT: { initiated: 'DEPOSIT_INITIATED', success: 'DEPOSIT_SUCCESS', failure: 'DEPOSIT_FAILURE' },
  WITHDRAWAL: { initiated: 'WITHDRAWAL_INITIATED', success: 'WITHDRAWAL_SUCCESS', failure: 'WITHDRAWAL_FAILURE' },
};

/** Business type of the wallet transaction records a bank transfer writes in the unified history. */
export const walletTransactionTypes: Record<BankDirection, string> = { DEPOSIT: 'BANK_DEPOSIT', WITHDRAWAL: 'BANK_WITHDRAWAL' };

export function assetOf(code: string): Asset {
  // Bank transfers hold registry assets only; the sandbox registry is the complete one.
  const asset = findAsset(code, 'sandbox');
  assert(asset, `bank transfer in an unknown asset ${code}`);
  return asset;
}

export interface BeneficiaryView extends Omit<BeneficiaryData, 'identificationValue'> {
  identificationValue: string | null;
}

/** The fields every bank transaction shows, parent or child. */
export interface BankTransactionFields {
  parentBankTransactionId: string;
  parentTransactionId: string;
  walletId: string | null;
  customerId: string | null;
  direction: BankDirection;
  operation: 'CREDIT' | 'DEBIT';
  amount: string;
  asset: string;
  bankNetwork: BankNetwork | null;
  transferNetwork: TransferNetwork | null;
  counterparty: BankCounterpartyData | null;
  beneficiary: BeneficiaryView | null;
  counterpartyId: string | null;
  remittanceMemo: string | null;
  endToEndId: string;
  receivingAccountNumber: string | null;
}

export interface BankTransactionView extends BankTransactionFields {
  id: string;
  type: BankTransactionType;
  status: BankTransferStatus;
  returnCode: string | null;
  failureReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface BankTransferGroupView extends BankTransactionView {
  children: BankTransactionView[];
}

/** Only the last four characters of a party identification (a tax or passport number) are shown. */
export function maskIdentification(value: string | null): string | null {
  if (value === null) return null;
  return value.length <= 4 ? '*'.repeat(value.length) : `${'*'.repeat(Math.min(value.length - 4, 8))}${value.slice(-4)}`;
}

function sharedFields(transfer: BankTransferRow): BankTransactionFields {
  const asset = assetOf(transfer.asset);
  const beneficiary = transfer.beneficiary;
  return {
    parentBankTransactionId: transfer.id,
    // The bank transfer's id is also the parent of its records in the unified wallet history.
    parentTransactionId: transfer.id,
    walletId: transfer.wallet_id,
    customerId: transfer.customer_id,
    direction: transfer.direction,
    operation: transfer.direction === 'DEPOSIT' ? 'CREDIT' : 'DEBIT',
    amount: formatAmount(BigInt(transfer.amount), asset),
    asset: asset.code,
    bankNetwork: transfer.bank_network,
    transferNetwork: transfer.transfer_network,
    counterparty: transfer.direction === 'DEPOSIT' ? transfer.counterparty : null,
    beneficiary: beneficiary === null ? null : { ...beneficiary, identificationValue: maskIdentification(beneficiary.identificationValue) },
    counterpartyId: transfer.counterparty_id,
    remittanceMemo: transfer.remittance_memo,
    endToEndId: transfer.end_to_end_id,
    receivingAccountNumber: transfer.account_number,
  };
}

/** One child record, with its parent's description of the payment. */
export function bankTransactionView(transfer: BankTransferRow, child: BankTransactionRow): BankTransactionView {
  assert(child.bank_transfer_id === transfer.id, `bank transaction ${child.id} is not a child of ${transfer.id}`);
  return {
    id: child.id,
    ...sharedFields(transfer),
    type: child.type,
    status: child.status,
    returnCode: child.return_code,
    failureReason: child.failure_reason,
    createdAt: child.created_at.toISOString(),
    updatedAt: child.created_at.toISOString(),
  };
}

/** The parent with its current state and its children (oldest first), as the list endpoint groups them. */
export function bankTransferGroupView(transfer: BankTransferRow, children: readonly BankTransactionRow[]): BankTransferGroupView {
  const latest = children[children.length - 1];
  assert(latest, `bank transfer ${transfer.id} has no child record`);
  return {
    id: transfer.id,
    ...sharedFields(transfer),
    type: latest.type,
    status: transfer.status,
    returnCode: transfer.return_code,
    failureReason: transfer.failure_reason,
    createdAt: transfer.created_at.toISOString(),
    updatedAt: transfer.updated_at.toISOString(),
    children: children.map((child) => bankTransactionView(transfer, child)),
  };
}

/**
 * The data of a BANK_* event: every field of the specification's table (counterparty is the
 * sender for deposits and null for withdrawals), plus the parent id, and the return code and
 * reason on a failure.
 */
export function bankEventData(transfer: BankTransferRow, child: { id: string; returnCode?: string | null; failureReason?: string | null }) {
  const asset = assetOf(transfer.asset);
  return {
    walletId: transfer.wallet_id,
    bankTransactionId: child.id,
    parentBankTransactionId: transfer.id,
    amount: formatAmount(BigInt(transfer.amount), asset),
    asset: asset.code,
    bankNetwork: transfer.bank_network,
    counterparty: transfer.direction === 'DEPOSIT' ? transfer.counterparty : null,
    ...(child.returnCode === undefined ? {} : { returnCode: child.returnCode, failureReason: child.failureReason ?? null }),
  };
}

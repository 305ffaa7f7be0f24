import type { ColumnType } from 'kysely';
import type { Numeric } from '../../platform/db/schema.js';
import type { TransferNetwork } from './withdrawal-rules.js';

/** A nullable jsonb column: SQL NULL for null, otherwise written as JSON text and read back parsed. */
type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

export type BankDirection = 'DEPOSIT' | 'WITHDRAWAL';
export type BankTransferStatus = 'PENDING' | 'COMPLETED' | 'FAILED';
export type BankNetwork = 'ACH' | 'FEDWIRE' | 'SWIFT' | 'UNSPECIFIED';
export type BankTransactionType =
  | 'DEPOSIT_INITIATED'
  | 'DEPOSIT_SUCCESS'
  | 'DEPOSIT_FAILURE'
  | 'WITHDRAWAL_INITIATED'
  | 'WITHDRAWAL_SUCCESS'
  | 'WITHDRAWAL_FAILURE';
export type DepositRoute = 'VIRTUAL_ACCOUNT_NUMBER' | 'DEDICATED_ACCOUNT_NUMBER' | 'VRN' | 'MASTER_ACCOUNT_REFERENCE';

/** The sender of a deposit, exactly the fields of the specification's event payload. */
export interface BankCounterpartyData {
  name: string;
  givenName: string | null;
  surname: string | null;
  accountNumber: string;
  swiftCode: string | null;
  routingNumber: string | null;
  financialInstitutionId: string | null;
  street1: string | null;
  street2: string | null;
  cityCounty: string | null;
  stateRegion: string | null;
  countryCode: string | null;
  zip: string | null;
  addressLine: string | null;
}

/** The receiver of a withdrawal, as it was sent to the rail. */
export interface BeneficiaryData {
  name: string;
  personTypeCode: 'P' | 'L';
  accountNumber: string;
  routingNumber: string | null;
  bicSwiftCode: string | null;
  intermediaryBankBic: string | null;
  bankName: string;
  bankAddress: string | null;
  bankCity: string | null;
  bankState: string | null;
  bankCountry: string;
  street1: string;
  street2: string | null;
  cityCounty: string;
  stateRegion: string;
  zip: string;
  countryCode: string;
  identificationTypeCode: string | null;
  /** Kept whole for the payment; responses show only its last four characters. */
  identificationValue: string | null;
}

export interface BankTransfersTable {
  client_id: string;
  id: string;
  direction: BankDirection;
  wallet_id: string | null;
  customer_id: string | null;
  portfolio_id: string | null;
  status: BankTransferStatus;
  amount: Numeric;
  asset: string;
  bank_network: BankNetwork | null;
  transfer_network: TransferNetwork | null;
  counterparty: NullableJson<BankCounterpartyData>;
  beneficiary: NullableJson<BeneficiaryData>;
  counterparty_id: string | null;
  remittance_memo: string | null;
  end_to_end_id: string;
  account_number: string | null;
  routed_by: DepositRoute | null;
  hold_id: string | null;
  pending_credit_id: string | null;
  return_code: string | null;
  failure_reason: string | null;
  settle_at: Date | null;
  planned_outcome: 'COMPLETED' | 'FAILED' | null;
  planned_return_code: string | null;
  planned_failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface BankTransactionsTable {
  client_id: string;
  id: string;
  bank_transfer_id: string;
  type: BankTransactionType;
  status: BankTransferStatus;
  return_code: string | null;
  failure_reason: string | null;
  created_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    bank_transfers: BankTransfersTable;
    bank_transactions: BankTransactionsTable;
  }
}

import type { DirectoryKind } from './bank-directory.tables.js';

/** One routing number of the FedACH participant directory. */
export interface AchRecord {
  routingNumber: string;
  bankName: string;
  address: string | null;
  city: string | null;
  state: string | null;
  zipCode: string | null;
  phoneNumber: string | null;
  newRoutingNumber: string | null;
}

/** One routing number of the Fedwire Funds participant directory. */
export interface FedwireRecord {
  routingNumber: string;
  telegraphicName: string | null;
  bankName: string;
  address: string | null;
  city: string | null;
  state: string | null;
  zipCode: string | null;
  fundsTransferEligible: boolean;
  settlementOnly: boolean;
  bookEntrySecuritiesEligible: boolean;
  /** YYYY-MM-DD */
  revisedOn: string | null;
}

export interface BicRecord {
  /** Always the 11-character form. */
  bic: string;
  bankName: string;
  address: string | null;
  city: string | null;
  countryCode: string;
}

export interface IbanBankCodeRecord {
  countryCode: string;
  bankCode: string;
  bankName: string;
  bic: string | null;
}

export interface DirectoryRecords {
  FEDACH: AchRecord[];
  FEDWIRE: FedwireRecord[];
  BIC: BicRecord[];
  IBAN_BANK_CODE: IbanBankCodeRecord[];
}

/** Records of one kind together with where they came from. */
export type DirectoryBatch = {
  [K in DirectoryKind]: { kind: K; records: DirectoryRecords[K]; version: string; fileName: string | null };
}[DirectoryKind];

/**
 * The bank directory's tables. They are global reference data (public facts about banks), not
 * per client, so unlike every other table they have no client_id; see migrations/0005.
 */
export type DirectoryKind = 'FEDACH' | 'FEDWIRE' | 'BIC' | 'IBAN_BANK_CODE';
export const directoryKinds: readonly DirectoryKind[] = ['FEDACH', 'FEDWIRE', 'BIC', 'IBAN_BANK_CODE'];

export interface BankDirectorySourcesTable {
  kind: DirectoryKind;
  origin: 'BUILT_IN' | 'IMPORT';
  version: string;
  file_name: string | null;
  record_count: number;
  loaded_at: Date;
}

export interface AchParticipantsTable {
  routing_number: string;
  bank_name: string;
  address: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  phone_number: string | null;
  new_routing_number: string | null;
}

export interface FedwireParticipantsTable {
  routing_number: string;
  telegraphic_name: string | null;
  bank_name: string;
  address: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  funds_transfer_eligible: boolean;
  settlement_only: boolean;
  book_entry_securities_eligible: boolean;
  revised_on: string | null;
}

export interface BicsTable {
  bic: string;
  bank_name: string;
  address: string | null;
  city: string | null;
  country_code: string;
}

export interface IbanBankCodesTable {
  country_code: string;
  bank_code: string;
  bank_name: string;
  bic: string | null;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    bank_directory_sources: BankDirectorySourcesTable;
    bank_directory_ach_participants: AchParticipantsTable;
    bank_directory_fedwire_participants: FedwireParticipantsTable;
    bank_directory_bics: BicsTable;
    bank_directory_iban_bank_codes: IbanBankCodesTable;
  }
}

import type { ColumnType } from 'kysely';
import type { Json } from '../../platform/db/schema.js';

/** A nullable jsonb column: SQL NULL for null, otherwise written as JSON text and read back parsed. */
type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

/** An address as stored (jsonb) and returned. */
export interface Address {
  street1: string;
  street2: string | null;
  cityCounty: string;
  stateRegion: string;
  zip: string;
  countryCode: string;
}

/** The business (KYB) data of a LEGAL customer, without its main address (a column of its own). */
export interface StoredKyb {
  legalName: string | null;
  tradeName: string | null;
  structureType: string | null;
  naicsCode: string | null;
  incorporationDate: string | null;
  incorporationCountry: string | null;
  website: string | null;
  taxInformation: { taxId: string; taxIdCountry: string } | null;
  identification: { type: string; number: string; issuingCountry: string } | null;
}

export interface MembershipProgramsTable {
  client_id: string;
  id: string;
  name: string;
  is_default: boolean;
  features: Json<string[]>;
  created_at: Date;
}

export interface CustomersTable {
  client_id: string;
  id: string;
  type: 'PRIVATE' | 'LEGAL';
  email: string;
  phone_number: string | null;
  phone_country_code: string | null;
  membership_program_id: string;
  onboarding_id: string | null;
  onboarding_status: string | null;
  first_name: string | null;
  middle_name: string | null;
  last_name: string | null;
  sex: string | null;
  /** A PostgreSQL date: read back as 'YYYY-MM-DD' text (the pg date parser is turned off for it below). */
  birth_date: string | null;
  nationality: string | null;
  tax_id_country: string | null;
  occupation: string | null;
  ip_address: string | null;
  ssn_ciphertext: string | null;
  ssn_last4: string | null;
  document_id_card_ciphertext: string | null;
  document_license_ciphertext: string | null;
  document_passport_ciphertext: string | null;
  kyb: NullableJson<StoredKyb>;
  main_address: NullableJson<Address>;
  billing_address: NullableJson<Address>;
  delivery_address: NullableJson<Address>;
  created_at: Date;
  updated_at: Date;
}

export interface PortfoliosTable {
  client_id: string;
  id: string;
  customer_id: string;
  name: string;
  is_default: boolean;
  created_at: Date;
}

export interface WalletsTable {
  client_id: string;
  id: string;
  customer_id: string;
  portfolio_id: string;
  name: string;
  is_primary: boolean;
  virtual_account_number: string | null;
  dedicated_account_number: string | null;
  vrn: string | null;
  created_at: Date;
}

export interface BusinessPersonRelationsTable {
  client_id: string;
  id: string;
  business_customer_id: string;
  person_customer_id: string;
  role: 'SHAREHOLDER' | 'REPRESENTATIVE';
  /** numeric(7,4): read as text, for example '25.0000'. */
  ownership_percentage: string | null;
  representing_start: string | null;
  representing_end: string | null;
  created_at: Date;
  updated_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    membership_programs: MembershipProgramsTable;
    customers: CustomersTable;
    portfolios: PortfoliosTable;
    wallets: WalletsTable;
    business_person_relations: BusinessPersonRelationsTable;
  }
}

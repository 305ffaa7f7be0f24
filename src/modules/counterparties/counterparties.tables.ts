import type { TransferNetwork } from '../bank-transfers/index.js';

export interface CounterpartiesTable {
  client_id: string;
  id: string;
  customer_id: string;
  portfolio_id: string;
  transfer_network: TransferNetwork;
  name: string | null;
  account_holder_name: string;
  routing_number: string | null;
  bic_swift_code: string | null;
  account_number_value: string | null;
  country_code: string | null;
  street1: string | null;
  street2: string | null;
  city_county: string | null;
  state_region: string | null;
  zip: string | null;
  bank_name: string;
  bank_city: string | null;
  bank_state: string | null;
  bank_country: string;
  created_at: Date;
  updated_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    counterparties: CounterpartiesTable;
  }
}

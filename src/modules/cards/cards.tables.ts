import type { ColumnType } from 'kysely';
import type { Json } from '../../platform/db/schema.js';
import type { CardNetwork } from './network/index.js';
import type { CoopAuthSettings, HoldExpirySettings, LimitSettings, OverCaptureSettings } from './program-settings.js';

/** migrations/0024_cards.sql */
export interface CardProgramsTable {
  client_id: string;
  id: string;
  name: string;
  card_type: CardType;
  card_transaction_handler: CardTransactionHandler;
  network: CardNetwork;
  bin: string;
  currency: string;
  coop_auth: ColumnType<CoopAuthSettings | null, string | null, string | null>;
  hold_expiry: Json<HoldExpirySettings>;
  over_capture: Json<OverCaptureSettings>;
  limits: Json<LimitSettings>;
  reveal_physical_cards: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface CardsTable {
  client_id: string;
  id: string;
  customer_id: string;
  wallet_id: string;
  card_program_id: string;
  card_type: CardType;
  card_transaction_handler: CardTransactionHandler;
  reference_number: string;
  status: CardStatus;
  is_virtual: boolean;
  is_primary: boolean;
  last4: string;
  expiry_month: number;
  expiry_year: number;
  /** The PAN, encrypted (card-vault.ts); never returned, logged or sent in an event. */
  pan_encrypted: string;
  /** HMAC-SHA256 of the PAN with the vault's fingerprint key, hex. */
  pan_fingerprint: string;
  credit_line_id: string | null;
  collateral_wallet_id: string | null;
  activated_at: Date | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type CardType = 'DEBIT' | 'CREDIT';
export type CardTransactionHandler = 'STANDARD' | 'COOP_AUTH';
export type CardStatus = 'ACTIVE' | 'BLOCKED' | 'SUSPENDED' | 'CANCELLED';

export type { CardNetwork };

declare module '../../platform/db/schema.js' {
  interface Database {
    card_programs: CardProgramsTable;
    cards: CardsTable;
  }
}

import type { Numeric } from '../../platform/db/schema.js';

export type CreditLineStatus = 'PENDING_COLLATERAL' | 'ACTIVE' | 'RESTRICTED' | 'LIQUIDATING' | 'CLOSED';
export type CreditLineHoldStatus = 'OPEN' | 'CAPTURED' | 'RELEASED' | 'EXPIRED';

export interface CreditSettingsTable {
  client_id: string;
  thresholds: number[];
  opening: number;
  liquidation_penalty: number;
  updated_at: Date;
}

export interface CreditLinesTable {
  client_id: string;
  id: string;
  customer_id: string;
  collateral_wallet_id: string;
  collateral_asset: string;
  currency: string;
  credit_limit: Numeric;
  apr: number;
  status: CreditLineStatus;
  thresholds: number[];
  opening: number;
  liquidation_penalty: number;
  collateral_amount: Numeric;
  collateral_hold_id: string | null;
  principal: Numeric;
  interest: Numeric;
  interest_carry: Numeric;
  pending_holds: Numeric;
  ltv_fired: number;
  residual_debt: boolean;
  /** Released (or emptied) below what covers the limit at the opening LTV: RESTRICTED until covered again (migration 0040). */
  needs_cover: boolean;
  /** What credits beyond the principal paid into the collateral wallet, less what refund reversals took back (migration 0045). */
  excess_paid_out: Numeric;
  last_ltv_event_at: Date | null;
  interest_accrued_until: Date;
  created_at: Date;
  updated_at: Date;
}

export interface CreditLineHoldsTable {
  client_id: string;
  id: string;
  credit_line_id: string;
  status: CreditLineHoldStatus;
  amount: Numeric;
  parent_transaction_id: string | null;
  created_at: Date;
  updated_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    credit_settings: CreditSettingsTable;
    credit_lines: CreditLinesTable;
    credit_line_holds: CreditLineHoldsTable;
  }
}

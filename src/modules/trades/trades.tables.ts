import type { Numeric } from '../../platform/db/schema.js';
import type { TradeDirection, TradeSide } from './quote-math.js';

export type QuoteStatus = 'OPEN' | 'EXECUTED' | 'FAILED';

export interface SandboxPricesTable {
  client_id: string;
  symbol: string;
  price: Numeric;
  updated_at: Date;
}

export interface TradeQuotesTable {
  client_id: string;
  id: string;
  customer_id: string;
  pair_symbol: string;
  direction: TradeDirection;
  side: TradeSide;
  from_asset: string;
  to_asset: string;
  fee_asset: string;
  price_per_unit_units: Numeric;
  price_decimals: number;
  fee_rate: Numeric;
  from_amount: Numeric;
  amount_to_spend: Numeric;
  gross_to_receive: Numeric;
  fee_amount: Numeric;
  total_to_receive: Numeric;
  ttl_seconds: number;
  status: QuoteStatus;
  expires_at: Date;
  created_at: Date;
  wallet_id: string | null;
  parent_transaction_id: string | null;
  source_transaction_id: string | null;
  target_transaction_id: string | null;
  fee_transaction_id: string | null;
  failure_code: string | null;
  executed_at: Date | null;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    sandbox_prices: SandboxPricesTable;
    trade_quotes: TradeQuotesTable;
  }
}

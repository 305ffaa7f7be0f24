-- Trades (issue 22): the sandbox price feed's per-client prices, and trade quotes with their
-- execution.
--
-- sandbox_prices: one row per price a client has set with PUT /v1/sandbox/prices/:symbol. A symbol
-- without a row has the seeded price, which lives in code (src/modules/trades/prices.ts); so no row
-- is written when a client is created, clients that existed before this migration need nothing, and
-- a sandbox reset (which deletes the client's rows) brings every price back to its seeded value.
-- Prices are exact: at most 15 whole digits and 8 decimals, as the API accepts them.
CREATE TABLE sandbox_prices (
  client_id uuid NOT NULL REFERENCES clients (id),
  -- An asset against USD: "BTC-USD". The code knows which symbols exist; the database keeps the shape.
  symbol text NOT NULL CHECK (length(symbol) BETWEEN 5 AND 20 AND right(symbol, 4) = '-USD'
    AND ltrim(left(symbol, -4), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_') = ''),
  price numeric(23, 8) NOT NULL CHECK (price > 0),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, symbol)
);

-- trade_quotes: every quote given (POST /v1/trades/quotes) with every figure it showed, so that
-- execution moves exactly what the customer saw, and its one execution's result. Amounts are whole
-- minor units of the asset named beside them, as in the ledger; the executed price is
-- price_per_unit_units × 10^-price_decimals units of the pair's quote asset per base unit.
--
-- A quote is OPEN until an execution is attempted; the attempt makes it EXECUTED (the money moved
-- under parent_transaction_id) or FAILED (the liquidity provider refused; nothing moved), and a
-- quote is never executed twice. expires_at is by the client's clock (its sandbox clock).
--
-- No foreign key to clients, customers or wallets: each would take a shared lock on the referenced
-- row for every quote, and the busy rows are few (one client, a few customers); see migration 0009
-- for the same choice on the events and idempotency tables. The service checks the customer and the
-- wallet in the transaction that writes the quote, and neither is ever deleted.
CREATE TABLE trade_quotes (
  client_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  pair_symbol text NOT NULL CHECK (length(pair_symbol) BETWEEN 3 AND 40),
  direction text NOT NULL CHECK (direction IN ('direct', 'reverse')),
  side text NOT NULL CHECK (side IN ('buy', 'sell')),
  from_asset asset_code NOT NULL,
  to_asset asset_code NOT NULL,
  fee_asset asset_code NOT NULL,
  price_per_unit_units numeric(40, 0) NOT NULL CHECK (price_per_unit_units > 0),
  price_decimals smallint NOT NULL CHECK (price_decimals BETWEEN 0 AND 18),
  fee_rate numeric(20, 18) NOT NULL CHECK (fee_rate >= 0 AND fee_rate < 1),
  from_amount numeric(40, 0) NOT NULL CHECK (from_amount > 0),
  amount_to_spend numeric(40, 0) NOT NULL CHECK (amount_to_spend > 0),
  gross_to_receive numeric(40, 0) NOT NULL CHECK (gross_to_receive > 0),
  fee_amount numeric(40, 0) NOT NULL CHECK (fee_amount >= 0),
  total_to_receive numeric(40, 0) NOT NULL CHECK (total_to_receive > 0),
  ttl_seconds integer NOT NULL CHECK (ttl_seconds BETWEEN 5 AND 900),
  status text NOT NULL CHECK (status IN ('OPEN', 'EXECUTED', 'FAILED')),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  -- The execution, once attempted.
  wallet_id uuid,
  parent_transaction_id uuid,
  source_transaction_id uuid,
  target_transaction_id uuid,
  fee_transaction_id uuid,
  failure_code text CHECK (failure_code IS NULL OR length(failure_code) BETWEEN 1 AND 64),
  executed_at timestamptz,
  PRIMARY KEY (client_id, id),
  CHECK (from_asset <> to_asset),
  CHECK (fee_asset = from_asset OR fee_asset = to_asset),
  CHECK ((direction = 'direct') = (side = 'sell')),
  CHECK (expires_at = created_at + make_interval(secs => ttl_seconds)),
  -- The figures agree with each other: a fee in the from-asset is taken before the exchange, a fee
  -- in the to-asset after it, and the wallet is debited from_amount either way.
  CHECK (CASE WHEN fee_asset = from_asset
    THEN amount_to_spend + fee_amount = from_amount AND total_to_receive = gross_to_receive
    ELSE amount_to_spend = from_amount AND total_to_receive + fee_amount = gross_to_receive END),
  -- An attempted execution names its wallet, parent transaction and time; an open quote none.
  CHECK ((status = 'OPEN') = (wallet_id IS NULL)),
  CHECK ((status = 'OPEN') = (parent_transaction_id IS NULL)),
  CHECK ((status = 'OPEN') = (executed_at IS NULL)),
  -- Only an executed quote has the wallet records of the money it moved; only a failed one a code.
  CHECK ((status = 'EXECUTED') = (source_transaction_id IS NOT NULL AND target_transaction_id IS NOT NULL)),
  CHECK (status = 'EXECUTED' OR fee_transaction_id IS NULL),
  CHECK ((status = 'FAILED') = (failure_code IS NOT NULL))
);

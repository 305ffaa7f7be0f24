-- Crypto-backed credit (issue 23, contract §12.10): credit lines secured by locked collateral,
-- the card holds that draw on them, and each client's LTV thresholds.
--
-- The ledger gains one system account kind, CREDIT_LENDING: the bank's receivable of card spending
-- on credit lines. A credit card capture moves USD from CREDIT_LENDING to CARD_SETTLEMENT (the
-- merchant is paid, the customer owes it); a repayment or a liquidation moves it back. So at every
-- moment the negative of a client's CREDIT_LENDING balance is the sum of its lines' principal, a
-- relation the credit tests check after every step.
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
  CHECK (kind IN ('WALLET', 'BANK_SETTLEMENT', 'CARD_SETTLEMENT', 'CRYPTO_CUSTODY', 'TRADING', 'FEES', 'SUSPENSE', 'CREDIT_LENDING'));

-- credit_settings: a client's LTV ladder, as whole ten-thousandths (6000 = 0.60), and the
-- liquidation penalty. A client without a row has the defaults of contract §12.10 (in code,
-- src/modules/credit/ltv.ts). A line copies the ladder when it is opened, so a change applies to
-- lines opened after it.
CREATE TABLE credit_settings (
  client_id uuid PRIMARY KEY REFERENCES clients (id),
  -- warning, purchase restricted, collateral needed, urgent, liquidation warning, liquidation.
  thresholds integer[] NOT NULL CHECK (cardinality(thresholds) = 6),
  opening integer NOT NULL CHECK (opening > 0 AND opening < 10000),
  liquidation_penalty integer NOT NULL CHECK (liquidation_penalty >= 0 AND liquidation_penalty < 5000),
  updated_at timestamptz NOT NULL
);

-- credit_lines: one row per line, with its running figures in whole minor units:
-- collateral_amount in the collateral asset (satoshi, wei), principal, interest and pending_holds
-- in USD cents. interest_carry is the fraction of a cent accrued but not yet whole, as a numerator
-- over 3 650 000 (10 000 for the APR's four decimals × 365 days), so daily interest loses nothing.
-- ltv_fired: bit i (from 0) set once the LTV crossed thresholds[i + 1] upwards, cleared when it
-- falls 1 point (100) below it again; an event is written exactly when a bit goes from 0 to 1.
CREATE TABLE credit_lines (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  collateral_wallet_id uuid NOT NULL,
  collateral_asset text NOT NULL CHECK (collateral_asset IN ('BTC', 'ETH')),
  currency text NOT NULL CHECK (currency = 'USD'),
  credit_limit numeric(30, 0) NOT NULL CHECK (credit_limit > 0),
  -- The annual rate in ten-thousandths (1250 = 12.50 %).
  apr integer NOT NULL CHECK (apr BETWEEN 0 AND 10000),
  status text NOT NULL CHECK (status IN ('PENDING_COLLATERAL', 'ACTIVE', 'RESTRICTED', 'LIQUIDATING', 'CLOSED')),
  thresholds integer[] NOT NULL CHECK (cardinality(thresholds) = 6),
  opening integer NOT NULL,
  liquidation_penalty integer NOT NULL,
  collateral_amount numeric(40, 0) NOT NULL DEFAULT 0 CHECK (collateral_amount >= 0),
  -- The ledger hold on the collateral wallet that keeps the locked collateral (RESERVED).
  collateral_hold_id uuid,
  principal numeric(30, 0) NOT NULL DEFAULT 0 CHECK (principal >= 0),
  interest numeric(30, 0) NOT NULL DEFAULT 0 CHECK (interest >= 0),
  interest_carry bigint NOT NULL DEFAULT 0 CHECK (interest_carry >= 0 AND interest_carry < 3650000),
  pending_holds numeric(30, 0) NOT NULL DEFAULT 0 CHECK (pending_holds >= 0),
  ltv_fired integer NOT NULL DEFAULT 0 CHECK (ltv_fired BETWEEN 0 AND 63),
  -- A liquidation sold all the collateral and debt was left (contract §12.10): the line stays
  -- RESTRICTED until that debt is repaid and collateral covers the limit at the opening LTV again.
  residual_debt boolean NOT NULL DEFAULT false,
  last_ltv_event_at timestamptz,
  -- Interest is accrued up to this instant (a UTC midnight of the client's clock).
  interest_accrued_until timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, customer_id) REFERENCES customers (client_id, id),
  FOREIGN KEY (client_id, collateral_wallet_id) REFERENCES wallets (client_id, id),
  -- Locked collateral sits in an open hold; a line whose collateral went to zero forgets its closed
  -- hold, and its next lock opens a new one.
  CHECK ((collateral_amount = 0) = (collateral_hold_id IS NULL))
);
CREATE INDEX credit_lines_by_customer ON credit_lines (client_id, customer_id, id);
-- A price change recomputes every open line of one collateral asset.
CREATE INDEX credit_lines_by_collateral ON credit_lines (client_id, collateral_asset) WHERE status <> 'CLOSED';

-- credit_line_holds: what a credit card's open authorizations keep aside on a line (the line's
-- pending_holds is the sum of the OPEN ones' amount).
CREATE TABLE credit_line_holds (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  credit_line_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('OPEN', 'CAPTURED', 'RELEASED', 'EXPIRED')),
  amount numeric(30, 0) NOT NULL CHECK (amount >= 0),
  parent_transaction_id uuid,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, credit_line_id) REFERENCES credit_lines (client_id, id),
  CHECK (status = 'OPEN' OR amount = 0)
);

ALTER TABLE cards ADD CONSTRAINT cards_credit_line_fk FOREIGN KEY (client_id, credit_line_id) REFERENCES credit_lines (client_id, id);

-- Bank rails: counterparties (saved beneficiaries), dedicated account numbers and VRNs of
-- wallets, and bank transfers (ACH, FedWire and SWIFT deposits and withdrawals) with their
-- lifecycle records. Money itself moves only in the ledger tables; these tables describe the
-- payments and point at the ledger's holds and pending credits.

-- Dedicated account numbers ("71" + 9-digit serial + Luhn digit) and VRNs ("72" + 9-digit serial
-- + Luhn digit). Each serial comes from a sequence shared by every client: an inbound deposit
-- names only the number, so a number must be unique across the platform, and a sequence never
-- hands a value out twice (not even after a rolled-back transaction), so a number is never
-- reused. The unique indexes below hold the same promise in the database.
CREATE SEQUENCE dedicated_account_serial AS bigint MINVALUE 1 MAXVALUE 999999999 NO CYCLE;
CREATE SEQUENCE vrn_serial AS bigint MINVALUE 1 MAXVALUE 999999999 NO CYCLE;
ALTER TABLE wallets ADD CONSTRAINT wallets_dedicated_account_number_format CHECK (dedicated_account_number ~ '^71[0-9]{10}$');
ALTER TABLE wallets ADD CONSTRAINT wallets_vrn_format CHECK (vrn ~ '^72[0-9]{10}$');
ALTER TABLE wallets ADD CONSTRAINT wallets_bank_numbers_need_virtual_account
  CHECK ((dedicated_account_number IS NULL AND vrn IS NULL) OR virtual_account_number IS NOT NULL);
CREATE UNIQUE INDEX wallets_dedicated_account_number_key ON wallets (dedicated_account_number) WHERE dedicated_account_number IS NOT NULL;
CREATE UNIQUE INDEX wallets_vrn_key ON wallets (vrn) WHERE vrn IS NOT NULL;

-- Serial part of ACH trace numbers and Fedwire IMADs handed to the rail (7 and 6 digits are
-- used; uniqueness per day is what the rails need, so the sequence may wrap).
CREATE SEQUENCE bank_trace_serial AS bigint MINVALUE 1 MAXVALUE 9999999 CYCLE;

CREATE TABLE counterparties (
  client_id uuid NOT NULL,
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  portfolio_id uuid NOT NULL,
  transfer_network text NOT NULL
    CHECK (transfer_network IN ('ACH_DOMESTIC', 'ACH_CROSSBORDER', 'FEDWIRE_DOMESTIC', 'FEDWIRE_CROSSBORDER', 'SWIFT')),
  name text CHECK (length(name) BETWEEN 1 AND 140),
  account_holder_name text NOT NULL CHECK (length(account_holder_name) BETWEEN 1 AND 140),
  routing_number text CHECK (routing_number ~ '^[0-9]{9}$'),
  bic_swift_code text CHECK (bic_swift_code ~ '^[A-Z0-9]{8}([A-Z0-9]{3})?$'),
  account_number_value text CHECK (account_number_value ~ '^[A-Za-z0-9]{1,34}$'),
  country_code text CHECK (country_code ~ '^[A-Z]{2}$'),
  street1 text CHECK (length(street1) BETWEEN 1 AND 140),
  street2 text CHECK (length(street2) BETWEEN 1 AND 140),
  city_county text CHECK (length(city_county) BETWEEN 1 AND 100),
  state_region text CHECK (length(state_region) BETWEEN 1 AND 100),
  zip text CHECK (length(zip) BETWEEN 1 AND 20),
  -- Taken from the bank directory when the routing number or BIC was validated.
  bank_name text NOT NULL,
  bank_city text,
  bank_state text,
  bank_country text NOT NULL CHECK (bank_country ~ '^[A-Z]{2}$'),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, customer_id, portfolio_id) REFERENCES portfolios (client_id, customer_id, id),
  -- The specification's table: US networks name the bank by routing number, the others by BIC.
  CONSTRAINT counterparties_bank_identifier CHECK (
    (transfer_network IN ('ACH_DOMESTIC', 'ACH_CROSSBORDER', 'FEDWIRE_DOMESTIC') AND routing_number IS NOT NULL AND bic_swift_code IS NULL)
    OR (transfer_network IN ('FEDWIRE_CROSSBORDER', 'SWIFT') AND bic_swift_code IS NOT NULL AND routing_number IS NULL)
  )
);
CREATE INDEX counterparties_portfolio ON counterparties (client_id, portfolio_id, id);

-- A bank transfer is the parent of one payment on a rail: its current state, plus what it is
-- (direction, amount, network, sender or beneficiary). Its lifecycle records are the child
-- bank_transactions below. Its id is also the parent transaction id of the wallet transaction
-- records the ledger writes for it.
CREATE TABLE bank_transfers (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  direction text NOT NULL CHECK (direction IN ('DEPOSIT', 'WITHDRAWAL')),
  -- NULL only for a deposit that could not be routed to any wallet (returned at once).
  wallet_id uuid,
  customer_id uuid,
  portfolio_id uuid,
  status text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED')),
  amount numeric(40, 0) NOT NULL CHECK (amount > 0),
  asset text NOT NULL CHECK (asset ~ '^[A-Z][A-Z0-9_]{1,15}$'),
  bank_network text CHECK (bank_network IN ('ACH', 'FEDWIRE', 'SWIFT', 'UNSPECIFIED')),
  transfer_network text
    CHECK (transfer_network IN ('ACH_DOMESTIC', 'ACH_CROSSBORDER', 'FEDWIRE_DOMESTIC', 'FEDWIRE_CROSSBORDER', 'SWIFT')),
  -- The sender of a deposit, the receiver of a withdrawal (snapshots: later edits of a saved
  -- counterparty do not rewrite a payment that was made).
  counterparty jsonb CHECK (counterparty IS NULL OR jsonb_typeof(counterparty) = 'object'),
  beneficiary jsonb CHECK (beneficiary IS NULL OR jsonb_typeof(beneficiary) = 'object'),
  counterparty_id uuid,
  remittance_memo text CHECK (length(remittance_memo) BETWEEN 1 AND 140),
  end_to_end_id text NOT NULL CHECK (length(end_to_end_id) BETWEEN 1 AND 64),
  -- The number an inbound deposit was sent to, and how it was matched to the wallet.
  account_number text CHECK (length(account_number) BETWEEN 1 AND 64),
  routed_by text CHECK (routed_by IN ('VIRTUAL_ACCOUNT_NUMBER', 'DEDICATED_ACCOUNT_NUMBER', 'VRN', 'MASTER_ACCOUNT_REFERENCE')),
  hold_id uuid,
  pending_credit_id uuid,
  return_code text CHECK (length(return_code) BETWEEN 1 AND 16),
  failure_reason text CHECK (length(failure_reason) BETWEEN 1 AND 500),
  -- What the rail said it will do and when (the sandbox rail plans it; a worker applies it when
  -- due). NULL settle_at: the rail reports by itself, nothing is scheduled.
  settle_at timestamptz,
  planned_outcome text CHECK (planned_outcome IN ('COMPLETED', 'FAILED')),
  planned_return_code text CHECK (length(planned_return_code) BETWEEN 1 AND 16),
  planned_failure_reason text CHECK (length(planned_failure_reason) BETWEEN 1 AND 500),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, wallet_id) REFERENCES wallets (client_id, id),
  CONSTRAINT bank_transfers_withdrawal_shape CHECK (
    direction <> 'WITHDRAWAL' OR (wallet_id IS NOT NULL AND hold_id IS NOT NULL AND beneficiary IS NOT NULL AND transfer_network IS NOT NULL)
  ),
  CONSTRAINT bank_transfers_deposit_shape CHECK (
    direction <> 'DEPOSIT' OR (
      hold_id IS NULL AND transfer_network IS NULL AND counterparty IS NOT NULL
      AND (wallet_id IS NULL OR pending_credit_id IS NOT NULL)
    )
  ),
  CONSTRAINT bank_transfers_unrouted_failed CHECK (wallet_id IS NOT NULL OR status = 'FAILED'),
  CONSTRAINT bank_transfers_final_unscheduled CHECK (status = 'PENDING' OR settle_at IS NULL),
  CONSTRAINT bank_transfers_failed_has_code CHECK ((status = 'FAILED') = (return_code IS NOT NULL))
);
CREATE INDEX bank_transfers_due ON bank_transfers (settle_at) WHERE status = 'PENDING' AND settle_at IS NOT NULL;
CREATE INDEX bank_transfers_wallet ON bank_transfers (client_id, wallet_id, id);
CREATE INDEX bank_transfers_customer ON bank_transfers (client_id, customer_id, id);
CREATE INDEX bank_transfers_portfolio ON bank_transfers (client_id, portfolio_id, id);
CREATE INDEX bank_transfers_client ON bank_transfers (client_id, id);

-- The lifecycle records (children) of a bank transfer: one when it starts, one when it ends.
CREATE TABLE bank_transactions (
  client_id uuid NOT NULL,
  id uuid NOT NULL,
  bank_transfer_id uuid NOT NULL,
  type text NOT NULL CHECK (type IN (
    'DEPOSIT_INITIATED', 'DEPOSIT_SUCCESS', 'DEPOSIT_FAILURE', 'WITHDRAWAL_INITIATED', 'WITHDRAWAL_SUCCESS', 'WITHDRAWAL_FAILURE'
  )),
  status text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED')),
  return_code text CHECK (length(return_code) BETWEEN 1 AND 16),
  failure_reason text CHECK (length(failure_reason) BETWEEN 1 AND 500),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, bank_transfer_id) REFERENCES bank_transfers (client_id, id),
  CONSTRAINT bank_transactions_type_status CHECK (
    (type LIKE '%\_INITIATED' AND status = 'PENDING')
    OR (type LIKE '%\_SUCCESS' AND status = 'COMPLETED')
    OR (type LIKE '%\_FAILURE' AND status = 'FAILED' AND return_code IS NOT NULL)
  )
);
CREATE INDEX bank_transactions_transfer ON bank_transactions (client_id, bank_transfer_id, id);
-- A payment starts once and ends once: a second settlement or failure cannot be written.
CREATE UNIQUE INDEX bank_transactions_one_start ON bank_transactions (client_id, bank_transfer_id) WHERE type LIKE '%\_INITIATED';
CREATE UNIQUE INDEX bank_transactions_one_end ON bank_transactions (client_id, bank_transfer_id) WHERE type NOT LIKE '%\_INITIATED';

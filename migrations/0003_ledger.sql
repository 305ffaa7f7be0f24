-- The double-entry ledger and the unified wallet transaction history.
--
-- Money lives in ledger accounts: one per (wallet, asset) for customers, and system accounts per
-- asset (bank settlement, card settlement, crypto custody, trading, fees, suspense), each split
-- into shards so that the bank's busy accounts do not serialise every transfer. Every movement is
-- a ledger transfer made of entries; an entry moves a positive amount from one balance (account +
-- balance type) to another of the same asset, so every transfer sums to zero per asset by
-- construction. Account balances are derived state, updated in the same transaction as the
-- entries; `openbaas ledger verify` recomputes them from the entries.
--
-- Sign convention: a credit increases a balance, a debit decreases it. Customer balances are
-- never negative, except AVAILABLE after a forced card completion, and then `overdrawn` records
-- the shortfall (it always equals max(0, -available)).

CREATE TABLE ledger_accounts (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('WALLET', 'BANK_SETTLEMENT', 'CARD_SETTLEMENT', 'CRYPTO_CUSTODY', 'TRADING', 'FEES', 'SUSPENSE')),
  wallet_id uuid,
  shard smallint NOT NULL DEFAULT 0 CHECK (shard BETWEEN 0 AND 255),
  asset text NOT NULL CHECK (asset ~ '^[A-Z][A-Z0-9_]{1,15}$'),
  available numeric(40, 0) NOT NULL DEFAULT 0,
  reserved numeric(40, 0) NOT NULL DEFAULT 0,
  pending numeric(40, 0) NOT NULL DEFAULT 0,
  overdrawn numeric(40, 0) NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  -- Target of the entries' foreign keys, so an entry can only touch accounts of its own asset.
  UNIQUE (client_id, id, asset),
  CONSTRAINT ledger_accounts_wallet_kind CHECK ((kind = 'WALLET') = (wallet_id IS NOT NULL)),
  CONSTRAINT ledger_accounts_wallet_unsharded CHECK (kind <> 'WALLET' OR shard = 0),
  -- Customer money: nothing negative, except AVAILABLE by exactly the recorded shortfall.
  CONSTRAINT ledger_accounts_wallet_non_negative CHECK (
    kind <> 'WALLET' OR (reserved >= 0 AND pending >= 0 AND overdrawn >= 0 AND overdrawn = GREATEST(0, -available))
  ),
  -- System accounts only ever use AVAILABLE and may be negative (a settlement account is the
  -- mirror image of the customer money it backs).
  CONSTRAINT ledger_accounts_system_available_only CHECK (kind = 'WALLET' OR (reserved = 0 AND pending = 0 AND overdrawn = 0))
);
CREATE UNIQUE INDEX ledger_accounts_wallet_key ON ledger_accounts (client_id, wallet_id, asset) WHERE kind = 'WALLET';
CREATE UNIQUE INDEX ledger_accounts_system_key ON ledger_accounts (client_id, kind, asset, shard) WHERE kind <> 'WALLET';

CREATE TABLE ledger_holds (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  account_id uuid NOT NULL,
  asset text NOT NULL,
  status text NOT NULL CHECK (status IN ('OPEN', 'CAPTURED', 'RELEASED', 'EXPIRED')),
  -- placed = everything ever reserved (first amount plus increments);
  -- remaining = what is reserved now; captured = everything captured, of which over_captured
  -- came from AVAILABLE beyond the hold; released = given back (by release or expiry).
  amount_placed numeric(40, 0) NOT NULL CHECK (amount_placed > 0),
  amount_remaining numeric(40, 0) NOT NULL CHECK (amount_remaining >= 0),
  amount_captured numeric(40, 0) NOT NULL DEFAULT 0 CHECK (amount_captured >= 0),
  amount_over_captured numeric(40, 0) NOT NULL DEFAULT 0 CHECK (amount_over_captured >= 0),
  amount_released numeric(40, 0) NOT NULL DEFAULT 0 CHECK (amount_released >= 0),
  -- Part of an over-capture that AVAILABLE could not cover (forced completions only).
  shortfall numeric(40, 0) NOT NULL DEFAULT 0 CHECK (shortfall >= 0),
  expires_at timestamptz,
  parent_transaction_id uuid,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, account_id, asset) REFERENCES ledger_accounts (client_id, id, asset),
  CONSTRAINT ledger_holds_accounted CHECK (
    amount_placed = amount_remaining + (amount_captured - amount_over_captured) + amount_released
  ),
  CONSTRAINT ledger_holds_over_capture CHECK (amount_over_captured <= amount_captured AND shortfall <= amount_over_captured),
  CONSTRAINT ledger_holds_closed_empty CHECK (status = 'OPEN' OR amount_remaining = 0)
);
CREATE INDEX ledger_holds_open_by_expiry ON ledger_holds (expires_at) WHERE status = 'OPEN' AND expires_at IS NOT NULL;
CREATE INDEX ledger_holds_open_by_account ON ledger_holds (client_id, account_id) WHERE status = 'OPEN';

CREATE TABLE ledger_pending_credits (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  account_id uuid NOT NULL,
  asset text NOT NULL,
  -- The system account the money came from, and goes back to if the credit fails.
  source_kind text NOT NULL CHECK (source_kind IN ('BANK_SETTLEMENT', 'CARD_SETTLEMENT', 'CRYPTO_CUSTODY', 'TRADING', 'FEES', 'SUSPENSE')),
  status text NOT NULL CHECK (status IN ('PENDING', 'CLEARED', 'FAILED')),
  amount numeric(40, 0) NOT NULL CHECK (amount > 0),
  parent_transaction_id uuid,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, account_id, asset) REFERENCES ledger_accounts (client_id, id, asset)
);
CREATE INDEX ledger_pending_credits_open_by_account ON ledger_pending_credits (client_id, account_id) WHERE status = 'PENDING';

CREATE TABLE ledger_transfers (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN (
    'TRANSFER', 'HOLD_PLACE', 'HOLD_INCREMENT', 'HOLD_CAPTURE', 'HOLD_RELEASE', 'HOLD_EXPIRE',
    'PENDING_CREDIT', 'PENDING_CLEAR', 'PENDING_FAIL'
  )),
  -- The business record this movement belongs to (an internal transfer, a card swipe, …).
  parent_transaction_id uuid,
  hold_id uuid,
  pending_credit_id uuid,
  description text CHECK (length(description) <= 1000),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  CONSTRAINT ledger_transfers_hold_kind CHECK ((kind LIKE 'HOLD\_%') = (hold_id IS NOT NULL)),
  CONSTRAINT ledger_transfers_pending_kind CHECK ((kind LIKE 'PENDING\_%') = (pending_credit_id IS NOT NULL))
);

CREATE TABLE ledger_entries (
  client_id uuid NOT NULL,
  transfer_id uuid NOT NULL,
  entry_index smallint NOT NULL CHECK (entry_index >= 0),
  asset text NOT NULL,
  amount numeric(40, 0) NOT NULL CHECK (amount > 0),
  debit_account_id uuid NOT NULL,
  debit_balance text NOT NULL CHECK (debit_balance IN ('AVAILABLE', 'RESERVED', 'PENDING')),
  credit_account_id uuid NOT NULL,
  credit_balance text NOT NULL CHECK (credit_balance IN ('AVAILABLE', 'RESERVED', 'PENDING')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, transfer_id, entry_index),
  FOREIGN KEY (client_id, transfer_id) REFERENCES ledger_transfers (client_id, id),
  FOREIGN KEY (client_id, debit_account_id, asset) REFERENCES ledger_accounts (client_id, id, asset),
  FOREIGN KEY (client_id, credit_account_id, asset) REFERENCES ledger_accounts (client_id, id, asset),
  CONSTRAINT ledger_entries_moves_something CHECK (debit_account_id <> credit_account_id OR debit_balance <> credit_balance)
);

-- The unified wallet transaction history: one immutable child record per effect on a wallet,
-- grouped under a parent (parent_transaction_id) and linked to the bank, card or crypto record
-- that caused it.
CREATE TABLE wallet_transactions (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  parent_transaction_id uuid NOT NULL,
  wallet_id uuid NOT NULL,
  ledger_transfer_id uuid NOT NULL,
  type text NOT NULL CHECK (type ~ '^[A-Z][A-Z0-9_]{0,63}$'),
  purpose text NOT NULL CHECK (purpose ~ '^[A-Z][A-Z0-9_]{0,63}$'),
  operation text NOT NULL CHECK (operation IN ('CREDIT', 'DEBIT')),
  balance_type text NOT NULL CHECK (balance_type IN ('AVAILABLE', 'RESERVED', 'PENDING')),
  status text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  amount numeric(40, 0) NOT NULL CHECK (amount > 0),
  asset text NOT NULL,
  note text CHECK (length(note) <= 1000),
  card_transaction_id uuid,
  parent_card_transaction_id uuid,
  bank_transaction_id uuid,
  parent_bank_transaction_id uuid,
  crypto_transaction_id uuid,
  parent_crypto_transaction_id uuid,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, ledger_transfer_id) REFERENCES ledger_transfers (client_id, id)
);
CREATE INDEX wallet_transactions_by_wallet ON wallet_transactions (client_id, wallet_id, id);
CREATE INDEX wallet_transactions_by_parent ON wallet_transactions (client_id, parent_transaction_id);
CREATE INDEX wallet_transactions_by_card ON wallet_transactions (client_id, card_transaction_id) WHERE card_transaction_id IS NOT NULL;
CREATE INDEX wallet_transactions_by_parent_card ON wallet_transactions (client_id, parent_card_transaction_id) WHERE parent_card_transaction_id IS NOT NULL;
CREATE INDEX wallet_transactions_by_bank ON wallet_transactions (client_id, bank_transaction_id) WHERE bank_transaction_id IS NOT NULL;
CREATE INDEX wallet_transactions_by_parent_bank ON wallet_transactions (client_id, parent_bank_transaction_id) WHERE parent_bank_transaction_id IS NOT NULL;
CREATE INDEX wallet_transactions_by_crypto ON wallet_transactions (client_id, crypto_transaction_id) WHERE crypto_transaction_id IS NOT NULL;
CREATE INDEX wallet_transactions_by_parent_crypto ON wallet_transactions (client_id, parent_crypto_transaction_id) WHERE parent_crypto_transaction_id IS NOT NULL;

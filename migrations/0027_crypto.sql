-- Crypto deposits and withdrawals (issue 21, contract §7, §12.7, §12.8).
--
-- crypto_addresses: the deposit address of a wallet on a network. One per (wallet, network),
-- shared by every asset of that network; `asset` is the asset it was first asked for. The
-- address is derived from the sandbox seed, so no key material is stored.
CREATE TABLE crypto_addresses (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  wallet_id uuid NOT NULL,
  asset text NOT NULL CHECK (asset IN ('BTC', 'ETH', 'USDC', 'USDT')),
  network text NOT NULL CHECK (network IN ('BITCOIN', 'ETHEREUM', 'TRON', 'SOLANA')),
  address text NOT NULL CHECK (length(address) BETWEEN 20 AND 128),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, wallet_id) REFERENCES wallets (client_id, id),
  UNIQUE (client_id, wallet_id, network),
  UNIQUE (client_id, network, address)
);
-- Deposits name the address only: it is looked up by its text (lower case for Bech32 and hex).
CREATE INDEX crypto_addresses_by_address ON crypto_addresses (client_id, lower(address));

-- crypto_transfers: one row per deposit or withdrawal (the parent record, parentCryptoTransactionId
-- of the API and of the wallet history), with its current state. Amounts are minor units of the
-- asset: `amount` is what the request named, `net_amount` what the recipient gets, `fee` what the
-- network fee costs the wallet (withdrawals; 0 for deposits). A deposit refused because the asset
-- does not move on the address's network is kept FAILED with no ledger movement (for support).
CREATE TABLE crypto_transfers (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  direction text NOT NULL CHECK (direction IN ('DEPOSIT', 'WITHDRAWAL')),
  wallet_id uuid NOT NULL,
  address_id uuid,
  status text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED')),
  asset text NOT NULL CHECK (asset IN ('BTC', 'ETH', 'USDC', 'USDT')),
  network text NOT NULL CHECK (network IN ('BITCOIN', 'ETHEREUM', 'TRON', 'SOLANA')),
  amount numeric(40, 0) NOT NULL CHECK (amount > 0),
  net_amount numeric(40, 0) NOT NULL CHECK (net_amount > 0),
  fee numeric(40, 0) NOT NULL CHECK (fee >= 0),
  gross_amount boolean NOT NULL DEFAULT false,
  address text NOT NULL CHECK (length(address) BETWEEN 1 AND 128),
  from_address text CHECK (from_address IS NULL OR length(from_address) BETWEEN 1 AND 128),
  memo text CHECK (memo IS NULL OR length(memo) BETWEEN 1 AND 256),
  off_curve boolean NOT NULL DEFAULT false,
  tx_hash text NOT NULL CHECK (length(tx_hash) BETWEEN 1 AND 128),
  confirmations integer NOT NULL CHECK (confirmations >= 0),
  confirmations_required integer NOT NULL CHECK (confirmations_required BETWEEN 1 AND 1000),
  block_number bigint CHECK (block_number IS NULL OR block_number >= 1),
  hold_id uuid,
  pending_credit_id uuid,
  -- Sandbox: a withdrawal the network will reject (magic amounts) fails at its first confirmation.
  planned_failure text CHECK (planned_failure IS NULL OR length(planned_failure) BETWEEN 1 AND 500),
  failure_reason text CHECK (failure_reason IS NULL OR length(failure_reason) BETWEEN 1 AND 1000),
  reference_number text CHECK (reference_number IS NULL OR length(reference_number) BETWEEN 1 AND 100),
  note text CHECK (note IS NULL OR length(note) BETWEEN 1 AND 500),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, wallet_id) REFERENCES wallets (client_id, id),
  FOREIGN KEY (client_id, address_id) REFERENCES crypto_addresses (client_id, id),
  CONSTRAINT crypto_transfers_net CHECK (CASE WHEN gross_amount THEN net_amount + fee = amount ELSE net_amount = amount END),
  CONSTRAINT crypto_transfers_deposit_shape CHECK (
    direction <> 'DEPOSIT' OR (fee = 0 AND net_amount = amount AND hold_id IS NULL AND address_id IS NOT NULL AND NOT gross_amount)
  ),
  CONSTRAINT crypto_transfers_withdrawal_shape CHECK (direction <> 'WITHDRAWAL' OR (hold_id IS NOT NULL AND pending_credit_id IS NULL)),
  -- A deposit that reached the ledger has its pending credit; only a refused one (FAILED) has none.
  CONSTRAINT crypto_transfers_deposit_credit CHECK (direction <> 'DEPOSIT' OR pending_credit_id IS NOT NULL OR status = 'FAILED'),
  CONSTRAINT crypto_transfers_failure CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL)),
  CONSTRAINT crypto_transfers_completed CHECK (status <> 'COMPLETED' OR confirmations >= confirmations_required)
);
-- The blocks call: every pending transfer of a client on one network.
CREATE INDEX crypto_transfers_pending ON crypto_transfers (client_id, network, id) WHERE status = 'PENDING';
CREATE INDEX crypto_transfers_by_wallet ON crypto_transfers (client_id, wallet_id, id);
-- One chain transaction pays an address once: a repeated sandbox deposit is refused, not credited twice.
CREATE UNIQUE INDEX crypto_transfers_tx_hash ON crypto_transfers (client_id, network, direction, tx_hash, address);

-- crypto_transactions: the child records, one per lifecycle step (contract §12.7 types).
CREATE TABLE crypto_transactions (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  crypto_transfer_id uuid NOT NULL,
  type text NOT NULL CHECK (type IN (
    'CRYPTO_DEPOSIT_INITIATED', 'CRYPTO_DEPOSIT_SUCCESS', 'CRYPTO_DEPOSIT_FAILURE',
    'CRYPTO_WITHDRAWAL_INITIATED', 'CRYPTO_WITHDRAWAL_SUCCESS', 'CRYPTO_WITHDRAWAL_FAILURE'
  )),
  status text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED')),
  confirmations integer NOT NULL CHECK (confirmations >= 0),
  failure_reason text CHECK (failure_reason IS NULL OR length(failure_reason) BETWEEN 1 AND 1000),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, crypto_transfer_id) REFERENCES crypto_transfers (client_id, id),
  CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL))
);
CREATE INDEX crypto_transactions_by_transfer ON crypto_transactions (client_id, crypto_transfer_id, id);

-- crypto_chain_heights: the sandbox chains of a client, one height per network (0 before the
-- first block). The row is the lock that orders concurrent blocks calls on one network.
CREATE TABLE crypto_chain_heights (
  client_id uuid NOT NULL REFERENCES clients (id),
  network text NOT NULL CHECK (network IN ('BITCOIN', 'ETHEREUM', 'TRON', 'SOLANA')),
  height bigint NOT NULL CHECK (height >= 0),
  -- The block worker: when this chain last mined a block by the client's clock.
  mined_at timestamptz,
  PRIMARY KEY (client_id, network)
);

-- Cards (issue 18): card programs and cards.
--
-- card_programs: a client's card programs (contract §12.1). Every client has the three default
-- programs, created with the client; clients that existed before this migration get them when the
-- program next starts (src/modules/cards/programs.ts, seedMissingCardPrograms), since the
-- defaults live in code. The settings the processor reads (cooperative authorization, hold expiry,
-- over-capture, limits) are JSON documents validated by the code that writes them; the database
-- checks their shape's outline. Programs are client configuration: a sandbox reset keeps them.
CREATE TABLE card_programs (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  card_type text NOT NULL CHECK (card_type IN ('DEBIT', 'CREDIT')),
  card_transaction_handler text NOT NULL CHECK (card_transaction_handler IN ('STANDARD', 'COOP_AUTH')),
  network text NOT NULL CHECK (network IN ('VISA', 'MASTERCARD')),
  bin text NOT NULL CHECK (length(bin) BETWEEN 6 AND 8 AND btrim(bin, '0123456789') = ''),
  currency text NOT NULL CHECK (currency = 'USD'),
  coop_auth jsonb CHECK (coop_auth IS NULL OR jsonb_typeof(coop_auth) = 'object'),
  hold_expiry jsonb NOT NULL CHECK (jsonb_typeof(hold_expiry) = 'object'),
  over_capture jsonb NOT NULL CHECK (jsonb_typeof(over_capture) = 'object'),
  limits jsonb NOT NULL CHECK (jsonb_typeof(limits) = 'object'),
  reveal_physical_cards boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  UNIQUE (client_id, name),
  -- A cooperative-authorization program has its settings; a standard one has none.
  CHECK ((card_transaction_handler = 'COOP_AUTH') = (coop_auth IS NOT NULL))
);

-- cards: one row per issued card. The card number (PAN) is stored only encrypted (pan_encrypted,
-- AES-256-GCM bound to the client and the card) with a keyed fingerprint (HMAC-SHA256) that keeps
-- numbers unique per client and finds a card by its number without decrypting; the CVV is never
-- stored. last4 and the expiry are not secret and are kept in clear for the API.
CREATE TABLE cards (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  customer_id uuid NOT NULL,
  wallet_id uuid NOT NULL,
  card_program_id uuid NOT NULL,
  card_type text NOT NULL CHECK (card_type IN ('DEBIT', 'CREDIT')),
  card_transaction_handler text NOT NULL CHECK (card_transaction_handler IN ('STANDARD', 'COOP_AUTH')),
  reference_number text NOT NULL CHECK (length(reference_number) BETWEEN 1 AND 40),
  status text NOT NULL CHECK (status IN ('ACTIVE', 'BLOCKED', 'SUSPENDED', 'CANCELLED')),
  is_virtual boolean NOT NULL,
  is_primary boolean NOT NULL,
  last4 text NOT NULL CHECK (length(last4) = 4 AND btrim(last4, '0123456789') = ''),
  expiry_month smallint NOT NULL CHECK (expiry_month BETWEEN 1 AND 12),
  expiry_year smallint NOT NULL CHECK (expiry_year BETWEEN 2000 AND 2099),
  pan_encrypted text NOT NULL,
  pan_fingerprint text NOT NULL CHECK (length(pan_fingerprint) = 64),
  -- Credit cards (a later issue): the credit line and its collateral wallet.
  credit_line_id uuid,
  collateral_wallet_id uuid,
  activated_at timestamptz,
  cancelled_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  UNIQUE (client_id, reference_number),
  UNIQUE (client_id, pan_fingerprint),
  FOREIGN KEY (client_id, card_program_id) REFERENCES card_programs (client_id, id),
  FOREIGN KEY (client_id, wallet_id) REFERENCES wallets (client_id, id),
  FOREIGN KEY (client_id, customer_id) REFERENCES customers (client_id, id),
  CHECK ((status = 'CANCELLED') = (cancelled_at IS NOT NULL)),
  CHECK (card_type = 'CREDIT' OR (credit_line_id IS NULL AND collateral_wallet_id IS NULL))
);
CREATE INDEX cards_customer ON cards (client_id, customer_id, id);
CREATE INDEX cards_wallet ON cards (client_id, wallet_id);

-- Card transactions (issue 18): the records of the card authorization processor (contract §12.3).
--
-- card_swipes: one row per card lifecycle (a "swipe"): the parent record, whose id is the
-- parentCardTransactionId of the API, events and wallet history. It keeps the lifecycle's
-- current state: its status, the ledger hold and what it still reserves, what was posted, the
-- identifiers messages are correlated by (networkDataRef, the first message's STAN, DE7 and
-- acquirer, the RRN) and the hold's expiry by the client's clock.
CREATE TABLE card_swipes (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  card_id uuid NOT NULL,
  wallet_id uuid NOT NULL,
  credit_line_id uuid,
  card_type text NOT NULL CHECK (card_type IN ('DEBIT', 'CREDIT')),
  status text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  asset text NOT NULL CHECK (length(asset) BETWEEN 1 AND 16),
  network_data_ref text CHECK (network_data_ref IS NULL OR length(network_data_ref) = 16),
  first_mti text NOT NULL CHECK (first_mti ~ '^0[0-9]{3}$'),
  stan text NOT NULL CHECK (stan ~ '^[0-9]{6}$'),
  transmission_date_time text NOT NULL CHECK (transmission_date_time ~ '^[0-9]{10}$'),
  acquirer_id text NOT NULL CHECK (acquirer_id ~ '^[0-9]{0,11}$'),
  rrn text NOT NULL CHECK (length(rrn) = 12),
  -- What the open hold still reserves, and the net amount posted (debits minus refunds), minor units.
  held_minor bigint NOT NULL CHECK (held_minor >= 0),
  posted_minor bigint NOT NULL,
  hold_id uuid,
  merchant jsonb CHECK (merchant IS NULL OR jsonb_typeof(merchant) = 'object'),
  mcc text CHECK (mcc IS NULL OR mcc ~ '^[0-9]{4}$'),
  expires_at timestamptz,
  expired_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, card_id) REFERENCES cards (client_id, id),
  -- A lifecycle with something reserved is PENDING and has its hold and its expiry.
  CHECK (held_minor = 0 OR (status = 'PENDING' AND hold_id IS NOT NULL AND expires_at IS NOT NULL)),
  CHECK (expired_at IS NULL OR status <> 'PENDING')
);
-- Correlation, first choice: the lifecycle reference of DE63 (contract §12.3).
CREATE INDEX card_swipes_network_data_ref ON card_swipes (client_id, card_id, network_data_ref) WHERE network_data_ref IS NOT NULL;
-- Lists: a card's lifecycles, newest first.
CREATE INDEX card_swipes_card ON card_swipes (client_id, card_id, id);

-- card_transactions: one row per message (the child records). Amounts are minor units of the
-- card's asset (amount_minor: what this message did: approved, posted, released or credited;
-- requested_minor: what the network asked for; held_minor: what the hold reserves after it),
-- except transaction_minor/surcharge_minor, which are in the transaction currency (DE49).
-- request_fields/response_fields keep the message as exchanged, with DE2 masked and card
-- secrets (DE14, 35, 36, 45, 52, 55) removed; a repeated message is answered from them.
CREATE TABLE card_transactions (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  swipe_id uuid NOT NULL,
  card_id uuid NOT NULL,
  wallet_id uuid NOT NULL,
  credit_line_id uuid,
  card_type text NOT NULL CHECK (card_type IN ('DEBIT', 'CREDIT')),
  type text NOT NULL CHECK (type IN ('PRE_AUTHORIZATION', 'ACCOUNT_VERIFICATION', 'BALANCE_INQUIRY', 'PURCHASE', 'REFUND', 'PRE_AUTH_COMPLETION', 'REVERSAL_ADVICE')),
  operation text NOT NULL CHECK (operation IN ('CREDIT', 'DEBIT')),
  status text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  mti text NOT NULL CHECK (mti ~ '^0[0-9]{3}$'),
  processing_code text NOT NULL CHECK (processing_code ~ '^[0-9]{6}$'),
  asset text NOT NULL CHECK (length(asset) BETWEEN 1 AND 16),
  amount_minor bigint NOT NULL CHECK (amount_minor >= 0),
  requested_minor bigint NOT NULL CHECK (requested_minor >= 0),
  held_minor bigint NOT NULL CHECK (held_minor >= 0),
  transaction_minor bigint NOT NULL CHECK (transaction_minor >= 0),
  transaction_currency text NOT NULL CHECK (length(transaction_currency) = 3),
  surcharge_minor bigint,
  fees jsonb NOT NULL CHECK (jsonb_typeof(fees) = 'array'),
  rrn text NOT NULL CHECK (length(rrn) = 12),
  stan text NOT NULL CHECK (stan ~ '^[0-9]{6}$'),
  transmission_date_time text NOT NULL CHECK (transmission_date_time ~ '^[0-9]{10}$'),
  acquirer_id text NOT NULL CHECK (acquirer_id ~ '^[0-9]{0,11}$'),
  auth_code text CHECK (auth_code IS NULL OR length(auth_code) = 6),
  response_code text NOT NULL CHECK (length(response_code) = 2),
  decline_reason text,
  decision_source text NOT NULL CHECK (decision_source IN ('SYSTEM', 'CLIENT', 'STAND_IN', 'NETWORK')),
  network_data_ref text CHECK (network_data_ref IS NULL OR length(network_data_ref) = 16),
  merchant jsonb CHECK (merchant IS NULL OR jsonb_typeof(merchant) = 'object'),
  request_fields jsonb NOT NULL CHECK (jsonb_typeof(request_fields) = 'object'),
  response_mti text NOT NULL CHECK (response_mti ~ '^0[0-9]{3}$'),
  response_fields jsonb NOT NULL CHECK (jsonb_typeof(response_fields) = 'object'),
  expires_at timestamptz,
  expired_at timestamptz,
  over_capture boolean NOT NULL,
  force_post boolean NOT NULL,
  -- An advice that matched no lifecycle (an unmatched 0420): acknowledged, no money moved.
  orphan boolean NOT NULL,
  ledger_hold_id uuid,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, swipe_id) REFERENCES card_swipes (client_id, id),
  FOREIGN KEY (client_id, card_id) REFERENCES cards (client_id, id),
  -- A decline moves no money; an approval has no decline reason.
  CHECK ((decline_reason IS NULL) = (response_code IN ('00', '10'))),
  CHECK (status <> 'FAILED' OR (amount_minor = 0 AND decline_reason IS NOT NULL)),
  CHECK (NOT orphan OR amount_minor = 0),
  CHECK (NOT over_capture OR type = 'PRE_AUTH_COMPLETION')
);
CREATE INDEX card_transactions_swipe ON card_transactions (client_id, swipe_id, id);
-- Duplicate detection: the same STAN and RRN of a card within 24 hours.
CREATE INDEX card_transactions_stan_rrn ON card_transactions (client_id, card_id, stan, rrn, created_at);
-- Correlation by DE90 (original MTI + STAN + DE7 + acquirer) and by card + RRN + amount.
CREATE INDEX card_transactions_original ON card_transactions (client_id, stan, transmission_date_time, acquirer_id);
CREATE INDEX card_transactions_card_rrn ON card_transactions (client_id, card_id, rrn);
-- Daily limits: a card's approvals of the day.
CREATE INDEX card_transactions_card_day ON card_transactions (client_id, card_id, created_at);

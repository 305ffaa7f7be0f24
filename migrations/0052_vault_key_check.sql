-- The key that encrypts card numbers (OPENBAAS_VAULT_KEY, or the key derived from the encryption
-- key when it is unset), by the id every encrypted number carries: a process started with another
-- is refused at start, as one with another encryption key is (0049). Until 2026-12-07 such a
-- process started, answered 500 to every message on a card the others issued, and computed other
-- fingerprints, so finding a card by its number and keeping numbers unique failed across
-- processes (found by an audit). One row, written by the first process that starts (or taken from
-- the card numbers already encrypted).
CREATE TABLE vault_key_check (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  key_id text NOT NULL CHECK (key_id ~ '^[0-9a-f]{8}$'),
  recorded_at timestamptz NOT NULL DEFAULT now()
);

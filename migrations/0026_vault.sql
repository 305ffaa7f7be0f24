-- The vault (issue 20): what the card-data SDK needs to show a cardholder their card number
-- without the client's servers touching it.
--
-- vault_settings: one row per client, made on first use. vault_id and route_id are fixed for the
-- client (GET /v1/vault/config). The secret signs the client's vault tokens (HS256), encrypted with
-- the field cipher; a rotation keeps the previous secret until every token it signed has expired
-- (previous_secret_expires_at), so rotating never breaks a token already handed out.
CREATE TABLE vault_settings (
  client_id uuid PRIMARY KEY REFERENCES clients (id),
  vault_id text NOT NULL UNIQUE CHECK (length(vault_id) = 11 AND left(vault_id, 3) = 'tnt'),
  route_id uuid NOT NULL,
  secret_encrypted text NOT NULL,
  secret_version integer NOT NULL CHECK (secret_version >= 1),
  previous_secret_encrypted text,
  previous_secret_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  rotated_at timestamptz,
  CHECK ((previous_secret_encrypted IS NULL) = (previous_secret_expires_at IS NULL)),
  CHECK (previous_secret_encrypted IS NULL OR secret_version >= 2)
);

-- vault_aliases: the persistent alias of a card's number, CVV or expiry (GET /v1/vault/show answers
-- aliases; POST /v1/vault/reveal turns them into values for a token of the card's owner).
CREATE TABLE vault_aliases (
  client_id uuid NOT NULL REFERENCES clients (id),
  alias text NOT NULL CHECK (length(alias) BETWEEN 20 AND 64),
  card_id uuid NOT NULL,
  field text NOT NULL CHECK (field IN ('pan', 'cvv', 'expiry')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, alias),
  UNIQUE (client_id, card_id, field),
  FOREIGN KEY (client_id, card_id) REFERENCES cards (client_id, id)
);

-- vault_audit: every token issued and every reveal (who, what, from where), never a value.
CREATE TABLE vault_audit (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  action text NOT NULL CHECK (action IN ('TOKEN_ISSUED', 'REVEALED')),
  customer_id uuid NOT NULL,
  card_id uuid,
  fields text[] NOT NULL,
  token_id text NOT NULL CHECK (length(token_id) BETWEEN 1 AND 64),
  ip text,
  user_agent text CHECK (user_agent IS NULL OR length(user_agent) <= 500),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id)
);
CREATE INDEX vault_audit_card ON vault_audit (client_id, card_id, created_at) WHERE card_id IS NOT NULL;
CREATE INDEX vault_audit_customer ON vault_audit (client_id, customer_id, id);

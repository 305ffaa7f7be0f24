-- Tenants ("clients"), their API keys, idempotency records and the events outbox.
-- Every table carries client_id and every unique key includes it, so the data can later be
-- distributed by client.

CREATE TABLE clients (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  -- The first characters of the key (for example sk_test_Ab12Cd34), shown to people and used to
  -- find the key; the key itself is stored only as its SHA-256 hash.
  prefix text NOT NULL,
  secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
  live boolean NOT NULL,
  read_only boolean NOT NULL DEFAULT false,
  allowed_cidrs text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  PRIMARY KEY (client_id, id)
);
-- Keys are found by prefix before the client is known; the prefix is random and globally unique.
CREATE UNIQUE INDEX api_keys_prefix_key ON api_keys (prefix);

CREATE TABLE idempotency_keys (
  client_id uuid NOT NULL REFERENCES clients (id),
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  request_hash bytea NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  status_code integer NOT NULL CHECK (status_code BETWEEN 200 AND 499),
  response_body jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

CREATE TABLE events (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  type text NOT NULL CHECK (type ~ '^[A-Z][A-Z0-9_]*$'),
  data jsonb NOT NULL CHECK (jsonb_typeof(data) = 'object' AND data ? 'traceId'),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id)
);
CREATE INDEX events_client_type ON events (client_id, type, id);
CREATE INDEX events_created_at ON events (created_at);

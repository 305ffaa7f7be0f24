-- Webhook subscriptions, their deliveries (one per event and subscription) and the log of every
-- delivery attempt. Deliveries are created in the same transaction as the event they carry, so an
-- event can never be committed without its deliveries; workers claim them with FOR UPDATE SKIP
-- LOCKED and a lease.

-- The id of the delivery of an event to the subscription at `ordinal` (1, 2, ...) among the
-- event's deliveries: the event id's first 11 bytes (UUIDv7 milliseconds and sequence, so ids
-- keep creation order as every id does), then the ordinal, then random bytes. Deliveries of one
-- event thus sort by ordinal, and deliveries of different events sort like their events. (A
-- client has at most 100 subscriptions, so the ordinal fits its byte.)
CREATE FUNCTION openbaas_delivery_id(event_id uuid, ordinal integer) RETURNS uuid
LANGUAGE sql VOLATILE AS $$
  SELECT encode(
    substring(uuid_send(event_id) FROM 1 FOR 11)
      || set_byte('\x00'::bytea, 0, ordinal % 256)
      || substring(uuid_send(gen_random_uuid()) FROM 13 FOR 4),
    'hex')::uuid
$$;

CREATE TABLE webhook_subscriptions (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  url text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  event_types text[] NOT NULL CHECK (cardinality(event_types) BETWEEN 1 AND 100),
  active boolean NOT NULL,
  -- The signing secret (whsec_ + base64). It has to be readable to sign, so it is stored as is.
  secret text NOT NULL CHECK (secret LIKE 'whsec\_%'),
  -- After a rotation the previous secret keeps signing, next to the new one, until it expires.
  previous_secret text CHECK (previous_secret LIKE 'whsec\_%'),
  previous_secret_expires_at timestamptz,
  secret_rotated_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz,
  PRIMARY KEY (client_id, id),
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL)),
  CHECK (deleted_at IS NULL OR NOT active)
);
-- Fan-out reads the active subscriptions of one client; workers walk all active ones.
CREATE INDEX webhook_subscriptions_active ON webhook_subscriptions (client_id, id) WHERE active;

CREATE TABLE webhook_deliveries (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  subscription_id uuid NOT NULL,
  -- The event id, sent as webhook-id on every attempt. Test deliveries carry an id of their own
  -- that has no row in events; their body data is kept in test_data instead.
  event_id uuid NOT NULL,
  event_type text NOT NULL CHECK (event_type ~ '^[A-Z][A-Z0-9_]*$'),
  test_data jsonb CHECK (test_data IS NULL OR jsonb_typeof(test_data) = 'object'),
  status text NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED', 'CANCELLED')),
  -- Attempts started so far (a claim counts as an attempt, even if its worker then dies).
  attempt_count integer NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
  -- Set by a manual retry: the attempt after which the delivery fails without further retries.
  final_attempt integer CHECK (final_attempt IS NULL OR final_attempt >= 1),
  next_attempt_at timestamptz NOT NULL,
  -- A worker's claim: only the holder of the token may record the outcome, and the claim comes
  -- back to the pool when lease_expires_at passes (the worker died).
  lease_token uuid,
  lease_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completed_at timestamptz,
  PRIMARY KEY (client_id, id),
  FOREIGN KEY (client_id, subscription_id) REFERENCES webhook_subscriptions (client_id, id),
  UNIQUE (client_id, subscription_id, event_id),
  CHECK ((lease_token IS NULL) = (lease_expires_at IS NULL)),
  CHECK (status = 'PENDING' OR lease_token IS NULL),
  CHECK ((status = 'PENDING') = (completed_at IS NULL))
);
-- Due work of one subscription, oldest first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (client_id, subscription_id, next_attempt_at, id)
  WHERE status = 'PENDING';
-- Requests in flight (or abandoned by a dead worker) per subscription: small by construction.
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (client_id, subscription_id)
  WHERE lease_token IS NOT NULL;
-- The delivery log of one subscription, newest first.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (client_id, subscription_id, id);

CREATE TABLE webhook_delivery_attempts (
  client_id uuid NOT NULL,
  delivery_id uuid NOT NULL,
  attempt_number integer NOT NULL CHECK (attempt_number >= 1),
  attempted_at timestamptz NOT NULL,
  succeeded boolean NOT NULL,
  http_status integer CHECK (http_status BETWEEN 100 AND 999),
  latency_ms integer CHECK (latency_ms >= 0),
  response_body text CHECK (length(response_body) <= 2000),
  error text CHECK (length(error) <= 1000),
  -- Which worker made the attempt (host and process), for operators.
  worker text NOT NULL CHECK (length(worker) <= 200),
  PRIMARY KEY (client_id, delivery_id, attempt_number),
  FOREIGN KEY (client_id, delivery_id) REFERENCES webhook_deliveries (client_id, id)
);

-- The claim of the delivery workers, in one round trip. It first takes an advisory lock (held
-- until the end of the caller's transaction: with autocommit, this statement), so claims of all
-- processes run one after the other; the claim statement then starts after the previous claim
-- committed and sees its leases, which keeps the per-subscription concurrency exact across
-- processes. For every active subscription it takes the oldest due deliveries, as many as the
-- subscription has free slots (unexpired leases count as busy, except those in `answered`: the
-- caller's own requests that are over but not yet recorded), with FOR UPDATE SKIP LOCKED; leases
-- them to `token` until `lease_until`; counts the attempt; and returns what a delivery needs.
CREATE FUNCTION openbaas_claim_webhook_deliveries(
  claim_now timestamptz,
  lease_until timestamptz,
  token uuid,
  concurrency integer,
  batch_max integer,
  answered uuid[]
) RETURNS TABLE (
  client_id uuid, id uuid, subscription_id uuid, event_id uuid, event_type text, test_data jsonb,
  attempt_count integer, final_attempt integer, created_at timestamptz, lease_token uuid,
  previous_lease_expires_at timestamptz, url text, secret text, previous_secret text,
  previous_secret_expires_at timestamptz, event_data jsonb, event_created_at timestamptz
)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM pg_advisory_xact_lock(7300151006);
  RETURN QUERY
  WITH candidates AS (
    SELECT d.client_id, d.id, d.subscription_id, d.event_id, d.lease_expires_at AS previous_lease_expires_at
    FROM webhook_subscriptions s
    CROSS JOIN LATERAL (
      SELECT d.client_id, d.id, d.subscription_id, d.event_id, d.lease_expires_at
      FROM webhook_deliveries d
      WHERE d.client_id = s.client_id AND d.subscription_id = s.id AND d.status = 'PENDING'
        AND d.next_attempt_at <= claim_now
        AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= claim_now)
      ORDER BY d.next_attempt_at, d.id
      LIMIT GREATEST(0, concurrency - (
        SELECT count(*) FROM webhook_deliveries f
        WHERE f.client_id = s.client_id AND f.subscription_id = s.id
          AND f.lease_token IS NOT NULL AND f.lease_expires_at > claim_now
          AND f.id <> ALL (answered)))
      FOR UPDATE OF d SKIP LOCKED
    ) d
    WHERE s.active
    LIMIT batch_max
  )
  UPDATE webhook_deliveries w
  SET attempt_count = w.attempt_count + 1, lease_token = token, lease_expires_at = lease_until, updated_at = claim_now
  FROM candidates c
  JOIN webhook_subscriptions s ON s.client_id = c.client_id AND s.id = c.subscription_id
  LEFT JOIN events e ON e.client_id = c.client_id AND e.id = c.event_id
  WHERE w.client_id = c.client_id AND w.id = c.id
  RETURNING w.client_id, w.id, w.subscription_id, w.event_id, w.event_type, w.test_data, w.attempt_count,
    w.final_attempt, w.created_at, w.lease_token, c.previous_lease_expires_at,
    s.url, s.secret, s.previous_secret, s.previous_secret_expires_at,
    e.data, e.created_at;
END
$$;

-- Webhook deliveries are scheduled by their client's clock (CONTRACT §13: in the sandbox the
-- retry schedule follows the client's virtual clock). A delivery's next_attempt_at is written in
-- the client's time (the event's time at fan-out, the client's time plus the retry delay after a
-- failed attempt), so the claim compares it with the wall clock plus the client's offset, and
-- returns the offset so the worker schedules the next attempt in the same time. Leases stay on
-- the wall clock: they are about processes, not about the client's simulated time. In production
-- every offset is 0 and nothing changes.
DROP FUNCTION openbaas_claim_webhook_deliveries(timestamptz, timestamptz, uuid, integer, integer, uuid[]);

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
  previous_secret_expires_at timestamptz, event_data jsonb, event_created_at timestamptz, clock_offset_ms bigint
)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM pg_advisory_xact_lock(7300151006);
  RETURN QUERY
  WITH candidates AS (
    SELECT d.client_id, d.id, d.subscription_id, d.event_id, d.lease_expires_at AS previous_lease_expires_at, c.clock_offset_ms
    FROM webhook_subscriptions s
    JOIN clients c ON c.id = s.client_id
    CROSS JOIN LATERAL (
      SELECT d.client_id, d.id, d.subscription_id, d.event_id, d.lease_expires_at
      FROM webhook_deliveries d
      WHERE d.client_id = s.client_id AND d.subscription_id = s.id AND d.status = 'PENDING'
        AND d.next_attempt_at <= claim_now + c.clock_offset_ms * interval '1 millisecond'
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
    e.data, e.created_at, c.clock_offset_ms;
END
$$;

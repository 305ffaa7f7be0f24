-- The delivery claim (migration 0022) wrote updated_at = claim_now, the wall clock, while every
-- other write of a delivery dates it by the client's clock (createdAt, completedAt, the outcome's
-- updatedAt, cancellations). With a sandbox clock moved ahead, a delivery held or in flight showed
-- an updatedAt minutes or days before its createdAt until its outcome was written (found by an
-- audit). The claim now dates it by the client's clock too; the lease stays in real time (workers
-- are real processes). Only that line changes.
CREATE OR REPLACE FUNCTION openbaas_claim_webhook_deliveries(
  claim_now timestamptz,
  lease_until timestamptz,
  token uuid,
  concurrency integer,
  batch_max integer,
  answered uuid[],
  limit_subscription_ids uuid[],
  limit_values integer[]
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
    SELECT d.client_id, d.id, d.event_id, d.lease_expires_at AS previous_lease_expires_at, c.clock_offset_ms,
      s.url, s.secret, s.previous_secret, s.previous_secret_expires_at
    FROM webhook_subscriptions s
    JOIN clients c ON c.id = s.client_id
    CROSS JOIN LATERAL (
      SELECT d.client_id, d.id, d.event_id, d.lease_expires_at
      FROM webhook_deliveries d
      WHERE d.client_id = s.client_id AND d.subscription_id = s.id AND d.status = 'PENDING'
        AND d.next_attempt_at <= claim_now + c.clock_offset_ms * interval '1 millisecond'
        AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= claim_now)
      ORDER BY d.next_attempt_at, d.id
      LIMIT GREATEST(0, COALESCE(
          (SELECT l.value FROM unnest(limit_subscription_ids, limit_values) AS l(subscription_id, value) WHERE l.subscription_id = s.id LIMIT 1),
          concurrency) - (
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
  SET attempt_count = w.attempt_count + 1, lease_token = token, lease_expires_at = lease_until,
    updated_at = claim_now + c.clock_offset_ms * interval '1 millisecond'
  FROM candidates c
  LEFT JOIN events e ON e.client_id = c.client_id AND e.id = c.event_id
  WHERE w.client_id = c.client_id AND w.id = c.id
  RETURNING w.client_id, w.id, w.subscription_id, w.event_id, w.event_type, w.test_data, w.attempt_count,
    w.final_attempt, w.created_at, w.lease_token, c.previous_lease_expires_at,
    c.url, c.secret, c.previous_secret, c.previous_secret_expires_at,
    e.data, e.created_at, c.clock_offset_ms;
END
$$;

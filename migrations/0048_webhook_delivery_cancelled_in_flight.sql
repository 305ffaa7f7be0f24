-- A delivery cancelled while it is being sent (its subscription paused, deleted, or no longer
-- subscribed to its type) keeps its worker's claim until that attempt ends: it is still being sent,
-- so a replay does not schedule it and a manual retry answers 409 (docs/webhooks.md). The worker's
-- outcome then clears the claim: DELIVERED when the endpoint acknowledged the attempt, CANCELLED as
-- it was when it failed. Until now only a PENDING delivery could hold a claim, the cancellation took
-- it, and a replay or retry sent the event again while the first request was open.
-- The rule was the second unnamed table CHECK of webhook_deliveries (migration 0004: webhook_deliveries_check1).
ALTER TABLE webhook_deliveries
  DROP CONSTRAINT webhook_deliveries_check1,
  ADD CONSTRAINT webhook_deliveries_claim_check CHECK (status IN ('PENDING', 'CANCELLED') OR lease_token IS NULL);

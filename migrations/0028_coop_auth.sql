-- Cooperative authorization (issue 19, contract §12.4). docs/cards.md "Cooperative authorization".
--
-- A decision request is handled in two short transactions with the call to the client's endpoint
-- between them, outside any transaction. The first reserves the amount (a hold) and marks the
-- lifecycle with card_swipes.coop_pending; the second applies the answer (or the stand-in) and
-- clears the mark. A lifecycle left marked by a crash between the two keeps its hold until the
-- hold expires or a reversal releases it.
ALTER TABLE card_swipes ADD COLUMN coop_pending jsonb
  CHECK (coop_pending IS NULL OR (jsonb_typeof(coop_pending) = 'object' AND status = 'PENDING'));

-- What the client (or the stand-in) decided on a record of a COOP_AUTH card: the decision
-- request's event id, latency, stand-in reason, the client's message and metadata.
ALTER TABLE card_transactions ADD COLUMN coop_decision jsonb
  CHECK (coop_decision IS NULL OR jsonb_typeof(coop_decision) = 'object');

-- An idempotency record whose request is between its two transactions (a decision request in
-- flight) is stored with status 102 (Processing) and replaced by the answer when it is known.
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_status_code_check;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_status_code_check
  CHECK (status_code = 102 OR status_code BETWEEN 200 AND 499);

-- The delivery log shows what each decision request's answer decided (null for ordinary events).
ALTER TABLE webhook_delivery_attempts ADD COLUMN verdict text CHECK (length(verdict) <= 300);

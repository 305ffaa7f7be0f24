-- Endpoint health (issue 27): a subscription whose endpoint keeps failing is disabled by itself.
--
-- failing_since: when the current unbroken run of failed attempts began, by the client's clock
-- (the time the first failed attempt after a success was recorded); NULL while the last recorded
-- attempt succeeded, or before any attempt. The delivery worker writes it in the same statement
-- as the outcomes of its attempts, and only when it changes.
--
-- disabled_at, disabled_reason: set when the worker disabled the subscription because the run
-- lasted longer than WEBHOOK_DISABLE_AFTER_MS. A disabled subscription is also not active (so the
-- fan-out and the claim, which read `active`, leave it alone); making it active again clears all
-- three columns.
ALTER TABLE webhook_subscriptions
  ADD COLUMN failing_since timestamptz,
  ADD COLUMN disabled_at timestamptz,
  ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('ENDPOINT_FAILING')),
  ADD CONSTRAINT webhook_subscriptions_disabled_marks CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL)),
  ADD CONSTRAINT webhook_subscriptions_disabled_inactive CHECK (disabled_at IS NULL OR NOT active);

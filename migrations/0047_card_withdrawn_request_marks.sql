-- A cooperative request's mark (card_swipes.coop_pending) may stay on a lifecycle that is no longer
-- PENDING once the request is withdrawn: a reversal, a completion, an advice or the hold's expiry
-- closed the lifecycle before the client's answer was applied. The withdrawn mark reserves nothing
-- and is cleared with that answer; meanwhile a repeat of the request (0101, 0201) finds it and waits
-- for the answer instead of being decided as a new request (docs/cards.md, "Cooperative
-- authorization"). Until now a mark was allowed on PENDING lifecycles only.
-- The rule was the third unnamed CHECK of card_swipes (migration 0028: card_swipes_check2).
ALTER TABLE card_swipes
  DROP CONSTRAINT card_swipes_check2,
  ADD CONSTRAINT card_swipes_coop_pending_check
    CHECK (coop_pending IS NULL OR (jsonb_typeof(coop_pending) = 'object' AND (status = 'PENDING' OR coop_pending->>'withdrawn' = 'true')));

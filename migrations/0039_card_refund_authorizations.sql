-- A refund authorization (0100, processing code 20: the merchant announces money back to the card
-- before it clears) moves nothing: the lifecycle keeps what it announced, until the refund clears
-- (0220 or 0200, processing code 20), a reversal cancels it or it expires. 0 for every lifecycle
-- without one (and for every lifecycle written before this migration).

ALTER TABLE card_swipes ADD COLUMN refund_authorized_minor bigint NOT NULL DEFAULT 0
  CONSTRAINT card_swipes_refund_authorized_minor CHECK (refund_authorized_minor >= 0);

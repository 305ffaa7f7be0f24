-- What a reversal (a REVERSAL_ADVICE record) took back: the id of the posting it credited back
-- (a 0200 purchase or a 0220 completion or force post of its lifecycle). What is left of a posting
-- to reverse is its amount less the reversals that name it here. Until now it was worked out at
-- each reversal from the reversals' DE90, which cannot tell a reversal that released a hold from
-- one that credited a posting when both name the lifecycle's first message, nor reach a posting
-- named under two messages (a declined 0200 and the stand-in 0220 that posted it): postings were
-- credited twice or too little (found by audits, 2026-12-02). NULL for every other record, and for
-- reversals written before this migration (they are not counted against a posting).
ALTER TABLE card_transactions
  ADD COLUMN reverses_id uuid,
  ADD CONSTRAINT card_transactions_reverses_only_reversals CHECK (reverses_id IS NULL OR type = 'REVERSAL_ADVICE');

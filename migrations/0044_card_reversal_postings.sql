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

-- The reversals written before: each one that credited money (operation CREDIT, an amount) is
-- given the posting its DE90 names on its lifecycle (a completed 0200 or 0220, by MTI, STAN, DE7
-- and acquirer), or, without DE90, the completed 0200 purchase that opened its lifecycle. The old
-- rules also released holds under such names on a lifecycle an advice had opened again: such a
-- release is counted against the posting too, which can then be reversed for less, never twice.
UPDATE card_transactions AS r
SET reverses_id = p.id
FROM card_transactions AS p
WHERE r.type = 'REVERSAL_ADVICE' AND r.operation = 'CREDIT' AND r.amount_minor > 0 AND r.repeat_of IS NULL AND r.reverses_id IS NULL
  AND r.request_fields ? '90'
  AND p.client_id = r.client_id AND p.card_id = r.card_id AND p.swipe_id = r.swipe_id AND p.repeat_of IS NULL
  AND p.status = 'COMPLETED' AND p.type IN ('PURCHASE', 'PRE_AUTH_COMPLETION')
  AND left(r.request_fields ->> '90', 3) = left(p.mti, 3)
  AND substr(r.request_fields ->> '90', 5, 6) = p.stan
  AND substr(r.request_fields ->> '90', 11, 10) = p.transmission_date_time
  AND substr(r.request_fields ->> '90', 21, 11) = p.acquirer_id;

UPDATE card_transactions AS r
SET reverses_id = p.id
FROM card_transactions AS p
WHERE r.type = 'REVERSAL_ADVICE' AND r.operation = 'CREDIT' AND r.amount_minor > 0 AND r.repeat_of IS NULL AND r.reverses_id IS NULL
  AND NOT (r.request_fields ? '90')
  AND p.client_id = r.client_id AND p.card_id = r.card_id AND p.swipe_id = r.swipe_id
  AND p.type = 'PURCHASE' AND p.status = 'COMPLETED'
  AND p.id = (SELECT f.id FROM card_transactions AS f WHERE f.client_id = r.client_id AND f.card_id = r.card_id AND f.swipe_id = r.swipe_id ORDER BY f.id LIMIT 1);

-- A cooperative decision request whose second transaction never comes (the process that asked the
-- client stopped in between) is now decided by a timer of its own, `card.coop-decision`, scheduled
-- by the first transaction (docs/cards.md, "Cooperative authorization"). Until now nothing decided
-- it unless the network repeated the request: its mark stayed on the lifecycle for good (withdrawn,
-- once a reversal, completion or expiry closed it) and the decision's record, which its
-- COOP_AUTH_0100/0200 event names, was never written. Marks already there get their timer: due
-- once the longest window a program allows (4 s) and the margin (30 s) have passed since their
-- lifecycle last changed, by its client's clock, as a new request's is.
-- Snapshots taken before it restore: a mark they bring back gets no timer and waits for a repeat of
-- its request, as every mark did before; nothing is held or posted twice.
INSERT INTO timers (client_id, kind, subject_id, due_at, created_at)
SELECT client_id, 'card.coop-decision', id, updated_at + interval '34 seconds', now()
FROM card_swipes
WHERE coop_pending IS NOT NULL
ON CONFLICT (client_id, kind, subject_id) DO NOTHING;

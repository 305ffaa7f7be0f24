-- Two indexes of card_transactions that no statement needs. Every read of the table names the
-- card (client_id and card_id) or the row's key, so a card's own entries in another index serve
-- each of them:
--   card_transactions_card_rrn (client_id, card_id, rrn): correlation by card + RRN + amount reads
--     card_swipes since the lifecycles have their own table; the duplicate check names the STAN
--     too and is served by card_transactions_stan_rrn.
--   card_transactions_original (client_id, stan, transmission_date_time, acquirer_id): the DE90
--     correlation names the card, so card_transactions_stan_rrn (client_id, card_id, stan, …)
--     finds the card's few records with that STAN.
-- Each cost an index entry for every record written, a record per card message. The second was also
-- a trap: it does not name the card, and on a table never analysed the planner once costed it
-- the same as card_transactions_stan_rrn for the duplicate check and read the client's records
-- by STAN alone (docs/benchmarks.md, migration 0035).
-- src/modules/cards/processor/processor-plans.test.ts checks that each read still finds its
-- rows through the card's index entries, on a young database and on an analysed one.

DROP INDEX card_transactions_card_rrn;
DROP INDEX card_transactions_original;

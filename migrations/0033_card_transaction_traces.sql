-- The trace id of the request (or the background run, say a hold's expiry) that wrote each card
-- transaction record, so a card's messages link to their trace (GET /v1/traces/{traceId}, the
-- console). NULL for the records written before this migration. Not indexed: the trace timeline
-- finds a card message through its event and its wallet records, which carry the same id.
ALTER TABLE card_transactions ADD COLUMN trace_id text CHECK (length(trace_id) BETWEEN 1 AND 128);

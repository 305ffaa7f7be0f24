-- The trace timeline (issue 24, GET /v1/traces/:traceId): everything one trace id caused, for one
-- client, read by indexed lookups on (client_id, trace_id).
--
-- events: every payload carries data.traceId (recordEvent fills it from the request context); a
-- generated column exposes it to an index without any change to the inserts. Generated columns
-- cannot be inserted: the sandbox snapshot restore writes every column but the generated ones
-- (src/modules/sandbox/state/client-tables.ts).
ALTER TABLE events ADD COLUMN trace_id text GENERATED ALWAYS AS (data ->> 'traceId') STORED;
CREATE INDEX events_trace ON events (client_id, trace_id);

-- ledger_transfers: the trace id of the request or job that made each transfer (HistoryInput.traceId).
-- NULL for the transfers written before this migration; those belong to no trace.
ALTER TABLE ledger_transfers ADD COLUMN trace_id text CHECK (length(trace_id) BETWEEN 1 AND 128);
CREATE INDEX ledger_transfers_trace ON ledger_transfers (client_id, trace_id) WHERE trace_id IS NOT NULL;

-- api_requests: the request log, one row per authenticated API request (src/modules/traces/
-- request-log.ts). Rows are buffered in memory and written in batches, so a crash can lose the
-- last ~100 ms of them: the log is diagnostic, not a record of money. created_at is the moment
-- the request started by the client's clock (the clock its RequestContext uses). Deleted after
-- EVENT_RETENTION_DAYS by a worker task.
CREATE TABLE api_requests (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  trace_id text NOT NULL CHECK (length(trace_id) BETWEEN 1 AND 128),
  method text NOT NULL CHECK (length(method) BETWEEN 1 AND 16),
  -- The URL path without its query string, cut to 2048 characters.
  path text NOT NULL CHECK (length(path) BETWEEN 1 AND 2048),
  -- The route's operationId (NULL for a route without one).
  operation_id text CHECK (length(operation_id) <= 200),
  status_code integer NOT NULL CHECK (status_code BETWEEN 100 AND 999),
  -- From the request's arrival to the end of its response (Fastify's reply.elapsedTime), in milliseconds.
  duration_ms numeric(12, 3) NOT NULL CHECK (duration_ms >= 0),
  idempotency_key text CHECK (length(idempotency_key) <= 255),
  -- The `code` of the error body of a response with status 400 or more.
  error_code text CHECK (length(error_code) <= 100),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id)
);
CREATE INDEX api_requests_trace ON api_requests (client_id, trace_id);
-- Retention: the purge deletes the oldest rows first.
CREATE INDEX api_requests_created_at ON api_requests (created_at);

-- The sandbox's per-client virtual clock and the one timer mechanism of the program.
--
-- A client's clock reads the wall clock plus clock_offset_ms (always 0 in production mode, where
-- nothing moves it). POST /v1/sandbox/clock/advance adds to the offset and, while it runs the
-- timers that came due, holds clock_advance_lease_until (wall time): the timer worker leaves that
-- client alone until the lease is released or has expired (the advancing process died), so the
-- advance alone runs them, in due-time order. clock_advance_key is the Idempotency-Key of the
-- advance holding the lease, so a repeat of that same request is told it is in progress.
ALTER TABLE clients
  ADD COLUMN clock_offset_ms bigint NOT NULL DEFAULT 0 CHECK (clock_offset_ms >= 0),
  ADD COLUMN clock_advance_lease_until timestamptz,
  ADD COLUMN clock_advance_key text;

-- One row per pending timer: the subject (a bank transfer, an onboarding, ...) of `kind` comes
-- due at due_at by its client's clock. The row is deleted in the transaction that runs it, so a
-- timer runs exactly once; workers claim rows with FOR UPDATE SKIP LOCKED. A run that failed is
-- kept with its error and tried again after retry_at (wall time), with a growing delay.
CREATE TABLE timers (
  client_id uuid NOT NULL REFERENCES clients (id),
  kind text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9.-]*$' AND length(kind) <= 100),
  subject_id uuid NOT NULL,
  due_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  failed_attempts integer NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
  retry_at timestamptz,
  last_error text,
  PRIMARY KEY (client_id, kind, subject_id)
);
CREATE INDEX timers_due ON timers (due_at);
CREATE INDEX timers_client_due ON timers (client_id, due_at);

-- The two polling tasks this replaces kept their due times on their own rows; carry them over.
INSERT INTO timers (client_id, kind, subject_id, due_at, created_at)
SELECT client_id, 'bank-transfer.settle', id, settle_at, now()
FROM bank_transfers
WHERE status = 'PENDING' AND settle_at IS NOT NULL;

INSERT INTO timers (client_id, kind, subject_id, due_at, created_at)
SELECT client_id, 'kyc-link.expire', id, sdk_expires_at, now()
FROM onboardings
WHERE status = 'PENDING' AND sdk_expires_at IS NOT NULL;

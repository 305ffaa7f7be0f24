-- Webhook fault injection (sandbox only): a client can make its own deliveries arrive twice, late
-- and out of order, to prove that its consumer copes with what at-least-once delivery allows.
-- The settings of a client, one row at most (none: no faults). Rates and milliseconds, not money,
-- so plain numbers. Production never reads this table.
CREATE TABLE webhook_faults (
  client_id uuid NOT NULL REFERENCES clients (id),
  -- The probability that a delivery that succeeded is sent once more (same body and webhook-id).
  duplicate_rate double precision NOT NULL CHECK (duplicate_rate >= 0 AND duplicate_rate <= 1),
  -- Each first attempt is held back by a random delay in [0, reorder_window_ms) on top of extra_delay_ms.
  reorder_window_ms integer NOT NULL CHECK (reorder_window_ms BETWEEN 0 AND 600000),
  extra_delay_ms integer NOT NULL CHECK (extra_delay_ms BETWEEN 0 AND 600000),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (client_id)
);

-- The delay a delivery's first attempt was held back by (extra delay plus its random share of the
-- reorder window), in milliseconds; NULL while none was applied. Set once, by the worker that
-- first claims the delivery: it moves next_attempt_at forward by the delay and gives the claim
-- back instead of sending, so a held delivery occupies no worker and no concurrency slot.
ALTER TABLE webhook_deliveries ADD COLUMN injected_delay_ms integer CHECK (injected_delay_ms >= 0);

-- Marks an attempt that fault injection added: 'DUPLICATE' is the second sending of a delivery
-- that had succeeded. NULL for every ordinary attempt.
ALTER TABLE webhook_delivery_attempts ADD COLUMN injected_fault text CHECK (injected_fault IN ('DUPLICATE'));

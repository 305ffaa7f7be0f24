-- The key that encrypts this database's sensitive fields (OPENBAAS_ENCRYPTION_KEY, or the embedded
-- database's key file), by its id (the first 8 hex digits of its SHA-256, as every encrypted field
-- carries it): a process started with another key is refused at start, before it writes anything
-- under it (found by an audit, 2026-12-05: such a process wrote secrets the others could not open).
-- One row, written by the first process that starts (or taken from the fields already encrypted).
CREATE TABLE encryption_key_check (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  key_id text NOT NULL CHECK (key_id ~ '^[0-9a-f]{8}$'),
  recorded_at timestamptz NOT NULL DEFAULT now()
);

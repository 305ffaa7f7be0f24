-- The database schema a sandbox snapshot was taken with: the last migration applied at the time.
-- A restore puts back only the columns the snapshot holds (a column added since takes its
-- default) and, when the snapshot's schema is not the current one and its rows do not fit the
-- tables any more, answers 422 SANDBOX_SNAPSHOT_INCOMPATIBLE instead of failing.
-- NULL for the snapshots taken before this migration (schema 0031 or older).
ALTER TABLE sandbox_snapshots ADD COLUMN schema_version text CHECK (schema_version ~ '^[0-9]{4}$');

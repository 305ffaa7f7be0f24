-- Constraint checks that ran on every internal transfer and did not protect money (measured with
-- `npm run bench -- transfers`; see docs/benchmarks.md).
--
-- 1. The events outbox and the idempotency records are append-only logs written only under an
--    authenticated client, and clients are never deleted. Their foreign keys to clients cost one
--    lookup query per row (three per transfer) and are dropped. The ledger's own foreign keys
--    (entries to transfers and accounts, history records to transfers, accounts to wallets) stay.
ALTER TABLE events DROP CONSTRAINT events_client_id_fkey;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_client_id_fkey;

-- 2. A CHECK constraint is evaluated on every UPDATE of the row, even when its column does not
--    change, so the asset's pattern ran twice per transfer on balance updates. A domain's check runs
--    only when a value is stored into the column: the same rule, checked when an account is opened.
CREATE DOMAIN asset_code AS text CHECK (VALUE ~ '^[A-Z][A-Z0-9_]{1,15}$');
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_asset_check;
ALTER TABLE ledger_accounts ALTER COLUMN asset TYPE asset_code;

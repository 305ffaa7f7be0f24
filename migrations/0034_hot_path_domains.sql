-- The one-column CHECK constraints of the tables a trade and every ledger movement write become
-- domains, with the same rules.
--
-- Why: PostgreSQL reads a table's CHECK constraints back from their stored text and plans them
-- again in every statement that inserts into or updates the table (ExecConstraints, per statement
-- and table, before the first row), and checks all of them on an UPDATE whatever it changes. A
-- domain's check is read and planned once per connection (the type cache) and runs only when a
-- value is stored into the column. `perf` on the database during `npm run bench -- trades` put
-- ExecConstraints at 16 % of its CPU, two thirds of it reading and planning the constraints again
-- (docs/benchmarks.md, trades, sixth session). Migration 0009 did the same for the asset code.
--
-- The rules that compare columns stay table constraints; so do the other tables' constraints
-- (webhook_deliveries.event_type too: the delivery claim, openbaas_claim_webhook_deliveries,
-- returns it as text, and PL/pgSQL refuses a domain in its place).

-- Codes: an upper-case letter, then upper-case letters, digits or underscores (migration 0011's
-- form, without a regular expression); the history's codes at most 64 characters.
CREATE DOMAIN wallet_record_code AS text
  CHECK (length(VALUE) <= 64 AND ascii(VALUE) BETWEEN 65 AND 90 AND ltrim(VALUE, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_') = '');
CREATE DOMAIN event_type_code AS text
  CHECK (ascii(VALUE) BETWEEN 65 AND 90 AND ltrim(VALUE, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_') = '');

CREATE DOMAIN positive_amount AS numeric(40, 0) CHECK (VALUE > 0);
CREATE DOMAIN non_negative_amount AS numeric(40, 0) CHECK (VALUE >= 0);
CREATE DOMAIN note_text AS text CHECK (length(VALUE) <= 1000);
CREATE DOMAIN trace_id_text AS text CHECK (length(VALUE) BETWEEN 1 AND 128);

CREATE DOMAIN ledger_balance AS text CHECK (VALUE IN ('AVAILABLE', 'RESERVED', 'PENDING'));
CREATE DOMAIN record_operation AS text CHECK (VALUE IN ('CREDIT', 'DEBIT'));
CREATE DOMAIN record_status AS text CHECK (VALUE IN ('PENDING', 'COMPLETED', 'FAILED', 'CANCELLED'));
CREATE DOMAIN ledger_transfer_kind AS text CHECK (VALUE IN (
  'TRANSFER', 'HOLD_PLACE', 'HOLD_INCREMENT', 'HOLD_CAPTURE', 'HOLD_RELEASE', 'HOLD_EXPIRE',
  'PENDING_CREDIT', 'PENDING_CLEAR', 'PENDING_FAIL'
));
CREATE DOMAIN system_account_shard AS smallint CHECK (VALUE BETWEEN 0 AND 255);

CREATE DOMAIN trade_pair_symbol AS text CHECK (length(VALUE) BETWEEN 3 AND 40);
CREATE DOMAIN trade_direction AS text CHECK (VALUE IN ('direct', 'reverse'));
CREATE DOMAIN trade_side AS text CHECK (VALUE IN ('buy', 'sell'));
CREATE DOMAIN trade_price_decimals AS smallint CHECK (VALUE BETWEEN 0 AND 18);
CREATE DOMAIN trade_fee_rate AS numeric(20, 18) CHECK (VALUE >= 0 AND VALUE < 1);
CREATE DOMAIN trade_quote_ttl_seconds AS integer CHECK (VALUE BETWEEN 5 AND 900);
CREATE DOMAIN trade_quote_status AS text CHECK (VALUE IN ('OPEN', 'EXECUTED', 'FAILED'));
CREATE DOMAIN trade_failure_code AS text CHECK (length(VALUE) BETWEEN 1 AND 64);

ALTER TABLE wallet_transactions
  DROP CONSTRAINT wallet_transactions_type_check,
  DROP CONSTRAINT wallet_transactions_purpose_check,
  DROP CONSTRAINT wallet_transactions_operation_check,
  DROP CONSTRAINT wallet_transactions_balance_type_check,
  DROP CONSTRAINT wallet_transactions_status_check,
  DROP CONSTRAINT wallet_transactions_amount_check,
  DROP CONSTRAINT wallet_transactions_note_check,
  ALTER COLUMN type TYPE wallet_record_code,
  ALTER COLUMN purpose TYPE wallet_record_code,
  ALTER COLUMN operation TYPE record_operation,
  ALTER COLUMN balance_type TYPE ledger_balance,
  ALTER COLUMN status TYPE record_status,
  ALTER COLUMN amount TYPE positive_amount,
  ALTER COLUMN note TYPE note_text;

ALTER TABLE ledger_entries
  DROP CONSTRAINT ledger_entries_amount_check,
  DROP CONSTRAINT ledger_entries_debit_balance_check,
  DROP CONSTRAINT ledger_entries_credit_balance_check,
  ALTER COLUMN amount TYPE positive_amount,
  ALTER COLUMN debit_balance TYPE ledger_balance,
  ALTER COLUMN credit_balance TYPE ledger_balance;

ALTER TABLE ledger_transfers
  DROP CONSTRAINT ledger_transfers_kind_check,
  DROP CONSTRAINT ledger_transfers_description_check,
  DROP CONSTRAINT ledger_transfers_trace_id_check,
  ALTER COLUMN kind TYPE ledger_transfer_kind,
  ALTER COLUMN description TYPE note_text,
  ALTER COLUMN trace_id TYPE trace_id_text;

-- Balance updates (every movement) no longer check the shard; opening a system account does.
ALTER TABLE ledger_accounts
  DROP CONSTRAINT ledger_accounts_shard_check,
  ALTER COLUMN shard TYPE system_account_shard;

ALTER TABLE events
  DROP CONSTRAINT events_type_check,
  ALTER COLUMN type TYPE event_type_code;

ALTER TABLE trade_quotes
  DROP CONSTRAINT trade_quotes_pair_symbol_check,
  DROP CONSTRAINT trade_quotes_direction_check,
  DROP CONSTRAINT trade_quotes_side_check,
  DROP CONSTRAINT trade_quotes_price_per_unit_units_check,
  DROP CONSTRAINT trade_quotes_price_decimals_check,
  DROP CONSTRAINT trade_quotes_fee_rate_check,
  DROP CONSTRAINT trade_quotes_from_amount_check,
  DROP CONSTRAINT trade_quotes_amount_to_spend_check,
  DROP CONSTRAINT trade_quotes_gross_to_receive_check,
  DROP CONSTRAINT trade_quotes_fee_amount_check,
  DROP CONSTRAINT trade_quotes_total_to_receive_check,
  DROP CONSTRAINT trade_quotes_ttl_seconds_check,
  DROP CONSTRAINT trade_quotes_status_check,
  DROP CONSTRAINT trade_quotes_failure_code_check,
  ALTER COLUMN pair_symbol TYPE trade_pair_symbol,
  ALTER COLUMN direction TYPE trade_direction,
  ALTER COLUMN side TYPE trade_side,
  ALTER COLUMN price_per_unit_units TYPE positive_amount,
  ALTER COLUMN price_decimals TYPE trade_price_decimals,
  ALTER COLUMN fee_rate TYPE trade_fee_rate,
  ALTER COLUMN from_amount TYPE positive_amount,
  ALTER COLUMN amount_to_spend TYPE positive_amount,
  ALTER COLUMN gross_to_receive TYPE positive_amount,
  ALTER COLUMN fee_amount TYPE non_negative_amount,
  ALTER COLUMN total_to_receive TYPE positive_amount,
  ALTER COLUMN ttl_seconds TYPE trade_quote_ttl_seconds,
  ALTER COLUMN status TYPE trade_quote_status,
  ALTER COLUMN failure_code TYPE trade_failure_code;

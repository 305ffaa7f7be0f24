-- The one-column CHECK constraints of the tables every card message writes (its record, its
-- lifecycle and the ledger hold) become domains with the same rules, as migration 0034 did for the
-- ledger's and the trades' tables, for the same reason: a table's CHECK constraints are read back
-- from their stored text and planned again in every statement that writes the table (an UPDATE
-- of a lifecycle or a hold checked all of them, whatever it changed), a domain's check once per
-- connection, and only when a value is stored into its column. Rules that compare columns stay.
--
-- So do the rules on the columns of the card records' indexes (STAN, RRN, DE7 and acquirer of
-- card_transactions, the lifecycle reference of card_swipes). Changing a column's type rebuilds
-- the indexes that hold it, and on tables never analysed, where several indexes cost the same to
-- the planner, the one it picks depends on their order: with them rebuilt, the duplicate check
-- read the client's records by STAN alone instead of the card's by STAN and RRN
-- (processor-plans.test.ts).

CREATE DOMAIN non_negative_minor AS bigint CHECK (VALUE >= 0);
CREATE DOMAIN card_kind AS text CHECK (VALUE IN ('DEBIT', 'CREDIT'));
CREATE DOMAIN card_transaction_type AS text CHECK (VALUE IN (
  'PRE_AUTHORIZATION', 'ACCOUNT_VERIFICATION', 'BALANCE_INQUIRY', 'PURCHASE', 'REFUND', 'PRE_AUTH_COMPLETION', 'REVERSAL_ADVICE'
));
CREATE DOMAIN card_decision_source AS text CHECK (VALUE IN ('SYSTEM', 'CLIENT', 'STAND_IN', 'NETWORK'));
CREATE DOMAIN card_asset_text AS text CHECK (length(VALUE) BETWEEN 1 AND 16);
CREATE DOMAIN jsonb_object_value AS jsonb CHECK (jsonb_typeof(VALUE) = 'object');
CREATE DOMAIN jsonb_array_value AS jsonb CHECK (jsonb_typeof(VALUE) = 'array');
CREATE DOMAIN ledger_hold_status AS text CHECK (VALUE IN ('OPEN', 'CAPTURED', 'RELEASED', 'EXPIRED'));

-- ISO 8583 fields as the records keep them.
CREATE DOMAIN iso_mti AS text CHECK (VALUE ~ '^0[0-9]{3}$');
CREATE DOMAIN iso_six_digits AS text CHECK (VALUE ~ '^[0-9]{6}$');
CREATE DOMAIN iso_transmission_date_time AS text CHECK (VALUE ~ '^[0-9]{10}$');
CREATE DOMAIN iso_acquirer_id AS text CHECK (VALUE ~ '^[0-9]{0,11}$');
CREATE DOMAIN iso_rrn AS text CHECK (length(VALUE) = 12);
CREATE DOMAIN iso_mcc AS text CHECK (VALUE ~ '^[0-9]{4}$');
CREATE DOMAIN iso_auth_code AS text CHECK (length(VALUE) = 6);
CREATE DOMAIN iso_response_code AS text CHECK (length(VALUE) = 2);
CREATE DOMAIN iso_currency_code AS text CHECK (length(VALUE) = 3);
CREATE DOMAIN network_data_ref_text AS text CHECK (length(VALUE) = 16);

ALTER TABLE card_swipes
  DROP CONSTRAINT card_swipes_card_type_check,
  DROP CONSTRAINT card_swipes_status_check,
  DROP CONSTRAINT card_swipes_asset_check,
  DROP CONSTRAINT card_swipes_first_mti_check,
  DROP CONSTRAINT card_swipes_stan_check,
  DROP CONSTRAINT card_swipes_transmission_date_time_check,
  DROP CONSTRAINT card_swipes_acquirer_id_check,
  DROP CONSTRAINT card_swipes_rrn_check,
  DROP CONSTRAINT card_swipes_held_minor_check,
  DROP CONSTRAINT card_swipes_merchant_check,
  DROP CONSTRAINT card_swipes_mcc_check,
  ALTER COLUMN card_type TYPE card_kind,
  ALTER COLUMN status TYPE record_status,
  ALTER COLUMN asset TYPE card_asset_text,
  ALTER COLUMN first_mti TYPE iso_mti,
  ALTER COLUMN stan TYPE iso_six_digits,
  ALTER COLUMN transmission_date_time TYPE iso_transmission_date_time,
  ALTER COLUMN acquirer_id TYPE iso_acquirer_id,
  ALTER COLUMN rrn TYPE iso_rrn,
  ALTER COLUMN held_minor TYPE non_negative_minor,
  ALTER COLUMN merchant TYPE jsonb_object_value,
  ALTER COLUMN mcc TYPE iso_mcc;

ALTER TABLE card_transactions
  DROP CONSTRAINT card_transactions_card_type_check,
  DROP CONSTRAINT card_transactions_type_check,
  DROP CONSTRAINT card_transactions_operation_check,
  DROP CONSTRAINT card_transactions_status_check,
  DROP CONSTRAINT card_transactions_mti_check,
  DROP CONSTRAINT card_transactions_processing_code_check,
  DROP CONSTRAINT card_transactions_asset_check,
  DROP CONSTRAINT card_transactions_amount_minor_check,
  DROP CONSTRAINT card_transactions_requested_minor_check,
  DROP CONSTRAINT card_transactions_held_minor_check,
  DROP CONSTRAINT card_transactions_transaction_minor_check,
  DROP CONSTRAINT card_transactions_transaction_currency_check,
  DROP CONSTRAINT card_transactions_fees_check,
  DROP CONSTRAINT card_transactions_auth_code_check,
  DROP CONSTRAINT card_transactions_response_code_check,
  DROP CONSTRAINT card_transactions_decision_source_check,
  DROP CONSTRAINT card_transactions_network_data_ref_check,
  DROP CONSTRAINT card_transactions_merchant_check,
  DROP CONSTRAINT card_transactions_request_fields_check,
  DROP CONSTRAINT card_transactions_response_mti_check,
  DROP CONSTRAINT card_transactions_response_fields_check,
  DROP CONSTRAINT card_transactions_coop_decision_check,
  DROP CONSTRAINT card_transactions_trace_id_check,
  ALTER COLUMN card_type TYPE card_kind,
  ALTER COLUMN type TYPE card_transaction_type,
  ALTER COLUMN operation TYPE record_operation,
  ALTER COLUMN status TYPE record_status,
  ALTER COLUMN mti TYPE iso_mti,
  ALTER COLUMN processing_code TYPE iso_six_digits,
  ALTER COLUMN asset TYPE card_asset_text,
  ALTER COLUMN amount_minor TYPE non_negative_minor,
  ALTER COLUMN requested_minor TYPE non_negative_minor,
  ALTER COLUMN held_minor TYPE non_negative_minor,
  ALTER COLUMN transaction_minor TYPE non_negative_minor,
  ALTER COLUMN transaction_currency TYPE iso_currency_code,
  ALTER COLUMN fees TYPE jsonb_array_value,
  ALTER COLUMN auth_code TYPE iso_auth_code,
  ALTER COLUMN response_code TYPE iso_response_code,
  ALTER COLUMN decision_source TYPE card_decision_source,
  ALTER COLUMN network_data_ref TYPE network_data_ref_text,
  ALTER COLUMN merchant TYPE jsonb_object_value,
  ALTER COLUMN request_fields TYPE jsonb_object_value,
  ALTER COLUMN response_mti TYPE iso_mti,
  ALTER COLUMN response_fields TYPE jsonb_object_value,
  ALTER COLUMN coop_decision TYPE jsonb_object_value,
  ALTER COLUMN trace_id TYPE trace_id_text;

ALTER TABLE ledger_holds
  DROP CONSTRAINT ledger_holds_status_check,
  DROP CONSTRAINT ledger_holds_amount_placed_check,
  DROP CONSTRAINT ledger_holds_amount_remaining_check,
  DROP CONSTRAINT ledger_holds_amount_captured_check,
  DROP CONSTRAINT ledger_holds_amount_over_captured_check,
  DROP CONSTRAINT ledger_holds_amount_released_check,
  DROP CONSTRAINT ledger_holds_shortfall_check,
  ALTER COLUMN status TYPE ledger_hold_status,
  ALTER COLUMN amount_placed TYPE non_negative_amount,
  ALTER COLUMN amount_remaining TYPE non_negative_amount,
  ALTER COLUMN amount_captured TYPE non_negative_amount,
  ALTER COLUMN amount_over_captured TYPE non_negative_amount,
  ALTER COLUMN amount_released TYPE non_negative_amount,
  ALTER COLUMN shortfall TYPE non_negative_amount;

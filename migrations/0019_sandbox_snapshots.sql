-- Sandbox reset and snapshots (POST /v1/sandbox/reset, /v1/sandbox/snapshots; docs/sandbox-state.md).
--
-- (a) The ledger refuses, by statement triggers, to delete or change a ledger transfer and to
-- delete a ledger account (migration 0014). A sandbox reset or restore must delete a client's whole
-- ledger, so the refusal now lets a statement through when the transaction has said so with
-- set_config('openbaas.sandbox_rewrite', 'on', true). Only the reset and restore transactions of
-- the sandbox state module set it (transaction-local: it is gone at commit or rollback); nothing
-- else does, and nothing else changes. session_replication_role is not used: it needs a superuser
-- and would switch off the foreign keys as well.
CREATE OR REPLACE FUNCTION openbaas_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('openbaas.sandbox_rewrite', true) = 'on' THEN
    RETURN NULL;
  END IF;
  RAISE EXCEPTION '% on % is not allowed: %', TG_OP, TG_TABLE_NAME, TG_ARGV[0]
    USING ERRCODE = 'restrict_violation', TABLE = TG_TABLE_NAME;
END
$$;

-- (b) A snapshot of one client's whole state: a header with the client's clock offset and the row
-- count of each table, and the rows themselves as JSON (to_jsonb of each row, in chunks of about
-- 16 MB), restored with jsonb_populate_recordset, so no value passes through the program.
CREATE TABLE sandbox_snapshots (
  client_id uuid NOT NULL REFERENCES clients (id),
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  clock_offset_ms bigint NOT NULL CHECK (clock_offset_ms >= 0),
  -- { "<table>": <row count>, ... } for every table saved, zero counts included.
  row_counts jsonb NOT NULL CHECK (jsonb_typeof(row_counts) = 'object'),
  size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (client_id, id)
);

CREATE TABLE sandbox_snapshot_tables (
  client_id uuid NOT NULL,
  snapshot_id uuid NOT NULL,
  table_name text NOT NULL,
  chunk integer NOT NULL CHECK (chunk >= 0),
  rows jsonb NOT NULL CHECK (jsonb_typeof(rows) = 'array'),
  PRIMARY KEY (client_id, snapshot_id, table_name, chunk),
  FOREIGN KEY (client_id, snapshot_id) REFERENCES sandbox_snapshots (client_id, id) ON DELETE CASCADE
);

-- (c) A reset or restore deletes all of a client's rows, parents after children; each deleted
-- parent row has its foreign keys checked by one lookup in every referencing table. These three
-- references had no index to look up by (the wallet index of ledger_accounts is partial), so each
-- check read every account, onboarding or document of the client: a restore of 1,000 customers
-- spent most of its time there. None of these columns changes after insert, so balance updates
-- stay HOT and the write paths only pay at account, onboarding and document creation.
CREATE INDEX ledger_accounts_by_wallet ON ledger_accounts (client_id, wallet_id);
CREATE INDEX onboardings_previous ON onboardings (client_id, previous_onboarding_id) WHERE previous_onboarding_id IS NOT NULL;
CREATE INDEX compliance_documents_onboarding ON compliance_documents (client_id, onboarding_id) WHERE onboarding_id IS NOT NULL;

-- The ledger's references (an entry to its transfer and to its two accounts, of the entry's asset;
-- a wallet history record to its ledger transfer) are checked once per statement instead of once
-- per row.
--
-- A foreign key checks each inserted row with its own query, which also locks the referenced row:
-- five such queries per internal transfer, about a sixth of PostgreSQL's time on the transfers
-- benchmark (measured with perf; see docs/benchmarks.md). The statement triggers below check every
-- row a statement inserted in one query over its transition table, and raise the same error a
-- foreign key raises (SQLSTATE 23503), so a bad reference still cannot commit.
--
-- A foreign key also keeps the referenced row from being deleted or re-keyed later. Here that is
-- done by refusing, for every statement, what would break a reference: deleting a ledger transfer
-- or changing it at all (transfers are immutable), and deleting a ledger account or changing its
-- client, id or asset. Nothing in OpenBaaS does either; an operator who wants to can only go
-- around the triggers on purpose, and `openbaas ledger verify` checks the references too.

ALTER TABLE ledger_entries
  DROP CONSTRAINT ledger_entries_client_id_transfer_id_fkey,
  DROP CONSTRAINT ledger_entries_client_id_debit_account_id_asset_fkey,
  DROP CONSTRAINT ledger_entries_client_id_credit_account_id_asset_fkey;
ALTER TABLE wallet_transactions
  DROP CONSTRAINT wallet_transactions_client_id_ledger_transfer_id_fkey;

-- Each reference is probed through a LATERAL subquery with LIMIT 1, which the planner can only run
-- as one index lookup per inserted row: a statement inserts a few dozen rows, and a hash or merge
-- join would read the whole referenced table instead.
CREATE FUNCTION openbaas_check_entry_references() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT n.client_id, n.transfer_id, n.entry_index INTO bad
  FROM inserted_entries n
  LEFT JOIN LATERAL (
    SELECT true AS found FROM ledger_transfers t WHERE t.client_id = n.client_id AND t.id = n.transfer_id LIMIT 1
  ) t ON true
  LEFT JOIN LATERAL (
    SELECT true AS found FROM ledger_accounts a
    WHERE a.client_id = n.client_id AND a.id = n.debit_account_id AND a.asset = n.asset LIMIT 1
  ) d ON true
  LEFT JOIN LATERAL (
    SELECT true AS found FROM ledger_accounts a
    WHERE a.client_id = n.client_id AND a.id = n.credit_account_id AND a.asset = n.asset LIMIT 1
  ) c ON true
  WHERE t.found IS NULL OR d.found IS NULL OR c.found IS NULL
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger entry (%, %, %) names a ledger transfer, or an account of its asset, that does not exist',
      bad.client_id, bad.transfer_id, bad.entry_index
      USING ERRCODE = 'foreign_key_violation', TABLE = 'ledger_entries', CONSTRAINT = 'ledger_entries_references';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER ledger_entries_references AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS inserted_entries
  FOR EACH STATEMENT EXECUTE FUNCTION openbaas_check_entry_references();

CREATE FUNCTION openbaas_check_wallet_transaction_references() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT n.client_id, n.id INTO bad
  FROM inserted_records n
  LEFT JOIN LATERAL (
    SELECT true AS found FROM ledger_transfers t WHERE t.client_id = n.client_id AND t.id = n.ledger_transfer_id LIMIT 1
  ) t ON true
  WHERE t.found IS NULL
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'wallet transaction (%, %) names a ledger transfer that does not exist', bad.client_id, bad.id
      USING ERRCODE = 'foreign_key_violation', TABLE = 'wallet_transactions', CONSTRAINT = 'wallet_transactions_references';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER wallet_transactions_references AFTER INSERT ON wallet_transactions
  REFERENCING NEW TABLE AS inserted_records
  FOR EACH STATEMENT EXECUTE FUNCTION openbaas_check_wallet_transaction_references();

-- What a foreign key's referenced side refused, refused for every statement.
CREATE FUNCTION openbaas_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% on % is not allowed: %', TG_OP, TG_TABLE_NAME, TG_ARGV[0]
    USING ERRCODE = 'restrict_violation', TABLE = TG_TABLE_NAME;
END
$$;

CREATE TRIGGER ledger_transfers_immutable BEFORE UPDATE OR DELETE ON ledger_transfers
  FOR EACH STATEMENT EXECUTE FUNCTION openbaas_refuse_change('ledger transfers are immutable and referenced by entries and wallet transactions');
CREATE TRIGGER ledger_accounts_not_deleted BEFORE DELETE ON ledger_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION openbaas_refuse_change('ledger accounts are referenced by entries');
CREATE TRIGGER ledger_accounts_keys_fixed BEFORE UPDATE OF client_id, id, asset ON ledger_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION openbaas_refuse_change('the client, id and asset of a ledger account are referenced by entries');

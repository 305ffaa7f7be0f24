-- A wallet account belongs to an existing wallet of the same client. (Migration 0003 could not
-- say so: the wallets table did not exist on its branch yet.) System accounts have no wallet, and
-- a foreign key ignores rows whose wallet_id is NULL.
ALTER TABLE ledger_accounts
  ADD CONSTRAINT ledger_accounts_wallet_fkey FOREIGN KEY (client_id, wallet_id) REFERENCES wallets (client_id, id);

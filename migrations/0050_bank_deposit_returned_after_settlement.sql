-- A settled ACH deposit can still be taken back (a late return, or a credit the sender's customer
-- says was not authorized): its DEPOSIT_SUCCESS is followed by a DEPOSIT_FAILURE, as a withdrawal
-- returned after settlement already was (0046). Each end is written at most once; the code lets a
-- deposit fail only while PENDING or once COMPLETED (ACH), never settle after failing.
DROP INDEX bank_transactions_one_deposit_end;
CREATE UNIQUE INDEX bank_transactions_deposit_ends ON bank_transactions (client_id, bank_transfer_id, type)
  WHERE type IN ('DEPOSIT_SUCCESS', 'DEPOSIT_FAILURE');

-- A withdrawal that settled can still come back (a return after settlement: an ACH return arrives
-- days later, the beneficiary's account closed or unknown): its WITHDRAWAL_SUCCESS is followed by
-- a WITHDRAWAL_FAILURE, and the amount is credited back. A deposit still ends once; a withdrawal
-- settles at most once and fails at most once (the code lets it fail only while PENDING or once
-- COMPLETED, never settle after failing).
DROP INDEX bank_transactions_one_end;
CREATE UNIQUE INDEX bank_transactions_one_deposit_end ON bank_transactions (client_id, bank_transfer_id)
  WHERE type IN ('DEPOSIT_SUCCESS', 'DEPOSIT_FAILURE');
CREATE UNIQUE INDEX bank_transactions_withdrawal_ends ON bank_transactions (client_id, bank_transfer_id, type)
  WHERE type IN ('WITHDRAWAL_SUCCESS', 'WITHDRAWAL_FAILURE');

-- A consistency check that runs inside a statement: `openbaas_check(condition, message)` answers
-- true, or raises an internal error with the message when the condition does not hold.
--
-- The batched ledger write sends COMMIT right behind its last statement without waiting for that
-- statement's answer (src/platform/db/pipelined-transaction.ts). A check made in code on the
-- answer would come after the commit, so the checks that must be able to stop the commit (every
-- locked account was updated exactly once, and so on) are made by the statement itself: an error
-- there aborts the transaction and PostgreSQL turns the COMMIT that follows into a rollback.
CREATE FUNCTION openbaas_check(condition boolean, message text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF condition IS NOT TRUE THEN
    RAISE EXCEPTION 'consistency check failed: %', message USING ERRCODE = 'XX000';
  END IF;
  RETURN true;
END
$$;

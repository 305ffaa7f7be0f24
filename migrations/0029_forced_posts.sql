-- A card posting that must not be refused and has no hold (a force post, a completion after its
-- hold expired) is recorded as a hold placed at zero and captured at once with force (ledger
-- operation forcePost): what AVAILABLE could not cover is its shortfall, as for every forced
-- capture, which is what lets `ledger verify` accept the overdraft. A hold placed at zero is only
-- ever that: captured, entirely over the (empty) reservation.
ALTER TABLE ledger_holds DROP CONSTRAINT ledger_holds_amount_placed_check;
ALTER TABLE ledger_holds ADD CONSTRAINT ledger_holds_amount_placed_check CHECK (amount_placed >= 0);
ALTER TABLE ledger_holds ADD CONSTRAINT ledger_holds_zero_placed_is_forced_post
  CHECK (amount_placed > 0 OR (status = 'CAPTURED' AND amount_over_captured = amount_captured AND amount_captured > 0));

-- What a line's credits beyond its principal (a credit card refund, or a purchase reversed, when
-- the line owed less) paid into its collateral wallet in USD, less what reversals of refunds took
-- back since. A refund reversed takes back from the collateral wallet first, up to this figure and
-- to the wallet's AVAILABLE USD, and adds only the rest to the principal. Before this migration the
-- whole reversal went on the principal and the wallet kept the excess, so a purchase and its
-- refund both reversed left the line owing what the wallet had been paid (found by an audit).
ALTER TABLE credit_lines ADD COLUMN excess_paid_out numeric(30, 0) NOT NULL DEFAULT 0 CHECK (excess_paid_out >= 0);

-- Lines that paid such excess before: what their cards' refunds and reversals credited to the
-- collateral wallet (the CREDIT_CARD_REFUND credits of the wallet's history under those cards'
-- records). No reversal took any of it back from the wallet before this migration.
UPDATE credit_lines AS l
SET excess_paid_out = p.paid
FROM (
  SELECT c.client_id, c.credit_line_id, sum(w.amount) AS paid
  FROM wallet_transactions w
  JOIN card_transactions t ON t.client_id = w.client_id AND t.id = w.card_transaction_id
  JOIN cards c ON c.client_id = t.client_id AND c.id = t.card_id
  WHERE w.card_transaction_id IS NOT NULL AND w.type = 'CREDIT_CARD_REFUND' AND w.operation = 'CREDIT' AND w.status = 'COMPLETED'
    AND c.card_type = 'CREDIT' AND c.credit_line_id IS NOT NULL AND w.wallet_id = c.wallet_id
  GROUP BY c.client_id, c.credit_line_id
) AS p
WHERE l.client_id = p.client_id AND l.id = p.credit_line_id;

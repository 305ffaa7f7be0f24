-- A credit line whose collateral no longer covers its limit at the opening LTV because the
-- customer released it (or because none is left) may not lend again until collateral locked (or a
-- price rise) covers the limit once more, as when it was opened: without this, a line emptied to
-- one satoshi stayed (or became again) ACTIVE with its whole limit available.

ALTER TABLE credit_lines ADD COLUMN needs_cover boolean NOT NULL DEFAULT false;

import type { Scenario } from '../lib.js';
import { connections, measureAgainstPgbench, walletCount } from './transfers.js';

/** pgbench's side: every transaction updates the same row and inserts one row. */
export const hotAnchorScript = `\\set a random(2, 1000000)
BEGIN;
UPDATE anchor_accounts SET balance = balance + 1 WHERE id = 1;
INSERT INTO anchor_history (from_id, to_id, amount) VALUES (:a, 1, 1);
END;
`;

export const hotAccount: Scenario = {
  name: 'hot-account',
  description: `POST /internal-transfer where every transfer credits the same wallet, sources random among ${walletCount}, ${connections} connections, PostgreSQL; anchor: pgbench updating one hot row + 1 INSERT, ${connections} clients; measured in turn`,
  run: () => measureAgainstPgbench('hot-account', hotAnchorScript, { hot: true }),
};

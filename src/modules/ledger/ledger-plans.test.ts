import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { planOf, scansOf } from '../../../test/plans.js';
import { lockAccountsStatement, lockHoldsStatement, lockPendingCreditsStatement } from './ledger.store.js';

// The ledger's locking reads are prepared, and the batched writes run them with generic plans,
// which PostgreSQL keeps (and makes again only as the statement's runs grow eightfold). A plan
// made on a new database, its tables empty, must still look each key up through an index.

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('plans of the ledger locking reads', () => {
  const keys = Array.from({ length: 3 }, () => ({ clientId: crypto.randomUUID(), id: crypto.randomUUID() }));
  const statements = [
    { table: 'ledger_accounts', statement: lockAccountsStatement(keys) },
    { table: 'ledger_holds', statement: lockHoldsStatement(keys) },
    { table: 'ledger_pending_credits', statement: lockPendingCreditsStatement(keys) },
  ];

  for (const { table, statement } of statements) {
    it(`${table}: one index lookup per key, on empty tables and on the tables as they are`, async () => {
      const lookups = async (emptyTables: string[]) =>
        scansOf(await planOf(t.deps.db, statement, 'generic', { emptyTables }))
          .filter((scan) => scan['Relation Name'] === table)
          .map((scan) => ({ type: scan['Node Type'], byClient: /client_id = /.test(scan['Index Cond'] ?? '') }));
      // While a table is small, every index on client_id looks as cheap as the primary key, and
      // the planner may take any of them; what matters is that the table is not read whole for
      // the keys (it was, as a hash join of the keys to it, in the form these replaced).
      for (const emptyTables of [[table], []]) expect(await lookups(emptyTables)).toEqual([{ type: 'Index Scan', byClient: true }]);
    });
  }
});

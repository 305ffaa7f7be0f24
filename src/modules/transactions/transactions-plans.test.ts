import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { fundWallet, newWallet } from '../../../test/ledger/fixtures.js';
import { planOf, type PlanNode } from '../../../test/plans.js';
import { walletTransactionsListQuery, type WalletTransactionFilters } from './transactions.store.js';

// The asset and purpose filters of GET /v1/transactions have no index of their own (one would cost
// an entry for every record written): a list is found through the wallet's index entries
// (client_id, wallet_id, id), which also give its order, or a linking filter's, and the filters
// are checked on those rows. The plans of a page and of its count must read the list that way
// before the table is analysed and after, never the client's records by the primary key (ORDER BY
// id LIMIT n may tempt the planner to) nor the whole table. The route's statements are not
// prepared, so each run is planned for its values and the table's size as it is then (a plan made
// on an empty table, which may take the primary key, is not kept for a grown one).

let t: TestContext;
let walletId: string;
let parentTransactionId: string;

beforeAll(async () => {
  t = await createTestApp();
  walletId = await newWallet(t);
  const payee = await newWallet(t);
  await fundWallet(t, t.clientA.id, walletId, 100_000n);
  await fundWallet(t, t.clientA.id, walletId, 100_000_000n, 'BTC');
  for (const asset of ['USD', 'BTC']) {
    t.clock.advance(1000);
    const response = await t.request({ method: 'POST', url: '/internal-transfer', body: { sourceWalletId: walletId, destinationWalletId: payee, amount: asset === 'USD' ? '1.00' : '0.00100000', asset } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    parentTransactionId = response.body.data.parentTransactionId;
  }
  // 20,000 more records of the client, each a copy of one of the wallet's on a wallet and under a
  // parent of its own: the wallet is a small part of the client's history.
  await sql`INSERT INTO wallet_transactions SELECT (c).* FROM (
      SELECT jsonb_populate_record(w, jsonb_build_object('id', gen_random_uuid(), 'wallet_id', gen_random_uuid(), 'parent_transaction_id', gen_random_uuid())) AS c
      FROM wallet_transactions w, generate_series(1, 5000) n WHERE w.client_id = ${t.clientA.id} AND w.wallet_id = ${walletId}) copies`.execute(t.deps.db);
});
afterAll(async () => {
  await t.close();
});

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** The plans of a page (newest first, after a cursor or not) and of its count, as paginate runs them. */
async function plansOf(filters: WalletTransactionFilters): Promise<PlanNode[]> {
  const select = walletTransactionsListQuery(t.deps.db, t.clientA.id, filters);
  const statements = [
    select.orderBy('id', 'desc').limit(21),
    select.where(sql<boolean>`id < ${'ffffffff-ffff-7fff-bfff-ffffffffffff'}::uuid`).orderBy('id', 'desc').limit(21).offset(20),
    select.clearSelect().select(sql<string>`count(*)`.as('total')),
  ];
  const plans: PlanNode[] = [];
  for (const statement of statements) plans.push(await planOf(t.deps.db, statement, 'custom'));
  return plans;
}

/** Every read of wallet_transactions in the plan is an index scan whose condition names `column`. */
function expectReadThrough(plans: PlanNode[], column: string, label: string) {
  for (const plan of plans) {
    const nodes = nodesOf(plan);
    const says = `${label}: ${JSON.stringify(plan)}`;
    expect(nodes.filter((node) => node['Node Type'] === 'Seq Scan'), says).toEqual([]);
    const indexScans = nodes.filter((node) => node['Index Name'] !== undefined);
    expect(indexScans.length, says).toBeGreaterThan(0);
    for (const scan of indexScans) expect(scan['Index Cond'] ?? '', says).toMatch(new RegExp(`client_id = .*\\b${column} = `));
  }
}

describe('plans of GET /v1/transactions with asset and purpose', () => {
  const cases = (): [string, WalletTransactionFilters, string][] => [
    ['walletId, asset and purpose', { walletId, asset: 'BTC', purpose: 'TRANSFER' }, 'wallet_id'],
    ['walletId and asset', { walletId, asset: 'BTC' }, 'wallet_id'],
    ['walletId and purpose', { walletId, purpose: 'TRANSFER' }, 'wallet_id'],
    ['walletId, asset, purpose, operation and status', { walletId, asset: 'USD', purpose: 'TRANSFER', operation: 'DEBIT', status: 'COMPLETED' }, 'wallet_id'],
    ['parentTransactionId, asset and purpose', { links: [{ column: 'parent_transaction_id', id: parentTransactionId }], asset: 'BTC', purpose: 'TRANSFER' }, 'parent_transaction_id'],
    ['parentTransactionId and asset', { links: [{ column: 'parent_transaction_id', id: parentTransactionId }], asset: 'BTC' }, 'parent_transaction_id'],
  ];

  it('read the wallet’s (or the parent’s) index entries, before the table is analysed and after', async () => {
    // Before: PGlite has no autovacuum; on PostgreSQL autovacuum may have analysed the table already.
    for (const [name, filters, column] of cases()) expectReadThrough(await plansOf(filters), column, `${name}, before ANALYZE`);
    await sql`ANALYZE wallet_transactions`.execute(t.deps.db);
    for (const [name, filters, column] of cases()) expectReadThrough(await plansOf(filters), column, `${name}, after ANALYZE`);
  });

  it('the filtered lists hold what the wallet’s records say', async () => {
    const rows = await walletTransactionsListQuery(t.deps.db, t.clientA.id, { walletId, asset: 'BTC', purpose: 'TRANSFER' }).orderBy('id', 'desc').execute();
    expect(rows.map((row) => [row.asset, row.purpose, row.operation, row.type])).toEqual([
      ['BTC', 'TRANSFER', 'DEBIT', 'INTERNAL_TRANSFER'],
      ['BTC', 'TRANSFER', 'CREDIT', 'DEPOSIT'],
    ]);
  });
});

import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as ledger from '../../src/modules/ledger/index.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { requireAsset } from '../../src/platform/money/assets.js';
import { createTestApp, type TestContext } from '../harness.js';
import { newWallet } from './fixtures.js';

// A transaction of many ledger operations (a sandbox request seeding 40 funded customers: a deposit
// and its clearing each) drew a shard of the bank settlement account for each operation, so it
// locked several shards in a random order; two such transactions at once on PostgreSQL deadlocked,
// were retried, and one answered 500 after its attempts (found by an audit). Every operation of a
// transaction now takes the shard its first one drew.

let t: TestContext;
const usd = requireAsset('USD', 'sandbox');
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('the system account shard of a transaction', () => {
  it('is one for all its operations: twenty deposits in one transaction touch one shard of BANK_SETTLEMENT', async () => {
    const wallets = await Promise.all(Array.from({ length: 4 }, () => newWallet(t)));
    const parents: string[] = [];
    await withTransaction(t.deps.db, async (tx) => {
      for (let operation = 0; operation < 20; operation++) {
        const parentTransactionId = crypto.randomUUID();
        parents.push(parentTransactionId);
        await ledger.postTransfer(tx, {
          clientId: t.clientA.id,
          now: t.clock.now(),
          asset: usd,
          legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { walletId: wallets[operation % wallets.length] ?? '' }, amount: 100n }],
          history: { parentTransactionId, type: 'DEPOSIT', traceId: 'test-trace' },
        });
      }
    });
    // The accounts debited by those transfers' entries: the settlement account's shards.
    const debited = await sql<{ account: string }>`
      SELECT DISTINCT e.debit_account_id AS account FROM ledger_entries e
      JOIN wallet_transactions w ON w.client_id = e.client_id AND w.ledger_transfer_id = e.transfer_id
      WHERE e.client_id = ${t.clientA.id} AND w.parent_transaction_id = ANY(${parents}::uuid[])`.execute(t.deps.db);
    expect(debited.rows).toHaveLength(1);
    // Another transaction draws again (over 8 transactions, 16 shards: at least two differ but for a 1 in 16^7 chance).
    const drawn = new Set<string>();
    for (let attempt = 0; attempt < 8; attempt++) {
      const parentTransactionId = crypto.randomUUID();
      await withTransaction(t.deps.db, (tx) =>
        ledger.postTransfer(tx, {
          clientId: t.clientA.id,
          now: t.clock.now(),
          asset: usd,
          legs: [{ from: { system: 'BANK_SETTLEMENT' }, to: { walletId: wallets[0] ?? '' }, amount: 1n }],
          history: { parentTransactionId, type: 'DEPOSIT', traceId: 'test-trace' },
        }),
      );
      const row = await sql<{ account: string }>`
        SELECT e.debit_account_id AS account FROM ledger_entries e
        JOIN wallet_transactions w ON w.client_id = e.client_id AND w.ledger_transfer_id = e.transfer_id
        WHERE e.client_id = ${t.clientA.id} AND w.parent_transaction_id = ${parentTransactionId}`.execute(t.deps.db);
      drawn.add(row.rows[0]?.account ?? '');
    }
    expect(drawn.size).toBeGreaterThan(1);
  });
});

import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorize, fundedCard } from './cards/card-network.js';
import { createTestApp, subscribeNowhere, type TestClient, type TestContext } from './harness.js';

// Migration 0036 dropped the foreign keys on client_id alone of four tables whose key to their
// parent row includes client_id: the database must still refuse a row that names a client that
// does not exist, or a client other than its parent's.

let t: TestContext;
let client: TestClient;
beforeAll(async () => {
  t = await createTestApp();
  client = await t.newClient('Client keys');
  await subscribeNowhere(t, client, 'cards', ['CARD_TRANSACTION_PENDING']);
  const card = await fundedCard(t, '10.00', client);
  const authorization = await authorize(t, card.cardId, { amount: 1 }, client);
  expect(authorization.iso.response.fields['39']).toBe('00');
});
afterAll(async () => {
  await t.close();
});

/** Each table, the key to its parent that must refuse the row, and the columns a copy must change besides its id to stay clear of the table's unique keys. */
const tables: readonly { table: string; parentKey: string; newIds?: readonly string[] }[] = [
  { table: 'card_transactions', parentKey: 'card_transactions_client_id_swipe_id_fkey' },
  { table: 'card_swipes', parentKey: 'card_swipes_client_id_card_id_fkey' },
  { table: 'ledger_holds', parentKey: 'ledger_holds_client_id_account_id_asset_fkey' },
  // A delivery is unique per subscription and event: the copy names an event of its own too.
  { table: 'webhook_deliveries', parentKey: 'webhook_deliveries_client_id_subscription_id_fkey', newIds: ['event_id'] },
];

/** Inserts a copy of one of the client's rows of `table` under a new id (and new `newIds`), naming `clientId` as its client. */
async function copyUnder(table: string, clientId: string, newIds: readonly string[] = []): Promise<unknown> {
  const changes = { client_id: clientId, id: crypto.randomUUID(), ...Object.fromEntries(newIds.map((column) => [column, crypto.randomUUID()])) };
  try {
    await sql`INSERT INTO ${sql.table(table)}
      SELECT (jsonb_populate_record(NULL::${sql.table(table)}, to_jsonb(r) || ${JSON.stringify(changes)}::jsonb)).*
      FROM ${sql.table(table)} AS r WHERE r.client_id = ${client.id} LIMIT 1`.execute(t.deps.db);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('rows that name their client by their parent only (migration 0036)', () => {
  for (const { table, parentKey, newIds = [] } of tables) {
    it(`${table}: a row naming a client that does not exist, or another client than its parent's, is refused; under its own client it is written`, async () => {
      const [rows] = (await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE client_id = ${client.id}`.execute(t.deps.db)).rows;
      expect(Number(rows?.n)).toBeGreaterThan(0);
      for (const clientId of [crypto.randomUUID(), t.clientB.id]) {
        const error = (await copyUnder(table, clientId, newIds)) as { code?: string; constraint?: string } | undefined;
        expect(error?.code).toBe('23503');
        expect(error?.constraint).toBe(parentKey);
      }
      // The same copy under its own client breaks no rule of the table but its unique keys, which the new id keeps clear of.
      expect(await copyUnder(table, client.id, newIds)).toBeUndefined();
    });
  }
});

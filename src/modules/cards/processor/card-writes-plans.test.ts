import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../../test/harness.js';
import { planOf, scansOf } from '../../../../test/plans.js';
import { authorize, fundedCard } from '../../../../test/cards/card-network.js';
import { swipeUpdates } from './card-writes.js';
import type { CardSwipeRow } from './card-transaction-views.js';

// The lifecycle changes of a transaction group's messages are one prepared statement with a
// generic plan, kept (and made again only as its runs grow eightfold). Joined to card_swipes by
// key, its plan read the whole table into a hash for every group (1,854 scans, 9.2 million rows in
// one benchmark round): it expected a hundred rows from the JSON document. Each row must be found
// by its location, looked up by its key.

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

function swipe(): CardSwipeRow {
  const now = new Date();
  return {
    client_id: crypto.randomUUID(),
    id: crypto.randomUUID(),
    card_id: crypto.randomUUID(),
    wallet_id: crypto.randomUUID(),
    credit_line_id: null,
    card_type: 'DEBIT',
    status: 'COMPLETED',
    asset: 'USD',
    network_data_ref: null,
    first_mti: '0100',
    stan: '000001',
    transmission_date_time: '1127110000',
    acquirer_id: '123456',
    rrn: '000000000001',
    held_minor: '0',
    posted_minor: '100',
    hold_id: null,
    merchant: null,
    mcc: null,
    expires_at: null,
    expired_at: null,
    created_at: now,
    updated_at: now,
    coop_pending: null,
    refund_authorized_minor: '0',
  };
}

describe('plan of the lifecycle changes written together', () => {
  it('finds each lifecycle by its location, looked up by its key, on a grown table, analysed or not, and reads an empty one only at those locations', async () => {
    // 3,000 lifecycles: copies of a real one (new ids), so the table has grown as under load.
    const card = await fundedCard(t, '100.00');
    await authorize(t, card.cardId, { amount: 1 });
    await sql`INSERT INTO card_swipes SELECT (s).* FROM (
        SELECT jsonb_populate_record(w, jsonb_build_object('id', gen_random_uuid())) AS s
        FROM card_swipes w, generate_series(1, 3000) n WHERE w.client_id = ${t.clientA.id} AND w.card_id = ${card.cardId}) copies`.execute(t.deps.db);
    const [part] = swipeUpdates.parts([swipe(), swipe(), swipe()]);
    if (!part) throw new Error('no part');
    const scansIn = async (emptyTables: string[]) => {
      const plan = await planOf(t.deps.db, part.statement, 'generic', { emptyTables });
      return { plan: JSON.stringify(plan), scans: scansOf(plan) };
    };
    const grown = async () => {
      const { plan, scans } = await scansIn([]);
      // The rows to change: a TID scan of the locations; each location: the row's key in an index.
      expect(scans.map((scan) => scan['Node Type']).sort(), plan).toEqual(['Index Scan', 'Tid Scan']);
      const lookup = scans.find((scan) => scan['Node Type'] === 'Index Scan');
      expect(lookup?.['Index Cond'], plan).toMatch(/client_id = .*\bid = /);
    };
    await grown();
    await sql`ANALYZE card_swipes`.execute(t.deps.db);
    await grown();
    // On an empty table (never analysed) PostgreSQL assumes ten pages, and reading them may look
    // cheaper than ten lookups by location; the plan is made again as the statement's runs grow
    // (prepared-statements.ts). Even then the table's rows are only those at the locations found.
    const { plan, scans } = await scansIn(['card_swipes']);
    for (const scan of scans.filter((each) => each['Node Type'] === 'Seq Scan')) expect(JSON.stringify(scan), plan).toMatch(/"Filter":"\(ctid = ANY/);
  });
});

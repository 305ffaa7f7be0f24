import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../../test/harness.js';
import { authorize, cardOfMessage, fundedCard, onParent, panOf } from '../../../../test/cards/card-network.js';
import { planOf, scansOf, type PlanNode } from '../../../../test/plans.js';
import { cardVaultOf } from '../card-vault.js';
import { buildSandboxMessage } from '../sandbox/sandbox-messages.js';
import { readMessage } from './message-info.js';
import { lockCardStatement, lookupStatement } from './processor-reads.js';

// The processor's two reads (the second with the wallet's account) are prepared, and PostgreSQL may keep a generic plan for them (made
// again as their runs grow: prepared-statements.ts); one made on an empty table once read every
// record of the client through the primary key for each message. Their plans, generic and custom,
// must find every row through the card's own index entries however many messages the client's
// cards have, on a young database and on an analysed one, or every message would read more as the
// tables grow.

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** Each scan of a card table, with whether its index condition names the card (or the row's whole key). */
function cardScans(plan: PlanNode) {
  return scansOf(plan)
    .filter((scan) => ['cards', 'card_programs', 'card_swipes', 'card_transactions'].includes(scan['Relation Name'] ?? ''))
    .map((scan) => {
      const condition = scan['Index Cond'] ?? '';
      // A client's programs are the few seeded for it (contract §12.1): the program may be found by client.
      const byCard = scan['Relation Name'] === 'card_programs' || /card_id = |pan_fingerprint = |\bid = /.test(condition);
      return { table: scan['Relation Name'], byCard: byCard && /client_id = /.test(condition), scan };
    });
}

describe('plans of the card processor reads', () => {
  it('find the card, its program, the earlier message, the lifecycle and the day’s approvals through the card’s index entries', async () => {
    const card = await fundedCard(t, '100.00');
    const first = await authorize(t, card.cardId, { amount: 1 });
    await onParent(t, first.parentCardTransactionId, 'completions', { amount: 1 });
    const other = await fundedCard(t, '100.00');
    await authorize(t, other.cardId, { amount: 1 });
    // 5,000 more cards, each with a copy of the first card's lifecycle and records (new ids, STANs
    // and RRNs), analysed, as autovacuum does while a load runs.
    await sql`INSERT INTO cards SELECT (c).* FROM (
        SELECT jsonb_populate_record(k, jsonb_build_object('id', gen_random_uuid(), 'pan_fingerprint', md5(n::text || 'pan') || md5(n::text), 'reference_number', md5(n::text || 'ref'))) AS c
        FROM cards k, generate_series(1, 5000) n WHERE k.client_id = ${t.clientA.id} AND k.id = ${other.cardId}) copies`.execute(t.deps.db);
    const copies = sql`(SELECT id AS card_id, row_number() OVER (ORDER BY id) AS n FROM cards WHERE client_id = ${t.clientA.id} AND id NOT IN (${card.cardId}, ${other.cardId})) k`;
    await sql`INSERT INTO card_swipes SELECT (s).* FROM (
        SELECT jsonb_populate_record(w, jsonb_build_object('id', gen_random_uuid(), 'card_id', k.card_id, 'stan', lpad((k.n % 1000000)::text, 6, '0'), 'rrn', lpad(k.n::text, 12, '0'),
          'network_data_ref', upper(substr(md5(k.n::text), 1, 16)), 'hold_id', NULL, 'status', 'COMPLETED', 'held_minor', 0)) AS s
        FROM card_swipes w, ${copies} WHERE w.client_id = ${t.clientA.id} AND w.card_id = ${card.cardId}) copied`.execute(t.deps.db);
    await sql`INSERT INTO card_transactions SELECT (c).* FROM (
        SELECT jsonb_populate_record(r, jsonb_build_object('id', gen_random_uuid(), 'card_id', k.card_id, 'stan', lpad((k.n % 1000000)::text, 6, '0'), 'rrn', lpad(k.n::text, 12, '0'),
          'network_data_ref', upper(substr(md5(k.n::text), 1, 16)), 'ledger_hold_id', NULL)) AS c
        FROM card_transactions r, ${copies} WHERE r.client_id = ${t.clientA.id} AND r.card_id = ${card.cardId}) copied`.execute(t.deps.db);

    const pan = await panOf(t, card.cardId);
    const fingerprint = cardVaultOf(t.deps).fingerprint(pan);
    const row = await t.deps.db.selectFrom('cards').selectAll().where('client_id', '=', t.clientA.id).where('id', '=', card.cardId).executeTakeFirstOrThrow();
    const now = new Date();
    // A completion naming everything a message can be correlated by: the DE63 reference, DE90, the RRN.
    const message = buildSandboxMessage(await cardOfMessage(t, card.cardId), now, {
      mti: '0220',
      processingCode: '000000',
      amountMinor: 100n,
      networkDataRef: first.networkDataRef,
      original: { mti: '0100', stan: first.stan, transmissionDateTime: first.iso.request.fields['7'], acquirerId: first.iso.request.fields['32'] },
    });
    const info = readMessage(message, now);
    const context = { clientId: t.clientA.id, traceId: 'plan-test', now };
    const plansOf = async (mode: 'custom' | 'generic') => [
      await planOf(t.deps.db, lockCardStatement(t.clientA.id, { fingerprint }), mode),
      await planOf(t.deps.db, lockCardStatement(t.clientA.id, { id: card.cardId }), mode),
      await planOf(
        t.deps.db,
        lookupStatement(context, row, info, {
          earlier: { since: new Date(now.getTime() - 86_400_000) },
          correlate: { byRrn: true },
          approvals: true,
          account: { asset: 'USD' },
        }),
        mode,
      ),
    ];
    const expectByCard = (plans: PlanNode[]) => {
      for (const plan of plans) {
        expect(scansOf(plan).filter((scan) => scan['Node Type'] === 'Seq Scan'), JSON.stringify(plan)).toEqual([]);
        const scans = cardScans(plan);
        expect(scans.length).toBeGreaterThan(0);
        for (const scan of scans) expect({ table: scan.table, byCard: scan.byCard }, JSON.stringify(scan.scan)).toEqual({ table: scan.table, byCard: true });
      }
      // The lookup reads the card's records and lifecycles: each of its parts is in the plan.
      expect(new Set(cardScans(plans[2] as PlanNode).map((scan) => scan.table))).toEqual(new Set(['card_swipes', 'card_transactions']));
      // And the wallet's account, by its key or its wallet's (never all the client's accounts).
      const accounts = scansOf(plans[2] as PlanNode).filter((scan) => scan['Relation Name'] === 'ledger_accounts');
      expect(accounts.map((scan) => /client_id = .*\b(id|wallet_id) = /.test(scan['Index Cond'] ?? '')), JSON.stringify(accounts)).toEqual([true]);
    };

    // Before the tables are analysed (a young database; the benchmarks run with autovacuum off),
    // the plan made for the values: the trap was the records' primary key read in id order for
    // ORDER BY id LIMIT 1, every record of the client for each message.
    expectByCard(await plansOf('custom'));
    // Both reads are prepared, and PostgreSQL may keep a generic plan for them. On empty tables
    // every index looks as good as any other and the plan may be any of them; it is made again as
    // the tables grow (after 64 runs, 512, and so on: prepared-statements.ts), and from a few
    // thousand records on it finds every row through the card.
    expectByCard(await plansOf('generic'));
    await sql`ANALYZE card_swipes`.execute(t.deps.db);
    await sql`ANALYZE card_transactions`.execute(t.deps.db);
    await sql`ANALYZE cards`.execute(t.deps.db);
    expectByCard(await plansOf('custom'));
    expectByCard(await plansOf('generic'));
  });
});

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { TestClient, TestContext } from '../harness.js';
import { expectLedgerClean } from '../bank/fixtures.js';
import { programProcessesSuite } from '../support/processes.js';
import { authorize, balances, fundedCard, lifecycle, type FundedCard } from './card-network.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * A lifecycle's messages sent to two `serve` processes at once (as a network's two acquirer links
 * would): the one that waits for the card's lock must be dated after the one that went first, so
 * its record sorts after it, the parent answers it, and its events follow. Until 2026-12-06 the
 * waiting message kept the moment of its arrival (found by an audit's two-server script, which this
 * test keeps): about half of the pairs came out in the wrong order. PostgreSQL only: a second
 * process cannot open the embedded database.
 */
const suite = programProcessesSuite();

interface Race {
  card: FundedCard;
  parentId: string;
}

/** The first hold, and the increments sent to the first server and to the second at once. */
const held = 30;
const increments = [5, 7] as const;

async function eventsOf(t: TestContext, client: TestClient, parentId: string): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    SELECT data->>'cardTransactionId' AS id FROM events
    WHERE client_id = ${client.id} AND type LIKE 'CARD_TRANSACTION_%' AND data->>'parentCardTransactionId' = ${parentId}
    ORDER BY id`.execute(t.deps.db);
  return rows.rows.map((row) => row.id);
}

describe('one lifecycle\'s messages through two server processes (PostgreSQL only)', () => {
  it('two increments of one hold sent to both servers at once: the records, the parent and the events follow the order the messages changed the hold', async () => {
    const { t, processes } = suite;
    const client = await t.newClient();
    const cards: FundedCard[] = [];
    for (let index = 0; index < 12; index++) cards.push(await fundedCard(t, '1000.00', client));
    const races: Race[] = [];
    for (let index = 0; index < 60; index++) {
      const card = cards[index % cards.length] as FundedCard;
      const auth = await authorize(t, card.cardId, { amount: held }, client);
      expect(auth.responseCode).toBe('00');
      races.push({ card, parentId: auth.parentCardTransactionId });
    }
    const servers = await Promise.all([processes.startServer(), processes.startServer()]);

    const send = (base: string, race: Race, amount: number) =>
      fetch(`${base}/v1/sandbox/card-transactions/${race.parentId}/increments`, {
        method: 'POST',
        headers: { authorization: client.key, 'content-type': 'application/json' },
        body: JSON.stringify({ amount }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
    const answers = await Promise.all(races.flatMap((race) => increments.map(async (amount, index) => ({ amount, answer: await send(servers[index] as string, race, amount) }))));
    const sentAmount = new Map<string, number>();
    for (const { amount, answer } of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      expect(answer.body.data.responseCode).toBe('00');
      sentAmount.set(answer.body.data.cardTransactionId as string, amount);
    }

    let sameMillisecondNeighbours = 0;
    for (const race of races) {
      const group = await lifecycle(t, race.parentId, client);
      const children = [...(group.children as any[])].sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(children.map((child) => child.type)).toEqual(['PRE_AUTHORIZATION', 'PRE_AUTHORIZATION', 'PRE_AUTHORIZATION']);
      const [, first, second] = children;
      // In id order, each record shows the hold as its own message left it: the second adds to the first.
      expect(first.heldAmount, race.parentId).toBe(held + (sentAmount.get(first.id) as number));
      expect(second.heldAmount, race.parentId).toBe(held + increments[0] + increments[1]);
      expect(group).toMatchObject({ status: 'PENDING', heldAmount: held + increments[0] + increments[1] });
      expect(Date.parse(second.createdAt)).toBeGreaterThan(Date.parse(first.createdAt));
      if (Date.parse(second.createdAt) - Date.parse(first.createdAt) === 1) sameMillisecondNeighbours++;
      // The parent answers the last record; the events come in the records' order.
      const parent = await t.request({ url: `/v1/cards/transactions/${race.parentId}`, key: client.key });
      expect(parent.body.data.id).toBe(second.id);
      expect(await eventsOf(t, client, race.parentId)).toEqual(children.map((child) => child.id));
    }
    // Messages waited for each other (a waiting one is dated 1 ms after the change it waited for):
    // the race took place.
    expect(sameMillisecondNeighbours).toBeGreaterThan(0);

    const heldByCard = new Map<string, number>();
    for (const race of races) heldByCard.set(race.card.walletId, (heldByCard.get(race.card.walletId) ?? 0) + held + increments[0] + increments[1]);
    for (const card of cards) {
      const reserved = heldByCard.get(card.walletId) ?? 0;
      expect(await balances(t, card.walletId, client)).toEqual({ AVAILABLE: (1000 - reserved).toFixed(2), RESERVED: reserved.toFixed(2), PENDING: '0.00' });
    }
    await expectLedgerClean(t);
  }, 180_000);
});

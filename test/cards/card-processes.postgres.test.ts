import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { TestClient, TestContext } from '../harness.js';
import { expectLedgerClean } from '../bank/fixtures.js';
import { programProcessesSuite } from '../support/processes.js';
import { withOtherTransaction } from '../support/row-locks.js';
import { formatOriginalDataElements } from '../../src/modules/cards/network/index.js';
import { authorize, balances, fundedCard, lifecycle, panOf, type FundedCard } from './card-network.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * A lifecycle's messages sent to two `serve` processes at once (as a network's two acquirer links
 * would): the one that waits for the card's lock must be dated after the one that went first, so
 * its record sorts after it, the parent answers it, and its events follow. Until 2026-12-06 the
 * waiting message kept the moment of its arrival (found by an audit's two-server script, which this
 * test keeps): about half of the pairs came out in the wrong order. A completion and a reversal of
 * one hold raced the same way (the audit's second script) must leave the lifecycle as one of the
 * two orders would, its records in that order: without the dating, a reversal that arrived first
 * and took the lock second was written before the completion it followed (its release of 0.00 shown
 * ahead of the capture); so must a completion and the hold's expiry (the third script), which
 * checks the money of the two but did not catch the missing dating in three runs. PostgreSQL only:
 * a second process cannot open the embedded database.
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

/** One of two things done to every hold at once: prepared for each hold beforehand (nothing read when sent), then sent to a server. */
interface RaceStep<P> {
  name: string;
  send: (base: string, prepared: P) => Promise<{ status: number; body: any }>;
  /** The status it answers whichever order the two ran in. */
  status: number | ((status: number) => boolean);
}

/**
 * Two steps on each of 60 holds sent to the two servers at once (each step to each server for half
 * of the holds, sent first for half of those) while another transaction holds every card: they all
 * wait for the card's lock, and which of a hold's two goes first is PostgreSQL's choice, not the
 * order they arrived in. Each lifecycle must end as one of the two orders run one after the other
 * (on a card of their own, first) leaves it, with its records, events and parent in that order,
 * and each wallet must have paid what those orders took. With `bothOrders`, both must come out (for
 * two messages that take the same path: about half each in every run so far); two steps whose paths
 * differ may reach the lock in much the same order every time.
 */
async function raceOnEachHold<P>(
  t: TestContext,
  client: TestClient,
  servers: [string, string],
  prepare: (card: FundedCard, auth: any, serial: number) => Promise<P>,
  steps: [RaceStep<P>, RaceStep<P>],
  options: { bothOrders: boolean },
): Promise<void> {
  const [first, second] = servers;
  const expectStatus = (step: RaceStep<P>, answer: { status: number; body: any }) => {
    if (typeof step.status === 'number') expect(answer.status, `${step.name}: ${JSON.stringify(answer.body)}`).toBe(step.status);
    else expect(step.status(answer.status), `${step.name}: ${JSON.stringify(answer.body)}`).toBe(true);
  };
  /** What a lifecycle shows: its status and hold, and its records in id order (type, status, amount, the hold each left, the response code). */
  const outcomeOf = async (parentId: string) => {
    const group = await lifecycle(t, parentId, client);
    const children = [...(group.children as any[])].sort((a, b) => (a.id < b.id ? -1 : 1));
    return JSON.stringify({
      status: group.status,
      heldAmount: group.heldAmount,
      records: children.map((child) => [child.type, child.status, child.amount, child.heldAmount, child.responseCode]),
    });
  };
  const available = async (walletId: string) => Number((await balances(t, walletId, client)).AVAILABLE);

  // The two orders, one after the other, on a card of their own: each order's lifecycle, and what it took from the wallet in all.
  const reference = await fundedCard(t, '1000.00', client);
  const orders = new Map<string, { name: string; spent: number }>();
  let serial = 0;
  for (const order of [steps, [steps[1], steps[0]]]) {
    const before = await available(reference.walletId);
    const auth = await authorize(t, reference.cardId, { amount: held }, client);
    const prepared = await prepare(reference, auth, serial++);
    for (const step of order) expectStatus(step, await step.send(first, prepared));
    orders.set(await outcomeOf(auth.parentCardTransactionId), { name: order.map((step) => step.name).join(', then '), spent: before - (await available(reference.walletId)) });
  }
  expect(orders.size, 'the two orders leave different lifecycles').toBe(2);

  const cards: FundedCard[] = [];
  for (let index = 0; index < 12; index++) cards.push(await fundedCard(t, '1000.00', client));
  const races: (Race & { prepared: P })[] = [];
  for (let index = 0; index < 60; index++) {
    const card = cards[index % cards.length] as FundedCard;
    const auth = await authorize(t, card.cardId, { amount: held }, client);
    races.push({ card, parentId: auth.parentCardTransactionId, prepared: await prepare(card, auth, serial++) });
  }
  const answers = await withOtherTransaction(t.deps.database.pool, async (other) => {
    for (const card of cards) await other.lock('cards', client.id, card.cardId);
    const sent = Promise.all(
      races.flatMap((race, index) => {
        const [a, b] = index % 2 === 0 ? [first, second] : [second, first];
        const pair = [async () => ({ step: steps[0], answer: await steps[0].send(a, race.prepared) }), async () => ({ step: steps[1], answer: await steps[1].send(b, race.prepared) })];
        return (index % 4 < 2 ? pair : pair.reverse()).map((sendOne) => sendOne());
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await other.commit();
    return sent;
  });
  for (const { step, answer } of answers) expectStatus(step, answer);

  const seen = new Map<string, number>();
  const spentByWallet = new Map<string, number>();
  for (const race of races) {
    const outcome = await outcomeOf(race.parentId);
    const order = orders.get(outcome);
    if (!order) return expect.fail(`${race.parentId}: ${outcome} is neither order's (${[...orders.keys()].join(' / ')})`);
    seen.set(order.name, (seen.get(order.name) ?? 0) + 1);
    // The parent answers the last record; the events come in the records' order.
    const group = await lifecycle(t, race.parentId, client);
    const ids = (group.children as any[]).map((child) => child.id as string).sort();
    const parent = await t.request({ url: `/v1/cards/transactions/${race.parentId}`, key: client.key });
    expect(parent.body.data.id).toBe(ids.at(-1));
    const events = await eventsOf(t, client, race.parentId);
    expect(events).toEqual(ids.filter((id) => events.includes(id)));
    spentByWallet.set(race.card.walletId, (spentByWallet.get(race.card.walletId) ?? 0) + order.spent);
  }
  if (options.bothOrders) expect([...seen.keys()].sort()).toEqual([...new Set([...orders.values()].map((order) => order.name))].sort());
  for (const card of cards) {
    const spent = spentByWallet.get(card.walletId) ?? 0;
    expect(await balances(t, card.walletId, client)).toEqual({ AVAILABLE: (1000 - spent).toFixed(2), RESERVED: '0.00', PENDING: '0.00' });
  }
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

  /** An ISO 8583 message of the client's, as the message-level endpoint takes it. */
  const sendIso = (client: TestClient) => (base: string, message: Record<string, string>) =>
    fetch(`${base}/v1/sandbox/iso8583`, {
      method: 'POST',
      headers: { authorization: client.key, 'content-type': 'application/json' },
      body: JSON.stringify({ format: 'json', message }),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
  /** The 0220 completing the hold in full and the 0420 reversing it, built from its 0100. */
  const completionAndReversal = (t: TestContext) => async (card: FundedCard, auth: any, serial: number) => {
    const request: Record<string, string> = { ...(auth.iso.request.fields as Record<string, string>), '2': await panOf(t, card.cardId) };
    const stan = (offset: number) => String(700000 + serial * 2 + offset).padStart(6, '0');
    const de90 = formatOriginalDataElements({ mti: '0100', stan: request['11'] ?? '', transmissionDateTime: request['7'] ?? '', acquirerId: request['32'] ?? '' });
    return {
      parentId: auth.parentCardTransactionId as string,
      completion: { ...request, '0': '0220', '11': stan(0), '37': `8${stan(0)}00000` },
      reversal: { ...request, '0': '0420', '11': stan(1), '90': de90 },
    };
  };

  it('a completion and a full reversal of one hold sent to both servers at once: each lifecycle ends as one of the two orders run one after the other would leave it, its records in that order', async () => {
    const { t, processes } = suite;
    const client = await t.newClient();
    const servers = await Promise.all<[Promise<string>, Promise<string>]>([processes.startServer(), processes.startServer()]);
    const iso = sendIso(client);
    await raceOnEachHold(t, client, servers, completionAndReversal(t), [
      { name: 'completion', send: (base, prepared) => iso(base, prepared.completion), status: 200 },
      { name: 'reversal', send: (base, prepared) => iso(base, prepared.reversal), status: 200 },
    ], { bothOrders: true });
    await expectLedgerClean(t);
  }, 180_000);

  // The expiry reaches the card's lock by another path than the message (no transaction group), so
  // one order may win every hold of a run (seen once in four): which came out is not asserted.
  it("a completion and the hold's expiry (the sandbox's expire control) sent to both servers at once: each lifecycle ends as one of the two orders would leave it", async () => {
    const { t, processes } = suite;
    const client = await t.newClient();
    const servers = await Promise.all<[Promise<string>, Promise<string>]>([processes.startServer(), processes.startServer()]);
    const iso = sendIso(client);
    const expire = (base: string, parentId: string) =>
      fetch(`${base}/v1/sandbox/card-transactions/${parentId}/expire`, { method: 'POST', headers: { authorization: client.key } }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
    await raceOnEachHold(t, client, servers, completionAndReversal(t), [
      { name: 'completion', send: (base, prepared) => iso(base, prepared.completion), status: 200 },
      // 409 once the completion has closed the lifecycle: nothing is left to expire.
      { name: 'expiry', send: (base, prepared) => expire(base, prepared.parentId), status: (status) => status === 200 || status === 409 },
    ], { bothOrders: false });
    await expectLedgerClean(t);
  }, 180_000);
});

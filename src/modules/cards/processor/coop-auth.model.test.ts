/* eslint-disable @typescript-eslint/no-explicit-any */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../../test/harness.js';
import { expectLedgerClean } from '../../../../test/bank/fixtures.js';
import { cardPrograms } from '../../../../test/cards/fixtures.js';
import { authorize, balances, fundedCard, panOf } from '../../../../test/cards/card-network.js';
import { CoopReceiver } from '../../../../test/cards/coop-receiver.js';
import { modelRunOptions } from '../../../../test/support/model-runs.js';
import { formatOriginalDataElements, formatReplacementAmounts } from '../network/index.js';

/**
 * Cooperative authorization under random interleavings (issue 19): requests wait for the client's
 * answer (a local endpoint that answers when a step tells it to) while the network sends
 * increments, reversals, advices, completions, repeats and the clock expires holds. The rules of
 * each interleaving are the route tests' (coop-auth.routes.test.ts); this test checks what must
 * hold whatever they decide: every message answered (no 5xx), no lifecycle opened but by a first
 * request (every other message names one), nothing held on a closed lifecycle, what is reserved is
 * what the open lifecycles hold, money kept (AVAILABLE + RESERVED is the funding less what the
 * lifecycles posted), everything released once the open lifecycles are reversed, and the ledger
 * clean. The audits of 2026-12-03 found money errors in these interleavings (a hold or a posting of
 * what the network had reversed, a second lifecycle beside a waiting request's).
 */

let t: TestContext;
let client: TestClient;
let endpoint: CoopReceiver;
beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  client = await t.newClient();
  endpoint = await CoopReceiver.start();
  const subscribed = await t.request({
    method: 'POST',
    url: '/v1/webhooks',
    key: client.key,
    body: { name: 'Decisions', url: endpoint.url(), subscribedEventTypes: ['COOP_AUTH_0100', 'COOP_AUTH_0200'] },
  });
  expect(subscribed.status).toBe(201);
  // The longest wait the program allows: the steps answer well within it (a slow machine's stand-in is one more outcome).
  const program = (await cardPrograms(t, client))['Cooperative Debit'];
  const patched = await t.request({ method: 'PATCH', url: `/v1/cards/programs/${program.id as string}`, key: client.key, body: { coopAuth: { ...(program.coopAuth as object), timeoutMs: 4000 } } });
  expect(patched.status).toBe(200);
});
afterAll(async () => {
  await endpoint.stop();
  await t.close();
});

type Decision = { kind: 'approve' } | { kind: 'partial'; part: number } | { kind: 'decline' };
/** How a message names an earlier one: DE63 (the lifecycle's reference) kept or not, DE90's acquirer given or sent as zeros. */
type Naming = { byRef: boolean; zeros: boolean };
type Step =
  | { kind: 'request'; mti: '0100' | '0200'; amountCents: number }
  | { kind: 'increment'; pick: number; amountCents: number }
  | { kind: 'answer'; pick: number; decision: Decision }
  | { kind: 'reverse'; pick: number; naming: Naming; part: number | null }
  | { kind: 'advice'; pick: number; naming: Naming; amountCents: number }
  | { kind: 'complete'; pick: number; naming: Naming; amountCents: number }
  | { kind: 'repeat'; pick: number }
  | { kind: 'expire' };

const amountCents = fc.integer({ min: 1, max: 3000 });
const naming = fc.record({ byRef: fc.boolean(), zeros: fc.boolean() });
const decision: fc.Arbitrary<Decision> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'approve' as const }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('partial' as const), part: fc.nat() }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'decline' as const }), weight: 1 },
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('request' as const), mti: fc.constantFrom('0100' as const, '0200' as const), amountCents }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('increment' as const), pick: fc.nat(), amountCents: fc.integer({ min: 1, max: 800 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('answer' as const), pick: fc.nat(), decision }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('reverse' as const), pick: fc.nat(), naming, part: fc.option(fc.nat(), { nil: null, freq: 2 }) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('advice' as const), pick: fc.nat(), naming, amountCents }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(), naming, amountCents }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('repeat' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'expire' as const }), weight: 1 },
);

/** A message a step sent: its fields (DE2 left out) and the lifecycle (index) it belongs to. */
interface Sent {
  fields: Record<string, string>;
  lifecycle: number;
}

/** A decision request the endpoint holds until a step answers it. */
interface Held {
  stan: string;
  amountMinor: number;
  answer: (body: unknown) => void;
}

/** What the steps met over the test's runs: each kind of message sent while a request waited for the client. */
const exercised = { asked: 0, answered: 0, reverse: 0, advice: 0, complete: 0, repeat: 0, expire: 0, increment: 0, ceiling: 0 };

let counter = 0;
const next = () => String(counter++ % 1_000_000).padStart(6, '0');
const delay = (ms: number) => new Promise<'later'>((resolve) => setTimeout(() => resolve('later'), ms));
const minor = (amount: unknown) => Math.round(Number(amount) * 100);

const property = fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 16, size: 'max' }), async (steps) => {
  const card = await fundedCard(t, '100.00', client, 'Cooperative Debit');
  const pan = await panOf(t, card.cardId);
  endpoint.answer = () => ({ body: { responseCode: '00' } });
  const template = (await authorize(t, card.cardId, { amount: 0 }, client)).iso.request;
  const held: Held[] = [];
  endpoint.answer = (request) => {
    let answer: (body: unknown) => void = () => undefined;
    const later = new Promise<{ body: unknown }>((resolve) => {
      answer = (body) => resolve({ body });
    });
    held.push({ stan: String(request.parsed.data.stan), amountMinor: Number(request.parsed.data.amountMinor), answer });
    return { body: null, later };
  };

  // Every message's answer, awaited at the end: each must be a 200 (until 2026-12-03 some never came:
  // decisions answered at once on one card went round their transaction group for ever, see
  // transaction-groups.ts).
  const answers: Promise<void>[] = [];
  const failures: string[] = [];
  /** Sends a message; resolves once it is answered, or its request reached the endpoint, or after 300 ms (a repeat waiting for its first sending). */
  const send = async (fields: Record<string, string>) => {
    const http = t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message: { ...fields, '2': pan } } }).then((response) => {
      if (response.status !== 200) failures.push(`${fields['0']} ${fields['11']}: ${response.status} ${JSON.stringify(response.body)}`);
      return 'answered' as const;
    });
    answers.push(http.then(() => undefined));
    const asked = (async () => {
      for (let waited = 0; waited < 300; waited += 5) {
        if (held.some((entry) => entry.stan === fields['11'])) return 'asked' as const;
        await delay(5);
      }
      return 'later' as const;
    })();
    const outcome = await Promise.race([http, asked, delay(300)]);
    if (outcome === 'asked') exercised.asked++;
    return outcome;
  };

  /**
   * A lifecycle, and what a full reversal left it (`ceiling`: held and posted, minor units) when
   * no other request of it was waiting: no answer, repeat, reversal or expiry may raise either
   * afterwards (a message that may, an increment, an advice, a completion, clears it). Until
   * 2026-12-03 a late approval held, or a repeat posted, what the network had reversed.
   */
  const lifecycles: { reference: string; first: Sent; ceiling: { held: number; posted: number } | null }[] = [];
  const requests: Sent[] = [];
  const message = (changes: Record<string, string>) => {
    const { '90': _named, '95': _kept, ...fields } = { '0': template.mti, ...template.fields, ...changes };
    return fields;
  };
  /** An earlier message's fields, DE63 kept when `byRef`, DE90 naming it (the acquirer as zeros when `zeros`). */
  const naming = (named: Sent, how: Naming, changes: Record<string, string>) => {
    const { '63': reference, '90': _named, '95': _kept, ...fields } = named.fields;
    return {
      ...fields,
      ...(how.byRef && reference !== undefined ? { '63': reference } : {}),
      '90': formatOriginalDataElements({ mti: named.fields['0'] ?? '', stan: named.fields['11'] ?? '', transmissionDateTime: named.fields['7'] ?? '', acquirerId: how.zeros ? '00000000000' : (named.fields['32'] ?? '') }),
      ...changes,
    };
  };
  const pick = <T>(items: readonly T[], index: number): T | undefined => (items.length === 0 ? undefined : items[index % items.length]);

  const groupOf = async (reference: string) => {
    const response = await t.request({ url: `/v1/cards/transactions?cardId=${card.cardId}&limit=200`, key: client.key });
    expect(response.status).toBe(200);
    return (response.body.data as any[]).find((group) => group.networkDataRef === reference);
  };
  const lifecycleOfStan = (stan: string) => requests.find((entry) => entry.fields['11'] === stan)?.lifecycle;

  for (const current of steps) {
    if (held.length > 0 && current.kind !== 'request' && current.kind !== 'answer') exercised[current.kind]++;
    if (current.kind === 'request') {
      const id = next();
      const reference = `COOPMODEL${id}0`.padEnd(16, '0');
      const fields = message({ '0': current.mti, '4': String(current.amountCents).padStart(12, '0'), '11': id, '37': `5${id}00000`, '63': `VIS00000${reference}1` });
      const sent = { fields, lifecycle: lifecycles.length };
      lifecycles.push({ reference, first: sent, ceiling: null });
      requests.push(sent);
      await send(fields);
    } else if (current.kind === 'increment') {
      const lifecycle = pick(lifecycles.filter((entry) => entry.first.fields['0'] === '0100'), current.pick);
      if (lifecycle === undefined) continue;
      const id = next();
      const fields = { ...lifecycle.first.fields, '4': String(current.amountCents).padStart(12, '0'), '11': id };
      const sent = { fields, lifecycle: lifecycle.first.lifecycle };
      requests.push(sent);
      lifecycle.ceiling = null;
      await send(fields);
    } else if (current.kind === 'answer') {
      const entry = pick(held, current.pick);
      if (entry === undefined) continue;
      held.splice(held.indexOf(entry), 1);
      exercised.answered++;
      const { decision: chosen } = current;
      if (chosen.kind === 'approve' || (chosen.kind === 'partial' && entry.amountMinor < 2)) entry.answer({ responseCode: '00' });
      else if (chosen.kind === 'partial') entry.answer({ responseCode: '10', approvedAmountMinor: 1 + (chosen.part % (entry.amountMinor - 1)) });
      else entry.answer({ responseCode: '05' });
      await delay(20);
    } else if (current.kind === 'reverse') {
      const named = pick(requests, current.pick);
      if (named === undefined) continue;
      const total = Number(named.fields['4']);
      const kept: Record<string, string> = current.part === null || total < 2 ? {} : { '95': formatReplacementAmounts({ actualTransactionMinor: BigInt(current.part % total) }) };
      await send({ ...naming(named, current.naming, { '0': '0420', '11': next() }), ...kept });
      const lifecycle = lifecycles[named.lifecycle];
      if (lifecycle !== undefined && current.part === null && !held.some((entry) => entry.stan !== named.fields['11'] && lifecycleOfStan(entry.stan) === named.lifecycle)) {
        const group = await groupOf(lifecycle.reference);
        if (group !== undefined) lifecycle.ceiling = { held: minor(group.heldAmount), posted: minor(group.postedAmount) };
      }
    } else if (current.kind === 'advice') {
      const named = pick(requests, current.pick);
      if (named === undefined) continue;
      const lifecycle = lifecycles[named.lifecycle];
      if (lifecycle !== undefined) lifecycle.ceiling = null;
      await send(naming(named, current.naming, { '0': named.fields['0'] === '0200' ? '0220' : '0120', '4': String(current.amountCents).padStart(12, '0'), '11': next() }));
    } else if (current.kind === 'complete') {
      const lifecycle = pick(lifecycles, current.pick);
      if (lifecycle === undefined) continue;
      const id = next();
      lifecycle.ceiling = null;
      await send(naming(lifecycle.first, current.naming, { '0': '0220', '4': String(current.amountCents).padStart(12, '0'), '11': id, '37': `6${id}00000` }));
    } else if (current.kind === 'repeat') {
      const named = pick(requests, current.pick);
      if (named === undefined) continue;
      await send({ ...named.fields, '0': `${(named.fields['0'] ?? '').slice(0, 3)}1` });
    } else {
      const advanced = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 8 * 24 * 3600 } });
      expect(advanced.status).toBe(200);
    }
  }

  // The client answers what still waits (and approves anything asked from now on); every message is then answered.
  endpoint.answer = () => ({ body: { responseCode: '00' } });
  for (const entry of held.splice(0)) entry.answer({ responseCode: '00' });
  await Promise.all(answers);
  expect(failures).toEqual([]);

  const groups = async () => {
    const response = await t.request({ url: `/v1/cards/transactions?cardId=${card.cardId}&limit=200`, key: client.key });
    expect(response.status).toBe(200);
    return response.body.data as any[];
  };
  const kept = async () => {
    const all = await groups();
    // One lifecycle per first request (and the template's verification): every other message named one of them.
    expect(all).toHaveLength(lifecycles.length + 1);
    for (const group of all) if (group.status !== 'PENDING') expect(minor(group.heldAmount), `${group.status} lifecycle ${group.parentCardTransactionId as string}`).toBe(0);
    const heldMinor = all.filter((group) => group.status === 'PENDING').reduce((sum, group) => sum + minor(group.heldAmount), 0);
    const postedMinor = all.reduce((sum, group) => sum + minor(group.postedAmount), 0);
    const wallet = await balances(t, card.walletId, client);
    expect(minor(wallet.RESERVED), 'RESERVED is what the open lifecycles hold').toBe(heldMinor);
    expect(minor(wallet.AVAILABLE) + minor(wallet.RESERVED), 'the funding less what was posted').toBe(10_000 - postedMinor);
    return all;
  };
  const all = await kept();
  for (const lifecycle of lifecycles) {
    if (lifecycle.ceiling === null) continue;
    const group = all.find((entry) => entry.networkDataRef === lifecycle.reference);
    expect(minor(group?.heldAmount), `held after a full reversal, lifecycle ${lifecycle.reference}`).toBeLessThanOrEqual(lifecycle.ceiling.held);
    expect(minor(group?.postedAmount), `posted after a full reversal, lifecycle ${lifecycle.reference}`).toBeLessThanOrEqual(lifecycle.ceiling.posted);
    exercised.ceiling++;
  }
  const open = all.filter((group) => group.status === 'PENDING');
  // The network reverses every open lifecycle (by its reference): nothing stays reserved.
  for (const group of open) {
    const lifecycle = lifecycles.find((entry) => entry.reference === group.networkDataRef);
    if (lifecycle === undefined) throw new Error(`an open lifecycle no step opened: ${JSON.stringify(group)}`);
    const { '90': _named, ...fields } = naming(lifecycle.first, { byRef: true, zeros: false }, { '0': '0420', '11': next() });
    const reversed = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message: { ...fields, '2': pan } } });
    expect(reversed.status).toBe(200);
  }
  await kept();
  expect(minor((await balances(t, card.walletId, client)).RESERVED)).toBe(0);
});

/**
 * One sequence that meets every kind the tally below counts, run before the random ones: with 25
 * random runs a kind (most often a full reversal's ceiling) was now and then never met, and the
 * tally failed with no fault in the code (1 run in 6 on one machine).
 */
const byReference = { byRef: true, zeros: false };
const everyKind: Step[] = [
  { kind: 'request', mti: '0100', amountCents: 500 },
  { kind: 'increment', pick: 0, amountCents: 100 },
  { kind: 'reverse', pick: 0, naming: byReference, part: 50 },
  { kind: 'advice', pick: 0, naming: byReference, amountCents: 300 },
  { kind: 'complete', pick: 0, naming: byReference, amountCents: 200 },
  { kind: 'repeat', pick: 0 },
  { kind: 'expire' },
  { kind: 'answer', pick: 0, decision: { kind: 'approve' } },
  { kind: 'answer', pick: 0, decision: { kind: 'approve' } },
  { kind: 'request', mti: '0100', amountCents: 400 },
  { kind: 'answer', pick: 0, decision: { kind: 'approve' } },
  { kind: 'reverse', pick: 2, naming: byReference, part: null },
];

describe('model', () => {
  it('random interleavings of requests waiting for the client with the network\'s messages keep every invariant of the money', async () => {
    await fc.assert(property, {
      ...modelRunOptions<[Step[]]>('coop model test', 25),
      examples: process.env.COOP_EXAMPLE === undefined ? [[everyKind]] : [[JSON.parse(process.env.COOP_EXAMPLE) as Step[]]],
    });
    // COOP_EXAMPLE (a counterexample's steps, as JSON) runs it first: the tally is then not the point.
    if (process.env.COOP_EXAMPLE === undefined) for (const [kind, count] of Object.entries(exercised)) expect(count, kind).toBeGreaterThan(0);
    await expectLedgerClean(t);
  }, 600_000);
});

/* eslint-disable @typescript-eslint/no-explicit-any */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../../test/harness.js';
import { expectLedgerClean } from '../../../../test/bank/fixtures.js';
import { cardPrograms } from '../../../../test/cards/fixtures.js';
import { authorize, balances, cardEventsOf, cardOfMessage, fundedCard, lifecycle, onParent, panOf, send, type FundedCard } from '../../../../test/cards/card-network.js';
import { CoopReceiver } from '../../../../test/cards/coop-receiver.js';
import { verifyWebhook } from '../../../../test/webhook-receiver.js';
import { appWithLogCapture } from '../../../../test/support/log-capture.js';
import { withTransaction } from '../../../platform/db/transaction.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { formatOriginalDataElements } from '../network/index.js';
import { buildSandboxMessage, newNetworkDataRef } from '../sandbox/sandbox-messages.js';
import { finishCoopDecision, isCoopDecisionStep, processCardMessage } from './processor.js';

/**
 * Cooperative authorization (issue 19, contract §12.4): a COOP_AUTH card's 0100/0200 that passed
 * the system checks is decided by the client's endpoint (a local receiver here), in two
 * transactions with the call between them.
 */

let t: TestContext;
let receiver: CoopReceiver;
let secret: string;
beforeAll(async () => {
  t = await createTestApp();
  receiver = await CoopReceiver.start();
  secret = await subscribe(t.clientA, receiver);
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

async function subscribe(client: TestClient, endpoint: CoopReceiver, types = ['COOP_AUTH_0100', 'COOP_AUTH_0200']): Promise<string> {
  const response = await t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: { name: 'Decisions', url: endpoint.url(), subscribedEventTypes: types } });
  expect(response.status).toBe(201);
  return response.body.data.secret as string;
}

/** Runs `body` with a new client whose decision endpoint (subscribed for COOP_AUTH_0100 and 0200) is a receiver of its own. */
async function withEndpoint(body: (client: TestClient, endpoint: CoopReceiver) => Promise<void>): Promise<void> {
  const client = await t.newClient();
  const endpoint = await CoopReceiver.start();
  try {
    await subscribe(client, endpoint);
    await body(client, endpoint);
  } finally {
    await endpoint.stop();
  }
}

/** A card of the client's "Cooperative Debit" program on a wallet funded with `amount`. */
const coopCard = (amount: string, client: TestClient = t.clientA) => fundedCard(t, amount, client, 'Cooperative Debit');

async function patchCoopProgram(client: TestClient, coopAuth: Record<string, unknown>): Promise<void> {
  const program = (await cardPrograms(t, client))['Cooperative Debit'];
  const current = program.coopAuth as Record<string, unknown>;
  const response = await t.request({ method: 'PATCH', url: `/v1/cards/programs/${program.id as string}`, key: client.key, body: { coopAuth: { ...current, ...coopAuth } } });
  expect(response.status).toBe(200);
}

const answerWith = (body: unknown, options: { status?: number; delayMs?: number } = {}) => {
  answerWithFor(receiver, body, options);
};
const answerWithFor = (endpoint: CoopReceiver, body: unknown, options: { status?: number; delayMs?: number } = {}) => {
  endpoint.answer = () => ({ body, ...options });
};

async function deliveriesOf(client: TestClient = t.clientA): Promise<any[]> {
  const hooks = await t.request({ url: '/v1/webhooks', key: client.key });
  const hook = (hooks.body.data as any[]).find((candidate) => candidate.name === 'Decisions');
  const response = await t.request({ url: `/v1/webhooks/${hook.id as string}/deliveries?limit=100`, key: client.key });
  expect(response.status).toBe(200);
  return response.body.data;
}

async function eventsOfType(type: string, client: TestClient = t.clientA): Promise<any[]> {
  const response = await t.request({ url: `/v1/events?type=${type}&limit=200`, key: client.key });
  expect(response.status).toBe(200);
  return response.body.data;
}

/** The lifecycle's CARD_TRANSACTION_* event types, oldest first, and the DE39 the network got. */
async function expectOutcome(result: any, code: string, eventTypes: string[], client: TestClient = t.clientA): Promise<void> {
  expect(result.iso.response.fields['39']).toBe(code);
  expect(result.responseCode).toBe(code);
  expect((await cardEventsOf(t, result.parentCardTransactionId, client)).map((event) => event.type)).toEqual(eventTypes);
}

async function expectNoOpenHold(card: FundedCard, available: string, client: TestClient = t.clientA): Promise<void> {
  expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: available, RESERVED: '0.00' });
}

describe('the client approves', () => {
  it('the record answered is the record stored: the client\'s metadata with its keys in the order the database keeps them', async () => {
    // jsonb keeps keys shorter first, then by their bytes; the answer is built without reading the record back.
    const metadata = { zeta: 1, b: { yy: 'x', a: [{ long: 1, s: 2 }] }, '10': 1.5, é: true, aa: null };
    answerWith({ responseCode: '00', metadata });
    const card = await coopCard('100.00');
    const result = await authorize(t, card.cardId, { amount: 5 });
    expect(result.responseCode).toBe('00');
    const stored = await t.request({ url: `/v1/cards/transactions/${result.cardTransactionId as string}` });
    expect(stored.status).toBe(200);
    expect(JSON.stringify(result.record.coopAuth)).toBe(JSON.stringify(stored.body.data.coopAuth));
    // 'é' is two bytes in UTF-8, after 'aa'; '10' comes first in JavaScript's order whatever jsonb's is.
    expect(Object.keys(result.record.coopAuth.metadata)).toEqual(['10', 'b', 'aa', 'é', 'zeta']);
    expect(Object.keys(result.record.coopAuth.metadata.b.a[0])).toEqual(['s', 'long']);
  });

  it('"00": full approval, hold placed, decisionSource CLIENT; the request is signed and mapped as contract §12.4 says', async () => {
    answerWith({ responseCode: '00', authCode: 'A1B2C3', message: 'ok by rules', metadata: { rule: 'groceries' } });
    const card = await coopCard('100.00');
    const result = await authorize(t, card.cardId, { amount: 25.5, merchant: { name: 'CORNER STORE', mcc: '5411', city: 'AUSTIN', state: 'TX', country: 'US' } });
    expect(result).toMatchObject({ responseCode: '00', approvedAmount: 25.5, authCode: 'A1B2C3', decisionSource: 'CLIENT' });
    expect(result.iso.response.fields['38']).toBe('A1B2C3');
    await expectOutcome(result, '00', ['COOP_AUTH_0100', 'CARD_TRANSACTION_PENDING']);
    expect(result.record).toMatchObject({ status: 'PENDING', heldAmount: 25.5, coopAuth: { standInReason: null, clientResponseCode: '00', message: 'ok by rules', metadata: { rule: 'groceries' } } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '74.50', RESERVED: '25.50' });

    const [request] = receiver.requestsFor(result.cardTransactionId);
    if (!request) return expect.fail('the client was not asked');
    const verified = verifyWebhook(secret, request);
    expect(verified.type).toBe('COOP_AUTH_0100');
    expect(verified.id).toBe(result.record.coopAuth.eventId);
    const data = verified.data as any;
    expect(data).toMatchObject({
      mti: '0100',
      stan: result.stan,
      rrn: result.rrn,
      amountMinor: 2550,
      currency: 'USD',
      processingCode: '000000',
      mcc: '5411',
      networkDataRef: result.networkDataRef,
      cardId: card.cardId,
      cardTransactionId: result.cardTransactionId,
      parentCardTransactionId: result.parentCardTransactionId,
      partialApprovalCapable: true,
      availableMinor: 10_000,
    });
    expect(data.cardReferenceId).toMatch(/./);
    expect(data.networkData.slice(8, 24)).toBe(result.networkDataRef);
    expect(data.raw.isoMti).toBe('0100');
    expect(data.raw.fields['2']).toMatch(/^\d{6}\*+\d{4}$/);
    for (const secretField of ['14', '35', '36', '45', '52', '55']) expect(data.raw.fields[secretField]).toBeUndefined();
    expect(JSON.stringify(data)).not.toMatch(/\d{13,19}/);

    // The event stream shows the request; the delivery log shows the answer and its verdict.
    expect((await eventsOfType('COOP_AUTH_0100')).map((event) => event.id)).toContain(verified.id);
    const delivery = (await deliveriesOf()).find((candidate) => candidate.eventId === verified.id);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 1, attempts: [{ succeeded: true, httpStatus: 200, verdict: 'APPROVED' }] });
    expect(delivery.attempts[0].latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('a partial approval on a capable terminal: "10" with DE4 the approved amount and DE54 the original; the hold keeps only what was approved', async () => {
    answerWith({ responseCode: '00', approvedAmountMinor: 1200 });
    const card = await coopCard('100.00');
    const result = await authorize(t, card.cardId, { amount: 20 });
    expect(result).toMatchObject({ responseCode: '10', approvedAmount: 12, decisionSource: 'CLIENT' });
    await expectOutcome(result, '10', ['COOP_AUTH_0100', 'CARD_TRANSACTION_PENDING']);
    expect(result.iso.response.fields['4']).toBe('000000001200');
    expect(result.iso.response.fields['54']).toBe('0057840C000000002000');
    // The client's own code is kept as it sent it ("00" with a smaller amount); the network was answered "10".
    expect(result.record).toMatchObject({ status: 'PENDING', amount: 12, heldAmount: 12, coopAuth: { clientResponseCode: '00' } });
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '88.00', RESERVED: '12.00' });
  });

  it('in a foreign currency the answer is read in the request\'s currency (amountMinor, DE4) and converted at the message\'s rate; a partial 0110 carries the approved DE4 and DE6', async () => {
    const card = await coopCard('300.00');
    answerWith({ responseCode: '00' });
    const template = await authorize(t, card.cardId, { amount: 1, partialApprovalCapable: true });
    let sequence = 0;
    /** A 0100 for EUR 100.00 billed USD 110.00 from a capable terminal, with a reference of its own. */
    const euros = async (answer: unknown) => {
      answerWith(answer);
      sequence += 1;
      const stan = String(880100 + sequence);
      const message = {
        ...template.iso.request.fields,
        '0': '0100',
        '2': await panOf(t, card.cardId),
        '4': '000000010000',
        '6': '000000011000',
        '49': '978',
        '51': '840',
        '11': stan,
        '37': `6000${stan}00`,
        '63': `VIS00000${`EUROS${stan}`.padEnd(16, '0')}1`,
      };
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const record = (await t.request({ url: `/v1/cards/transactions/${response.body.data.cardTransactionId as string}` })).body.data;
      return { fields: response.body.data.response as Record<string, string>, record };
    };

    // The whole of amountMinor: a full approval, the whole billing amount held.
    const whole = await euros({ responseCode: '00', approvedAmountMinor: 10000 });
    expect(whole.fields).toMatchObject({ '39': '00', '4': '000000010000', '6': '000000011000' });
    expect(whole.record).toMatchObject({ responseCode: '00', heldAmount: 110, decisionSource: 'CLIENT' });
    expect(receiver.requestsFor(whole.record.id).map((request) => request.parsed.data)).toEqual([expect.objectContaining({ amountMinor: 10000, billingAmountMinor: 11000, currency: 'EUR' })]);

    // Half of it: EUR 50.00, which is USD 55.00 at the message's rate; DE6 says what was approved, DE54 the original.
    const half = await euros({ responseCode: '00', approvedAmountMinor: 5000 });
    expect(half.fields).toMatchObject({ '39': '10', '4': '000000005000', '6': '000000005500', '54': '0057978C000000010000' });
    expect(half.record).toMatchObject({ responseCode: '10', heldAmount: 55, coopAuth: { clientResponseCode: '00' } });

    // More than the request (though less than the billing amount): the stand-in decides, as for any amount above the request.
    const above = await euros({ responseCode: '00', approvedAmountMinor: 10500 });
    expect(above.fields['39']).toBe('91');
    expect(above.record).toMatchObject({ decisionSource: 'STAND_IN', coopAuth: { standInReason: 'BAD_BODY' } });
    expect(above.record.coopAuth.detail).toContain('above the 10000 requested');

    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '134.00', RESERVED: '166.00' });

    // A partial approval that comes to the whole in the card's currency (EUR 99.99 of 100.00 billed
    // USD 1.00 is 1.00) is a full approval, and the delivery log says APPROVED, not PARTIAL.
    answerWith({ responseCode: '00', approvedAmountMinor: 9999 });
    sequence += 1;
    const stan = String(880100 + sequence);
    const wholeByRounding = await t.request({
      method: 'POST',
      url: '/v1/sandbox/iso8583',
      body: { format: 'json', message: { ...template.iso.request.fields, '0': '0100', '2': await panOf(t, card.cardId), '4': '000000010000', '6': '000000000100', '49': '978', '51': '840', '11': stan, '37': `6000${stan}00`, '63': `VIS00000${`EUROS${stan}`.padEnd(16, '0')}1` } },
    });
    expect(wholeByRounding.body.data.response).toMatchObject({ '39': '00', '4': '000000010000', '6': '000000000100' });
    const requestEvent = receiver.requestsFor(wholeByRounding.body.data.cardTransactionId as string)[0];
    if (!requestEvent) return expect.fail('the client was not asked');
    const delivery = (await deliveriesOf()).find((candidate) => candidate.eventId === requestEvent.parsed.id);
    expect(delivery.attempts[0].verdict).toBe('APPROVED');
  });

  it('a single-message purchase (0200) approved by the client is posted at once', async () => {
    answerWith({ responseCode: '00' });
    const card = await coopCard('50.00');
    const result = await send(t, `/v1/sandbox/cards/${card.cardId}/financial`, { amount: 20 });
    expect(result).toMatchObject({ responseCode: '00', decisionSource: 'CLIENT', record: { type: 'PURCHASE', status: 'COMPLETED', amount: 20 } });
    expect(receiver.requestsFor(result.cardTransactionId).map((request) => request.parsed.type)).toEqual(['COOP_AUTH_0200']);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '30.00', RESERVED: '0.00' });
  });

  it('an increment is asked too; its decline leaves the earlier hold as it was', async () => {
    answerWith({ responseCode: '00' });
    const card = await coopCard('100.00');
    const first = await authorize(t, card.cardId, { amount: 30 });
    answerWith({ responseCode: '51' });
    const increment = await onParent(t, first.parentCardTransactionId, 'increments', { amount: 10 });
    expect(increment).toMatchObject({ responseCode: '51', decisionSource: 'CLIENT', record: { status: 'FAILED', heldAmount: 30 } });
    expect(receiver.requestsFor(increment.cardTransactionId).map((request) => request.parsed.data.original)).toEqual([{ mti: '0100', stan: first.stan, rrn: first.rrn }]);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '30.00' });
  });
});

describe('the client declines or cannot approve', () => {
  it('any other code declines with that code: FAILED, no hold left', async () => {
    answerWith({ responseCode: '59', message: 'suspected fraud' });
    const card = await coopCard('100.00');
    const result = await authorize(t, card.cardId, { amount: 10 });
    expect(result).toMatchObject({ responseCode: '59', approvedAmount: 0, authCode: null, decisionSource: 'CLIENT' });
    await expectOutcome(result, '59', ['COOP_AUTH_0100', 'CARD_TRANSACTION_FAILED']);
    expect(result.record).toMatchObject({ status: 'FAILED', amount: 0, coopAuth: { clientResponseCode: '59', message: 'suspected fraud', standInReason: null } });
    await expectNoOpenHold(card, '100.00');
    const delivery = (await deliveriesOf()).find((candidate) => candidate.eventId === result.record.coopAuth.eventId);
    expect(delivery.attempts[0].verdict).toBe('DECLINED 59');
  });

  it('a partial approval where the terminal cannot take one, or the program does not allow it, declines "05"', async () => {
    answerWith({ responseCode: '00', approvedAmountMinor: 500 });
    const card = await coopCard('100.00');
    const incapable = await authorize(t, card.cardId, { amount: 10, partialApprovalCapable: false });
    expect(incapable).toMatchObject({ responseCode: '05', decisionSource: 'CLIENT' });
    await expectOutcome(incapable, '05', ['COOP_AUTH_0100', 'CARD_TRANSACTION_FAILED']);
    await expectNoOpenHold(card, '100.00');
    // The delivery log says why the client's approval became a decline.
    const delivery = (await deliveriesOf()).find((candidate) => candidate.eventId === incapable.record.coopAuth.eventId);
    expect(delivery.attempts[0].verdict).toBe('PARTIAL 500 not allowed (program or terminal): declined 05');

    await withEndpoint(async (client, other) => {
      other.answer = () => ({ body: { responseCode: '00', approvedAmountMinor: 500 } });
      await patchCoopProgram(client, { partialApprovalEnabled: false });
      const disabled = await coopCard('100.00', client);
      const result = await authorize(t, disabled.cardId, { amount: 10 }, client);
      expect(result).toMatchObject({ responseCode: '05', decisionSource: 'CLIENT' });
      expect(await balances(t, disabled.walletId, client)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    });
  });

  it('the system checks come first: a request that fails them never reaches the client', async () => {
    const card = await coopCard('10.00');
    const before = receiver.requests.length;
    expect((await authorize(t, card.cardId, { amount: 10.01 })).responseCode).toBe('51');
    await t.request({ method: 'PATCH', url: `/v1/cards/${card.cardId}`, body: { status: 'SUSPENDED' } });
    const suspended = await authorize(t, card.cardId, { amount: 1 });
    expect(suspended).toMatchObject({ responseCode: '57', decisionSource: 'SYSTEM' });
    expect((await authorize(t, card.cardId, { amount: 990.05 })).decisionSource).toBe('SYSTEM');
    expect(receiver.requests.length).toBe(before);
  });

  it('requests the client is not asked about: a refund authorization (processing code 20: nothing leaves the wallet) is approved by the system, a type not handled is declined 12', async () => {
    const card = await coopCard('10.00');
    const before = receiver.requests.length;
    const refund = await authorize(t, card.cardId, { amount: 25, processingCode: '200000' });
    expect(refund).toMatchObject({ responseCode: '00', decisionSource: 'SYSTEM' });
    expect(refund.record).toMatchObject({ type: 'REFUND', status: 'PENDING', coopAuth: null });
    expect((await authorize(t, card.cardId, { amount: 5, processingCode: '260000' })).responseCode).toBe('12');
    expect(receiver.requests.length).toBe(before);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '10.00', RESERVED: '0.00' });
  });
});

describe('the stand-in decides', () => {
  const cases: Array<[string, () => void, string, string]> = [
    ['a 500', () => answerWith({ responseCode: '00' }, { status: 500 }), 'NON_2XX', 'HTTP 500'],
    ['unreadable JSON', () => answerWith('{"responseCode": "00"'), 'BAD_BODY', 'not JSON'],
    [
      'a good answer longer than the 16 KiB read (said as such, not as "not JSON")',
      () => answerWith({ responseCode: '00', metadata: Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`k${index}`, 'x'.repeat(900)])) }),
      'BAD_BODY',
      'longer than 16384 bytes',
    ],
    ['a code of the wrong shape', () => answerWith({ responseCode: '0' }), 'BAD_BODY', 'responseCode'],
    ['approvedAmountMinor above the request', () => answerWith({ responseCode: '00', approvedAmountMinor: 1001 }), 'BAD_BODY', 'above'],
    ['approvedAmountMinor not an integer', () => answerWith({ responseCode: '00', approvedAmountMinor: 10.5 }), 'BAD_BODY', 'integer'],
  ];
  for (const [name, setUp, reason, detail] of cases) {
    it(`${name}: declined "91" by default (STAND_IN ${reason}), no hold left, logged as FAILED`, async () => {
      setUp();
      const card = await coopCard('100.00');
      const result = await authorize(t, card.cardId, { amount: 10 });
      expect(result).toMatchObject({ responseCode: '91', decisionSource: 'STAND_IN', record: { status: 'FAILED', coopAuth: { standInReason: reason } } });
      expect(result.record.coopAuth.detail).toContain(detail);
      await expectOutcome(result, '91', ['COOP_AUTH_0100', 'CARD_TRANSACTION_FAILED']);
      await expectNoOpenHold(card, '100.00');
      const delivery = (await deliveriesOf()).find((candidate) => candidate.eventId === result.record.coopAuth.eventId);
      expect(delivery).toMatchObject({ status: 'FAILED', attempts: [{ succeeded: false }] });
      expect(delivery.attempts[0].verdict).toContain(`STAND_IN ${reason}`);
    });
  }

  it('a decision request that failed is not retried, automatically or by hand (409)', async () => {
    answerWith({ responseCode: '00' }, { status: 500 });
    const card = await coopCard('100.00');
    const result = await authorize(t, card.cardId, { amount: 10 });
    const delivery = (await deliveriesOf()).find((candidate) => candidate.eventId === result.record.coopAuth.eventId);
    expect(delivery).toMatchObject({ status: 'FAILED', attemptCount: 1, nextAttemptAt: null });
    const retry = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${delivery.id as string}/retry` });
    expect(retry.status).toBe(409);
    expect(retry.body.code).toBe('CONFLICT');
  });

  it('nor by a replay of its window: neither the decision endpoint nor a "*" subscription is sent it again', async () => {
    await withEndpoint(async (client, endpoint) => {
      endpoint.answer = () => ({ body: { responseCode: '00' }, status: 500 });
      const everything = await t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: { name: 'Everything', url: 'http://127.0.0.1:9/all', subscribedEventTypes: ['*'] } });
      expect(everything.status).toBe(201);
      const card = await coopCard('100.00', client);
      // What the "*" subscription missed before the authorization (its own WEBHOOK_CREATED, …) is scheduled now.
      const before = await t.request({ method: 'POST', url: `/v1/webhooks/${everything.body.data.id as string}/replay`, key: client.key, body: { since: '2000-01-01T00:00:00Z' } });
      expect(before.status).toBe(200);
      const result = await authorize(t, card.cardId, { amount: 10 }, client);
      expect(result).toMatchObject({ responseCode: '91', decisionSource: 'STAND_IN' });
      endpoint.answer = () => ({ body: { responseCode: '00' } });
      const hooks = (await t.request({ url: '/v1/webhooks', key: client.key })).body.data as any[];
      for (const hook of hooks) {
        const replay = await t.request({ method: 'POST', url: `/v1/webhooks/${hook.id as string}/replay`, key: client.key, body: { since: '2000-01-01T00:00:00Z' } });
        expect(replay.status, JSON.stringify(replay.body)).toBe(200);
        expect(replay.body.data.scheduled, hook.name).toBe(0);
        const deliveries = (await t.request({ url: `/v1/webhooks/${hook.id as string}/deliveries?limit=100`, key: client.key })).body.data as any[];
        const decisionDeliveries = deliveries.filter((delivery) => delivery.eventType === 'COOP_AUTH_0100');
        expect(decisionDeliveries.map((delivery) => delivery.status), hook.name).toEqual(hook.name === 'Decisions' ? ['FAILED'] : []);
      }
    });
  });

  // A window of 1 s, not the 250 ms minimum: on a loaded machine the first transaction alone took
  // 288 ms of 250, so no request was sent (a flaky-test review, 2026-12-08).
  it('a timeout: the stand-in answers at timeoutMs without waiting for the client; the late answer changes nothing', async () => {
    await withEndpoint(async (client, slow) => {
      await patchCoopProgram(client, { timeoutMs: 1000 });
      slow.answer = () => ({ body: { responseCode: '00' }, delayMs: 1500 });
      const card = await coopCard('100.00', client);
      const result = await authorize(t, card.cardId, { amount: 10 }, client);
      expect(result).toMatchObject({ responseCode: '91', decisionSource: 'STAND_IN', record: { coopAuth: { standInReason: 'TIMEOUT', httpStatus: null } } });
      // The client had what was left of timeoutMs once the first transaction had run (coop-client.ts).
      const window = Number(/^timed out after (\d+) ms$/.exec(result.record.coopAuth.detail as string)?.[1]);
      expect(window).toBeGreaterThan(0);
      expect(window).toBeLessThanOrEqual(1000);
      expect(result.record.coopAuth.latencyMs).toBeGreaterThanOrEqual(window);
      await expectOutcome(result, '91', ['COOP_AUTH_0100', 'CARD_TRANSACTION_FAILED'], client);
      // Past the late answer.
      await new Promise((resolve) => setTimeout(resolve, 700));
      const after = await t.request({ url: `/v1/cards/transactions/${result.parentCardTransactionId as string}`, key: client.key });
      expect(after.body.data).toMatchObject({ status: 'FAILED', heldAmount: 0 });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    });
  });

  it('the late answer is logged (warning, with the event id) and ignored', async () => {
    const captured = await appWithLogCapture(t);
    await withEndpoint(async (client, slow) => {
      await patchCoopProgram(client, { timeoutMs: 1000 });
      slow.answer = () => ({ body: { responseCode: '00' }, delayMs: 1300 });
      const card = await coopCard('100.00', client);
      const response = await captured.app.inject({
        method: 'POST',
        url: `/v1/sandbox/cards/${card.cardId}/authorizations`,
        headers: { authorization: client.key, 'content-type': 'application/json' },
        payload: JSON.stringify({ amount: 10 }),
      });
      expect(response.statusCode).toBe(201);
      const eventId = response.json<any>().data.record.coopAuth.eventId as string;
      await vi.waitFor(() => expect(captured.logged()).toContain('arrived after the timeout'), { timeout: 5_000, interval: 50 });
      const line = captured
        .logged()
        .split('\n')
        .find((text) => text.includes('arrived after the timeout'));
      expect(line).toBeDefined();
      expect(JSON.parse(line ?? '{}')).toMatchObject({ level: 40, eventId, httpStatus: 200, timeoutMs: 1000 });
    }).finally(() => captured.close());
  });

  it('stand-in modes: APPROVE approves; APPROVE_UP_TO approves up to maxAmountMinor and declines "91" above', async () => {
    await withEndpoint(async (client, failing) => {
      failing.answer = () => ({ status: 503, body: 'down' });
      const card = await coopCard('100.00', client);
      await patchCoopProgram(client, { standIn: { mode: 'APPROVE', responseCode: '91', maxAmountMinor: null } });
      expect(await authorize(t, card.cardId, { amount: 10 }, client)).toMatchObject({ responseCode: '00', decisionSource: 'STAND_IN', record: { status: 'PENDING' } });
      await patchCoopProgram(client, { standIn: { mode: 'APPROVE_UP_TO', responseCode: '91', maxAmountMinor: 2000 } });
      expect((await authorize(t, card.cardId, { amount: 20 }, client)).responseCode).toBe('00');
      expect((await authorize(t, card.cardId, { amount: 20.01 }, client)).responseCode).toBe('91');
      await patchCoopProgram(client, { standIn: { mode: 'DECLINE', responseCode: '05', maxAmountMinor: null } });
      expect((await authorize(t, card.cardId, { amount: 1 }, client)).responseCode).toBe('05');
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '30.00' });
    });
  });

  it('no subscription for the decision type: the stand-in decides (NO_ENDPOINT), nothing is sent', async () => {
    const client = await t.newClient();
    const card = await coopCard('100.00', client);
    const result = await authorize(t, card.cardId, { amount: 10 }, client);
    expect(result).toMatchObject({ responseCode: '91', decisionSource: 'STAND_IN', record: { coopAuth: { standInReason: 'NO_ENDPOINT', webhookId: null, latencyMs: null } } });
    await expectNoOpenHold(card, '100.00', client);
  });
});

describe('nothing is held while the client decides', () => {
  it('a reversal during the call releases the reservation; the answer then finds the lifecycle closed and declines "91"', async () => {
    await withEndpoint(async (client, slow) => {
      const requestSeen = slow.holdAnswers({ responseCode: '00' }, 300);
      const card = await coopCard('100.00', client);
      const pending = authorize(t, card.cardId, { amount: 40 }, client);
      const request = await requestSeen;
      // The card and wallet are not locked: the reversal goes through while the client thinks.
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '60.00', RESERVED: '40.00' });
      const reversal = await onParent(t, request.parsed.data.parentCardTransactionId, 'reversals', {}, client);
      expect(reversal.responseCode).toBe('00');
      const result = await pending;
      expect(result).toMatchObject({ responseCode: '91', decisionSource: 'STAND_IN', record: { status: 'FAILED', coopAuth: { standInReason: 'LIFECYCLE_CLOSED' } } });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
    });
  });

  it('a reversal with DE63 whose DE90 names the waiting first request with the acquirer as zeros withdraws it too: the approval holds and posts nothing', async () => {
    // Until 2026-12-03 DE90's zeros named the first message only when it was stored under zeros: the
    // reversal undid nothing, and the approval then held or posted what the network had reversed (found by the coop model test).
    const { formatOriginalDataElements } = await import('../network/index.js');
    for (const mti of ['0100', '0200'] as const) {
      await withEndpoint(async (client, slow) => {
        answerWithFor(slow, { responseCode: '00' });
        const card = await coopCard('100.00', client);
        const template = await authorize(t, card.cardId, { amount: 0 }, client);
        const fields: Record<string, string> = { ...template.iso.request.fields, '0': mti, '2': await panOf(t, card.cardId), '4': '000000004000', '11': '004901', '37': '600000004901', '63': `VIS00000${'ZEROSFIRST'.padEnd(16, '0')}1` };
        const requestSeen = slow.holdAnswers({ responseCode: '00' }, 300);
        const pending = t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message: fields } });
        await requestSeen;
        const de90 = formatOriginalDataElements({ mti, stan: '004901', transmissionDateTime: fields['7'] ?? '', acquirerId: '00000000000' });
        const reversal = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message: { ...fields, '0': '0420', '11': '004902', '90': de90 } } });
        expect(reversal.body.data.response['39'], mti).toBe('00');
        expect((await pending).body.data.response['39'], mti).toBe('91');
        expect(await balances(t, card.walletId, client), mti).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
      });
    }
    await expectLedgerClean(t);
  });
});

describe('a reversal while the client decides', () => {
  /** A COOP card with an approved 0100 of 30.00 and an increment of 10.00 (STAN 004401) waiting for the answer `answer`. */
  /** `advanceSeconds`: the client's clock moves on by as much between the first 0100 and the increment. */
  async function incrementWaiting(client: TestClient, slow: CoopReceiver, answer: unknown, reference = true, advanceSeconds = 0) {
    answerWithFor(slow, { responseCode: '00' });
    const card = await coopCard('100.00', client);
    const first = await authorize(t, card.cardId, { amount: 30 }, client);
    const firstExpiry = Date.parse((await lifecycle(t, first.parentCardTransactionId, client)).expiresAt as string);
    if (advanceSeconds > 0) await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: advanceSeconds } });
    const requestSeen = slow.holdAnswers(answer, 300);
    const firstFields: Record<string, string> = { '0': '0100', ...first.iso.request.fields, '2': await panOf(t, card.cardId) };
    const fields: Record<string, string> = { ...firstFields, '4': '000000001000', '11': '004401', '37': '600000004401' };
    if (!reference) delete fields['63'];
    const pending = isoMessage(client, fields);
    await requestSeen;
    expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '60.00', RESERVED: '40.00' });
    return { card, parentId: first.parentCardTransactionId as string, fields, firstFields, firstExpiry, pending };
  }
  const isoMessage = async (client: TestClient, message: Record<string, string>) => {
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.data as { response: Record<string, string>; cardTransactionId: string | null };
  };
  async function reversalOf(client: TestClient, fields: Record<string, string>, stan: string, as: { mti?: string; keptMinor?: bigint } = {}) {
    const { formatOriginalDataElements, formatReplacementAmounts } = await import('../network/index.js');
    const de90 = formatOriginalDataElements({ mti: as.mti ?? fields['0'] ?? '', stan: fields['11'] ?? '', transmissionDateTime: fields['7'] ?? '', acquirerId: fields['32'] ?? '' });
    const kept: Record<string, string> = as.keptMinor === undefined ? {} : { '95': formatReplacementAmounts({ actualTransactionMinor: as.keptMinor }) };
    const answered = await isoMessage(client, { ...fields, '0': '0420', '11': stan, '90': de90, ...kept });
    return (await t.request({ url: `/v1/cards/transactions/${answered.cardTransactionId as string}`, key: client.key })).body.data;
  }

  it('naming an increment withdraws it: what it reserved is released, the late approval is declined 91 (LIFECYCLE_CLOSED) and the earlier hold stays; a second reversal undoes nothing', async () => {
    await withEndpoint(async (client, slow) => {
      const { card, parentId, fields, pending } = await incrementWaiting(client, slow, { responseCode: '00' });
      // Until 2026-12-03 the reversal found no record of the increment (it is written with the answer)
      // and released nothing; the approval then held the 10.00 the network had reversed.
      expect(await reversalOf(client, fields, '004402')).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 10, heldAmount: 30, reversesCardTransactionId: null });
      expect(await reversalOf(client, fields, '004403')).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 0, heldAmount: 30 });
      expect((await pending).response['39']).toBe('91');
      const records = (await lifecycle(t, parentId, client)).children as any[];
      expect(records.find((record) => record.stan === '004401')).toMatchObject({ type: 'PRE_AUTHORIZATION', status: 'FAILED', amount: 0, coopAuth: { standInReason: 'LIFECYCLE_CLOSED' } });
      expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'PENDING', heldAmount: 30 });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '30.00' });
      await expectLedgerClean(t);
    });
  });

  it('named as its stand-in\'s 0120, or without DE63 (found by DE90 alone), it is withdrawn all the same', async () => {
    for (const [name, reference, mti] of [['as 0120', true, '0120'], ['without DE63', false, '0100']] as const) {
      await withEndpoint(async (client, slow) => {
        const { card, fields, pending } = await incrementWaiting(client, slow, { responseCode: '00' }, reference);
        expect(await reversalOf(client, fields, '004402', { mti }), name).toMatchObject({ type: 'REVERSAL_ADVICE', amount: 10, orphan: false });
        expect((await pending).response['39'], name).toBe('91');
        expect(await balances(t, card.walletId, client), name).toMatchObject({ AVAILABLE: '70.00', RESERVED: '30.00' });
      });
    }
    await expectLedgerClean(t);
  });

  it('reversed in part (DE95), the increment keeps what stays reserved: the approval holds that, and a later reversal naming it releases it', async () => {
    await withEndpoint(async (client, slow) => {
      const { card, parentId, fields, pending } = await incrementWaiting(client, slow, { responseCode: '00' });
      expect(await reversalOf(client, fields, '004402', { keptMinor: 400n })).toMatchObject({ amount: 6, heldAmount: 34 });
      expect((await pending).response['39']).toBe('00');
      const increment = ((await lifecycle(t, parentId, client)).children as any[]).find((record) => record.stan === '004401');
      expect(increment).toMatchObject({ status: 'PENDING', amount: 4, heldAmount: 34 });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '66.00', RESERVED: '34.00' });
      expect(await reversalOf(client, fields, '004403')).toMatchObject({ amount: 4, heldAmount: 30, reversesCardTransactionId: increment.id });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '30.00' });
      await expectLedgerClean(t);
    });
  });

  it('the first 0100 reversed in part (DE95) while an increment waits: DE95 is taken against what the first holds, the reservation stays the increment\'s, and the answer applies to it alone', async () => {
    // Until 2026-12-03 DE95 was taken against the whole hold, the waiting 10.00 included: keeping 20
    // cut the hold to 20, and a decline then released all of it, the first authorization's 20 too (found by an audit).
    for (const [name, keptMinor, answer, released, held, available] of [
      ['keeps 20.00, then declined', 2000n, { responseCode: '05' }, 10, 20, '80.00'],
      ['keeps 20.00, then approved', 2000n, { responseCode: '00' }, 10, 30, '70.00'],
      ['keeps 35.00 (more than the first holds), then declined', 3500n, { responseCode: '05' }, 0, 30, '70.00'],
    ] as const) {
      await withEndpoint(async (client, slow) => {
        const { card, parentId, firstFields, pending } = await incrementWaiting(client, slow, answer);
        expect(await reversalOf(client, firstFields, '004402', { keptMinor }), name).toMatchObject({ type: 'REVERSAL_ADVICE', amount: released, heldAmount: 40 - released });
        expect((await pending).response['39'], name).toBe(answer.responseCode);
        expect(await lifecycle(t, parentId, client), name).toMatchObject({ status: 'PENDING', heldAmount: held });
        expect(await balances(t, card.walletId, client), name).toMatchObject({ AVAILABLE: available, RESERVED: `${held}.00` });
        // The records add up to what is held: the first 0100, the increment as answered, the reversal.
        const records = (await lifecycle(t, parentId, client)).children as any[];
        const increment = records.find((record) => record.stan === '004401');
        expect(30 + (increment?.amount as number) - released, name).toBe(held);
      });
    }
    await expectLedgerClean(t);
  });

  it('an increment the client declines, or a reversal withdraws, leaves the hold\'s expiry where the first 0100 set it; one the client approves moves it, as any approved increment', async () => {
    const day = 24 * 3600;
    for (const [name, answer, withdraw, expiresLater] of [
      ['declined', { responseCode: '05' }, false, false],
      ['withdrawn', { responseCode: '00' }, true, false],
      ['approved', { responseCode: '00' }, false, true],
    ] as const) {
      await withEndpoint(async (client, slow) => {
        const { parentId, fields, firstExpiry, pending } = await incrementWaiting(client, slow, answer, true, 2 * day);
        // Not moved while the client decides.
        expect(Date.parse((await lifecycle(t, parentId, client)).expiresAt as string), name).toBe(firstExpiry);
        if (withdraw) expect(await reversalOf(client, fields, '004402'), name).toMatchObject({ amount: 10 });
        await pending;
        const expiresAt = Date.parse((await lifecycle(t, parentId, client)).expiresAt as string);
        // Until 2026-12-03 the reservation moved it two days on (the increment's arrival plus the program's days), whatever the answer (found by an audit).
        expect(expiresAt - firstExpiry, name).toBe(expiresLater ? 2 * day * 1000 : 0);
        // Past the first expiry: the hold of a declined or withdrawn increment's lifecycle expires; the approved one's does not yet.
        await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 5 * day + 3600 } });
        expect(await lifecycle(t, parentId, client), name).toMatchObject(expiresLater ? { status: 'PENDING', heldAmount: 40 } : { heldAmount: 0 });
      });
    }
    await expectLedgerClean(t);
  });

  it('without DE63 and with DE90\'s acquirer as zeros, a reversal takes the request of its own RRN, then of its own acquirer, waiting or answered, before another terminal\'s waiting request', async () => {
    // Until 2026-12-03 the newest waiting request of any acquirer came first: the reversal meant for
    // one terminal's purchase cancelled another terminal's, whose approval was then declined 91 (found by an audit).
    for (const [name, firstAnsweredAtOnce] of [
      ['both waiting', false],
      ['its own already answered', true],
    ] as const) {
      await withEndpoint(async (client, slow) => {
        answerWithFor(slow, { responseCode: '00' });
        const card = await coopCard('100.00', client);
        const template = await authorize(t, card.cardId, { amount: 0 }, client);
        const base: Record<string, string> = { ...template.iso.request.fields, '0': '0100', '2': await panOf(t, card.cardId), '11': '004601' };
        const ours = { ...base, '4': '000000002000', '32': '111111', '37': '600000004601', '63': `VIS00000${'OURS'.padEnd(16, '0')}1` };
        const theirs = { ...base, '4': '000000003000', '32': '222222', '37': '600000004602', '63': `VIS00000${'THEIRS'.padEnd(16, '0')}1` };
        const ourAnswer = firstAnsweredAtOnce ? await isoMessage(client, ours) : undefined;
        const seenBefore = slow.requests.length;
        void slow.holdAnswers({ responseCode: '00' }, 600);
        const ourPending = firstAnsweredAtOnce ? undefined : isoMessage(client, ours);
        const theirPending = isoMessage(client, theirs);
        // Both requests (or theirs alone) with the client before the reversal is sent.
        while (slow.requests.length < seenBefore + (firstAnsweredAtOnce ? 1 : 2)) await new Promise((resolve) => setTimeout(resolve, 10));
        const { formatOriginalDataElements } = await import('../network/index.js');
        const de90 = formatOriginalDataElements({ mti: '0100', stan: '004601', transmissionDateTime: base['7'] ?? '', acquirerId: '00000000000' });
        const reversal: Record<string, string> = { ...ours, '0': '0420', '11': '004603', '90': de90 };
        delete reversal['63'];
        await isoMessage(client, reversal);
        const ourResult = ourAnswer ?? (await ourPending);
        const theirResult = await theirPending;
        expect(theirResult?.response['39'], name).toBe('00');
        const ourLifecycle = await lifecycle(t, (await t.request({ url: `/v1/cards/transactions/${ourResult?.cardTransactionId as string}`, key: client.key })).body.data.parentCardTransactionId, client);
        const theirLifecycle = await lifecycle(t, (await t.request({ url: `/v1/cards/transactions/${theirResult.cardTransactionId as string}`, key: client.key })).body.data.parentCardTransactionId, client);
        expect(ourLifecycle, name).toMatchObject({ status: 'CANCELLED', heldAmount: 0 });
        expect(theirLifecycle, name).toMatchObject({ status: 'PENDING', heldAmount: 30 });
        expect(await balances(t, card.walletId, client), name).toMatchObject({ AVAILABLE: '70.00', RESERVED: '30.00' });
      });
    }
    await expectLedgerClean(t);
  });

  it('without DE63 and with DE90\'s acquirer given, the waiting request of the reversal\'s RRN comes before another terminal\'s answered message with the same STAN, DE7 and acquirer', async () => {
    // Until 2026-12-03 DE90's exact match looked at answered messages only, and before any waiting
    // request: the other terminal's hold was released, and the approval then held what the network
    // had reversed (found by an audit).
    await withEndpoint(async (client, slow) => {
      answerWithFor(slow, { responseCode: '00' });
      const card = await coopCard('100.00', client);
      const template = await authorize(t, card.cardId, { amount: 0 }, client);
      const base: Record<string, string> = { ...template.iso.request.fields, '0': '0100', '2': await panOf(t, card.cardId), '11': '004701', '32': '111111' };
      const theirs = await isoMessage(client, { ...base, '4': '000000003000', '37': '600000004702', '63': `VIS00000${'THEIRS2'.padEnd(16, '0')}1` });
      expect(theirs.response['39']).toBe('00');
      const ours = { ...base, '4': '000000002000', '37': '600000004701', '63': `VIS00000${'OURS2'.padEnd(16, '0')}1` };
      const requestSeen = slow.holdAnswers({ responseCode: '00' }, 600);
      const ourPending = isoMessage(client, ours);
      await requestSeen;
      const { formatOriginalDataElements } = await import('../network/index.js');
      const reversal: Record<string, string> = { ...ours, '0': '0420', '11': '004703', '90': formatOriginalDataElements({ mti: '0100', stan: '004701', transmissionDateTime: base['7'] ?? '', acquirerId: '111111' }) };
      delete reversal['63'];
      await isoMessage(client, reversal);
      expect((await ourPending).response['39']).toBe('91');
      const parentOf = async (id: string | null) => (await t.request({ url: `/v1/cards/transactions/${id as string}`, key: client.key })).body.data.parentCardTransactionId as string;
      expect(await lifecycle(t, await parentOf(theirs.cardTransactionId), client)).toMatchObject({ status: 'PENDING', heldAmount: 30 });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '30.00' });
    });
    await expectLedgerClean(t);
  });

  it('the sandbox\'s /reversals and /completions on a lifecycle whose increment waits take what the answered messages hold, not the reservation', async () => {
    // Until 2026-12-03 they counted the reservation as held: a partial reversal of 10.00 sent DE95
    // 30.00 and released nothing, and a completion without amount posted the 10.00 never approved (found by an audit).
    await withEndpoint(async (client, slow) => {
      const { card, parentId, pending } = await incrementWaiting(client, slow, { responseCode: '05' });
      const reversed = await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${parentId}/reversals`, key: client.key, body: { amount: 10 } });
      expect(reversed.status, JSON.stringify(reversed.body)).toBe(201);
      expect(reversed.body.data).toMatchObject({ responseCode: '00' });
      expect((await pending).response['39']).toBe('05');
      expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'PENDING', heldAmount: 20 });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '80.00', RESERVED: '20.00' });
    });
    await withEndpoint(async (client, slow) => {
      const { card, parentId, pending } = await incrementWaiting(client, slow, { responseCode: '00' });
      const completed = await t.request({ method: 'POST', url: `/v1/sandbox/card-transactions/${parentId}/completions`, key: client.key, body: {} });
      expect(completed.status, JSON.stringify(completed.body)).toBe(201);
      expect((await pending).response['39']).toBe('91');
      expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'COMPLETED', heldAmount: 0, postedAmount: 30 });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '0.00' });
    });
    await expectLedgerClean(t);
  });

  it('a request taken by a reversal or an advice before its answer: a repeat sent meanwhile waits for that answer (91) instead of being decided anew; an advice without DE63 naming the request by DE90 lands on its lifecycle', async () => {
    // Until 2026-12-03 the request's mark went with the reversal or the advice: a repeat (0101, 0201)
    // was decided as a new request (the client asked again; a 0201 posted what the network had
    // reversed, a 0101 was approved as an increment), and an advice without DE63 opened a lifecycle
    // of its own beside the waiting request's (found by an audit).
    const { formatOriginalDataElements } = await import('../network/index.js');
    for (const [name, mti, follow, reference, zeros] of [
      ['0200 reversed, then its 0201', '0200', 'reversal', false, false],
      ['0100 advised (0120 with DE63), then its 0101', '0100', 'advice', true, false],
      ['0100 advised (0120 without DE63, by DE90), then its 0101', '0100', 'advice', false, false],
      // Until 2026-12-03 an advice whose DE90 sent the acquirer as zeros did not find the waiting request.
      ['0100 advised (0120 without DE63, by DE90 with the acquirer as zeros), then its 0101', '0100', 'advice', false, true],
    ] as const) {
      await withEndpoint(async (client, slow) => {
        answerWithFor(slow, { responseCode: '00' });
        const card = await coopCard('100.00', client);
        const template = await authorize(t, card.cardId, { amount: 0 }, client);
        const fields: Record<string, string> = { ...template.iso.request.fields, '0': mti, '2': await panOf(t, card.cardId), '4': '000000005000', '11': '004801', '37': '600000004801' };
        if (reference) fields['63'] = `VIS00000${'REPEAT'.padEnd(16, '0')}1`;
        else delete fields['63'];
        const requestSeen = slow.holdAnswers({ responseCode: '00' }, 600);
        const pending = isoMessage(client, fields);
        await requestSeen;
        const de90 = formatOriginalDataElements({ mti, stan: '004801', transmissionDateTime: fields['7'] ?? '', acquirerId: zeros ? '00000000000' : (fields['32'] ?? '') });
        if (follow === 'reversal') await isoMessage(client, { ...fields, '0': '0420', '11': '004802', '90': de90 });
        else expect((await isoMessage(client, { ...fields, '0': '0120', '4': '000000004000', '11': '004802', '90': de90 })).response['39'], name).toBe('00');
        const repeat = await isoMessage(client, { ...fields, '0': mti === '0200' ? '0201' : '0101' });
        const first = await pending;
        expect(first.response['39'], name).toBe('91');
        expect(repeat.response['39'], name).toBe('91');
        expect(slow.requests.filter((request) => request.parsed.data.cardTransactionId === first.cardTransactionId), name).toHaveLength(1);
        expect(await balances(t, card.walletId, client), name).toMatchObject(follow === 'reversal' ? { AVAILABLE: '100.00', RESERVED: '0.00' } : { AVAILABLE: '60.00', RESERVED: '40.00' });
        const records = (await t.request({ url: `/v1/cards/transactions?cardId=${card.cardId}`, key: client.key })).body.data as any[];
        // The request's lifecycle beside the template's: no second one opened by the repeat or the advice.
        expect(records, name).toHaveLength(2);
      });
    }
    await expectLedgerClean(t);
  });

  it('a first message reversed in part while the client decides: an approval applies within what is still held (a 0200 posts no more), a decline releases it (no 409)', async () => {
    for (const [name, mti, answer, available, reserved] of [
      ['0200 approved', '0200', { responseCode: '00' }, '70.00', '0.00'],
      ['0100 declined', '0100', { responseCode: '05' }, '100.00', '0.00'],
      ['0100 approved', '0100', { responseCode: '00' }, '70.00', '30.00'],
    ] as const) {
      await withEndpoint(async (client, slow) => {
        answerWithFor(slow, { responseCode: '00' });
        const card = await coopCard('100.00', client);
        const template = await authorize(t, card.cardId, { amount: 0 }, client);
        const requestSeen = slow.holdAnswers(answer, 300);
        const fields: Record<string, string> = { ...template.iso.request.fields, '0': mti, '2': await panOf(t, card.cardId), '4': '000000008000', '11': '004501', '37': '600000004501', '63': `VIS00000${name.replace(/[^A-Z0-9]/gi, '').padEnd(16, '0').slice(0, 16)}1` };
        const pending = isoMessage(client, fields);
        await requestSeen;
        expect(await reversalOf(client, fields, '004502', { keptMinor: 3000n }), name).toMatchObject({ amount: 50, heldAmount: 30 });
        const answered = await pending;
        expect(answered.response['39'], name).toBe(answer.responseCode);
        expect(await balances(t, card.walletId, client), name).toMatchObject({ AVAILABLE: available, RESERVED: reserved });
      });
    }
    await expectLedgerClean(t);
  });
});

describe('an advice while the client decides', () => {
  it.each([
    ['a decline', { responseCode: '05' }, 10],
    ['a partial approval', { responseCode: '10', approvedAmountMinor: 300 }, 4],
  ])('the advice (0120, the network standing in) sets the hold; the late answer (%s) finds it decided, declines "91" and moves nothing', async (_name, answer, advised) => {
    await withEndpoint(async (client, slow) => {
      const requestSeen = slow.holdAnswers(answer, 300);
      const card = await coopCard('100.00', client);
      const pending = authorize(t, card.cardId, { amount: 5 }, client);
      const request = await requestSeen;
      const parentId: string = request.parsed.data.parentCardTransactionId;
      const advice = await onParent(t, parentId, 'advices', { amount: advised }, client);
      expect(advice).toMatchObject({ responseCode: '00', record: { heldAmount: advised } });
      const result = await pending;
      expect(result).toMatchObject({ responseCode: '91', decisionSource: 'STAND_IN', record: { status: 'FAILED', amount: 0, heldAmount: advised, coopAuth: { standInReason: 'LIFECYCLE_CLOSED' } } });
      expect(await lifecycle(t, parentId, client)).toMatchObject({ status: 'PENDING', heldAmount: advised });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: (100 - advised).toFixed(2), RESERVED: advised.toFixed(2) });
    });
  });
});

describe('limits while the client decides', () => {
  it('a request waiting for the answer counts against the daily limits of the card', async () => {
    await withEndpoint(async (client, slow) => {
      const program = (await cardPrograms(t, client))['Cooperative Debit'];
      const limits = await t.request({ method: 'PATCH', url: `/v1/cards/programs/${program.id as string}`, key: client.key, body: { limits: { perTransactionMinor: 5_000, dailyMinor: 5_000, dailyCount: 5 } } });
      expect(limits.status).toBe(200);
      const requestSeen = slow.holdAnswers({ responseCode: '00' }, 300);
      const card = await coopCard('100.00', client);
      const first = authorize(t, card.cardId, { amount: 40 }, client);
      await requestSeen;
      // 40.00 waits for the answer: 40.00 + 20.00 is above the day's 50.00.
      const second = await authorize(t, card.cardId, { amount: 20 }, client);
      expect(second).toMatchObject({ responseCode: '61', decisionSource: 'SYSTEM' });
      expect((await first).responseCode).toBe('00');
    });
  });
});

describe('repeats, advices and isolation', () => {
  it('a repeat (0101) reuses the first decision without asking the client again: a new record under the same lifecycle', async () => {
    answerWith({ responseCode: '00' });
    const card = await coopCard('100.00');
    const first = await authorize(t, card.cardId, { amount: 5 });
    const asked = receiver.requests.length;
    const message = { ...first.iso.request.fields, '0': '0101', '2': await panOf(t, card.cardId) };
    const repeat = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', body: { format: 'json', message } });
    expect(repeat.status).toBe(200);
    expect(repeat.body.data.response['39']).toBe('00');
    expect(repeat.body.data.cardTransactionId).not.toBe(first.cardTransactionId);
    const record = await t.request({ url: `/v1/cards/transactions/${repeat.body.data.cardTransactionId as string}` });
    expect(record.body.data).toMatchObject({
      parentCardTransactionId: first.parentCardTransactionId,
      mti: '0101',
      decisionSource: 'CLIENT',
      responseCode: '00',
      repeatOfCardTransactionId: first.cardTransactionId,
    });
    expect(receiver.requests.length).toBe(asked);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '95.00', RESERVED: '5.00' });
  });

  it.each([
    ['an 0100 with DE63', '0100', true],
    ['an 0100 without DE63', '0100', false],
    ['an 0200 without DE63', '0200', false],
  ])('%s sent again while the first sending waits: declined 57 on its lifecycle without asking; a repeat sent after it still gets the first sending\'s answer', async (_name, mti, withDe63) => {
    // Until 2026-12-05 a duplicate without DE63 was decided as a new request (the client asked again,
    // the amount held or posted twice), and a repeat after a duplicate's 57 got that 57 (found by an audit).
    await withEndpoint(async (client, slow) => {
      const card = await coopCard('100.00', client);
      const template = await authorize(t, card.cardId, { amount: 0 }, client);
      const send = async (message: Record<string, string>) => {
        const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message } });
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        return response.body.data as { response: Record<string, string>; cardTransactionId: string };
      };
      const { '63': _reference, ...base } = template.iso.request.fields as Record<string, string>;
      const fields: Record<string, string> = {
        ...base,
        '0': mti,
        '2': await panOf(t, card.cardId),
        '3': '000000',
        '4': '000000001200',
        '11': '005301',
        '37': '600000005301',
        ...(withDe63 ? { '63': `VIS00000${'DUPLICATE53'.padEnd(16, '0')}1` } : {}),
      };
      const requestSeen = slow.holdAnswers({ responseCode: '00', authCode: 'F1RST0' }, 600);
      const first = send(fields);
      await requestSeen;
      const duplicate = await send(fields);
      expect(duplicate.response['39']).toBe('57');
      const repeat = send({ ...fields, '0': mti === '0200' ? '0201' : '0101' });
      const [firstAnswer, repeatAnswer] = await Promise.all([first, repeat]);
      expect(firstAnswer.response).toMatchObject({ '39': '00', '38': 'F1RST0' });
      expect(repeatAnswer.response).toMatchObject({ '39': '00', '38': 'F1RST0' });
      expect(slow.requests).toHaveLength(1);
      const recordOf = async (id: string) => (await t.request({ url: `/v1/cards/transactions/${id}`, key: client.key })).body.data;
      const parent = (await recordOf(firstAnswer.cardTransactionId)).parentCardTransactionId as string;
      expect(await recordOf(duplicate.cardTransactionId)).toMatchObject({ parentCardTransactionId: parent, status: 'FAILED', responseCode: '57' });
      expect(await recordOf(repeatAnswer.cardTransactionId)).toMatchObject({ parentCardTransactionId: parent, repeatOfCardTransactionId: firstAnswer.cardTransactionId });
      const lifecycles = await t.request({ url: `/v1/cards/transactions?cardId=${card.cardId}`, key: client.key });
      expect((lifecycles.body.data as any[]).map((group) => group.parentCardTransactionId).sort()).toEqual([parent, template.parentCardTransactionId].sort());
      expect(await balances(t, card.walletId, client)).toMatchObject(mti === '0200' ? { AVAILABLE: '88.00', RESERVED: '0.00' } : { AVAILABLE: '88.00', RESERVED: '12.00' });
    });
  });

  it('a repeat (0101) that arrives while the first sending waits for the client gets the same answer once it is known, without a second question', async () => {
    await withEndpoint(async (client, slow) => {
      const requestSeen = slow.holdAnswers({ responseCode: '00', authCode: 'R3P3AT' }, 300);
      const card = await coopCard('100.00', client);
      const first = authorize(t, card.cardId, { amount: 12 }, client);
      const request = await requestSeen;
      const message = { ...request.parsed.data.raw.fields, '0': '0101', '2': await panOf(t, card.cardId) };
      const repeat = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message } });
      const original = await first;
      expect(repeat.status).toBe(200);
      expect(repeat.body.data.response).toMatchObject({ '0': '0110', '39': '00', '38': 'R3P3AT' });
      const record = await t.request({ url: `/v1/cards/transactions/${repeat.body.data.cardTransactionId as string}`, key: client.key });
      expect(record.body.data).toMatchObject({ parentCardTransactionId: original.parentCardTransactionId, mti: '0101', repeatOfCardTransactionId: original.cardTransactionId });
      expect(slow.requests).toHaveLength(1);
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '88.00', RESERVED: '12.00' });
    });
  });

  /**
   * What a crash between the two transactions leaves (docs/cards.md): the first transaction ran
   * (the amount reserved, the lifecycle marked as waiting, the request recorded) and nothing else.
   */
  async function firstTransactionOnly(client: TestClient, cardId: string, amountMinor: bigint, networkDataRef: string | null) {
    const context: RequestContext = { clientId: client.id, traceId: `crash-${crypto.randomUUID()}`, now: t.clock.now() };
    const message = buildSandboxMessage(await cardOfMessage(t, cardId), context.now, { mti: '0100', processingCode: '000000', amountMinor, networkDataRef: networkDataRef ?? newNetworkDataRef() });
    if (networkDataRef === null) delete message.fields['63'];
    const step = await withTransaction(t.deps.db, (tx) => processCardMessage(tx, context, t.deps, message));
    if (!isCoopDecisionStep(step)) throw new Error('expected a decision request');
    return { message, pending: step.pendingDecision, context };
  }

  describe.each([
    ['with DE63', true],
    ['without DE63', false],
  ])('a repeat whose first sending never got its answer (the process died), %s', (_name, withDe63) => {
    it('waits, then the stand-in decides the first sending on its own lifecycle and reservation, and the repeat gets that answer, without asking', async () => {
      // Until 2026-12-05 the repeat was decided as a request of its own: with DE63 declined 57 (an
      // increment while a reservation waits), without it approved on a second lifecycle that held the
      // amount again beside the first reservation (found by an audit).
      await withEndpoint(async (client, endpoint) => {
        await patchCoopProgram(client, { timeoutMs: 250, standIn: { mode: 'APPROVE', responseCode: '91', maxAmountMinor: null } });
        const card = await coopCard('100.00', client);
        const crashed = await firstTransactionOnly(client, card.cardId, 300n, withDe63 ? newNetworkDataRef() : null);
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '97.00', RESERVED: '3.00' });
        const repeat = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message: { ...crashed.message.fields, '0': '0101' } } });
        expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
        expect(repeat.body.data.response['39']).toBe('00');
        const record = await t.request({ url: `/v1/cards/transactions/${repeat.body.data.cardTransactionId as string}`, key: client.key });
        expect(record.body.data).toMatchObject({
          mti: '0101',
          parentCardTransactionId: crashed.pending.swipeId,
          repeatOfCardTransactionId: crashed.pending.childId,
          decisionSource: 'STAND_IN',
          coopAuth: { standInReason: 'TIMEOUT' },
        });
        const first = await t.request({ url: `/v1/cards/transactions/${crashed.pending.childId}`, key: client.key });
        expect(first.body.data).toMatchObject({ mti: '0100', status: 'PENDING', heldAmount: 3, decisionSource: 'STAND_IN', coopAuth: { standInReason: 'TIMEOUT' } });
        expect(endpoint.requests).toHaveLength(0);
        // One lifecycle, one hold.
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '97.00', RESERVED: '3.00' });
        const lifecycles = await t.request({ url: `/v1/cards/transactions?cardId=${card.cardId}`, key: client.key });
        expect((lifecycles.body.data as any[]).map((group) => group.parentCardTransactionId)).toEqual([crashed.pending.swipeId]);

        // The first process's second transaction, should it come after all (slow, not dead): the answer
        // given stands, nothing moves, nothing fails.
        const late = await withTransaction(t.deps.db, (tx) =>
          finishCoopDecision(tx, { ...crashed.context, now: t.clock.now() }, crashed.pending, { ok: true, httpStatus: 200, latencyMs: 5, responseBody: JSON.stringify({ responseCode: '05' }), error: null }, t.clock.now()),
        );
        expect(late.outcome).toMatchObject({ responseCode: '00', replayed: true });
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '97.00', RESERVED: '3.00' });
      });
    });

    it('the stand-in declining releases the first sending\'s reservation', async () => {
      await withEndpoint(async (client, endpoint) => {
        await patchCoopProgram(client, { timeoutMs: 250 });
        const card = await coopCard('100.00', client);
        const crashed = await firstTransactionOnly(client, card.cardId, 300n, withDe63 ? newNetworkDataRef() : null);
        const repeat = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message: { ...crashed.message.fields, '0': '0101' } } });
        expect(repeat.status).toBe(200);
        expect(repeat.body.data.response['39']).toBe('91');
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
        const parent = await t.request({ url: `/v1/cards/transactions/${crashed.pending.swipeId}`, key: client.key });
        expect(parent.body.data.status).toBe('FAILED');
        expect(endpoint.requests).toHaveLength(0);
      });
    });
  });

  describe('a request whose second transaction never came and that no repeat decided: its timer (card.coop-decision) decides it', () => {
    // Until 2026-12-07 nothing decided it: the reservation stayed until the network acted or the hold
    // expired, a mark withdrawn by a reversal stayed for good, and the COOP_AUTH_0100 event named a
    // record that never existed (found by an audit that killed servers under load).
    const advance = async (client: TestClient, seconds: number) => {
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.data as { ran: { kind: string; id: string }[]; failed: unknown[] };
    };
    const markOf = async (client: TestClient, swipeId: string) =>
      (await sql<{ coop_pending: unknown }>`SELECT coop_pending FROM card_swipes WHERE client_id = ${client.id} AND id = ${swipeId}`.execute(t.deps.db)).rows[0]?.coop_pending;
    const decisionTimers = async (client: TestClient) =>
      (await sql<{ subject_id: string }>`SELECT subject_id FROM timers WHERE client_id = ${client.id} AND kind = 'card.coop-decision'`.execute(t.deps.db)).rows.map((row) => row.subject_id);

    it('the stand-in approving keeps the reservation as the hold, at timeoutMs + 30 s and not before; the record its COOP_AUTH_0100 names exists; a late second transaction changes nothing', async () => {
      await withEndpoint(async (client, endpoint) => {
        await patchCoopProgram(client, { timeoutMs: 250, standIn: { mode: 'APPROVE', responseCode: '91', maxAmountMinor: null } });
        const card = await coopCard('100.00', client);
        const crashed = await firstTransactionOnly(client, card.cardId, 300n, newNetworkDataRef());
        const { swipeId, childId } = crashed.pending;
        expect(await decisionTimers(client)).toEqual([swipeId]);
        const record = () => t.request({ url: `/v1/cards/transactions/${childId}`, key: client.key });
        expect((await advance(client, 30)).ran).toEqual([]);
        expect((await record()).status).toBe(404);
        expect(await markOf(client, swipeId)).not.toBeNull();

        const run = await advance(client, 1);
        expect(run).toMatchObject({ ran: [{ kind: 'card.coop-decision', id: swipeId }], failed: [] });
        // Nothing of the exchange with the client was kept: no webhook, status or latency (as docs/cards.md says).
        expect((await record()).body.data).toMatchObject({
          mti: '0100',
          status: 'PENDING',
          heldAmount: 3,
          decisionSource: 'STAND_IN',
          coopAuth: { standInReason: 'TIMEOUT', webhookId: null, httpStatus: null, latencyMs: null },
        });
        expect(await markOf(client, swipeId)).toBeNull();
        expect(await decisionTimers(client)).toEqual([]);
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '97.00', RESERVED: '3.00' });
        const events = (await eventsOfType('COOP_AUTH_0100', client)).filter((event) => event.data.parentCardTransactionId === swipeId);
        expect(events.map((event) => event.data.cardTransactionId)).toEqual([childId]);
        expect((await cardEventsOf(t, swipeId, client)).map((event) => event.type)).toEqual(['COOP_AUTH_0100', 'CARD_TRANSACTION_PENDING']);
        expect(endpoint.requests).toHaveLength(0);

        // The first process's second transaction, should it come after all (slow, or the clock advanced
        // past the deadline while the client answered): the stand-in's answer stands, and the client's
        // answer is in the delivery log as ignored (until 2026-12-07 it left no trace; found by an audit).
        expect(crashed.pending.endpoint).not.toBeNull();
        const late = await withTransaction(t.deps.db, (tx) =>
          finishCoopDecision(tx, { ...crashed.context, now: t.clock.now() }, crashed.pending, { ok: true, httpStatus: 200, latencyMs: 5, responseBody: JSON.stringify({ responseCode: '05' }), error: null }, t.clock.now()),
        );
        expect(late.outcome).toMatchObject({ responseCode: '00', replayed: true });
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '97.00', RESERVED: '3.00' });
        const delivery = (await deliveriesOf(client)).find((candidate) => candidate.eventId === crashed.pending.event.id);
        expect(delivery).toMatchObject({ attemptCount: 1, attempts: [{ succeeded: false, httpStatus: 200, verdict: 'IGNORED: decided already by the stand-in (at a repeat that waited in vain, or at its deadline)' }] });
        await expectLedgerClean(t);
      });
    });

    it('the stand-in declining releases the reservation and fails the lifecycle', async () => {
      await withEndpoint(async (client) => {
        await patchCoopProgram(client, { timeoutMs: 250 });
        const card = await coopCard('100.00', client);
        const crashed = await firstTransactionOnly(client, card.cardId, 300n, null);
        expect((await advance(client, 31)).ran).toMatchObject([{ kind: 'card.coop-decision', id: crashed.pending.swipeId }]);
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
        const parent = await t.request({ url: `/v1/cards/transactions/${crashed.pending.swipeId}`, key: client.key });
        expect(parent.body.data).toMatchObject({ status: 'FAILED' });
        const first = await t.request({ url: `/v1/cards/transactions/${crashed.pending.childId}`, key: client.key });
        expect(first.body.data).toMatchObject({ status: 'FAILED', responseCode: '91', decisionSource: 'STAND_IN', coopAuth: { standInReason: 'TIMEOUT' } });
        expect(await markOf(client, crashed.pending.swipeId)).toBeNull();
        await expectLedgerClean(t);
      });
    });

    it('on a lifecycle a reversal closed meanwhile, its record is FAILED 91 (LIFECYCLE_CLOSED), nothing moves, and the withdrawn mark goes', async () => {
      await withEndpoint(async (client) => {
        await patchCoopProgram(client, { timeoutMs: 250, standIn: { mode: 'APPROVE', responseCode: '91', maxAmountMinor: null } });
        const card = await coopCard('100.00', client);
        const crashed = await firstTransactionOnly(client, card.cardId, 300n, newNetworkDataRef());
        const fields = crashed.message.fields;
        const de90 = formatOriginalDataElements({ mti: '0100', stan: fields['11'] ?? '', transmissionDateTime: fields['7'] ?? '', acquirerId: fields['32'] ?? '' });
        const reversal = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message: { ...fields, '0': '0420', '11': '007702', '90': de90 } } });
        expect(reversal.status, JSON.stringify(reversal.body)).toBe(200);
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
        expect(await markOf(client, crashed.pending.swipeId)).toMatchObject({ withdrawn: true });

        expect((await advance(client, 31)).ran).toMatchObject([{ kind: 'card.coop-decision', id: crashed.pending.swipeId }]);
        const first = await t.request({ url: `/v1/cards/transactions/${crashed.pending.childId}`, key: client.key });
        expect(first.body.data).toMatchObject({ mti: '0100', status: 'FAILED', responseCode: '91', amount: 0, decisionSource: 'STAND_IN', coopAuth: { standInReason: 'LIFECYCLE_CLOSED' } });
        expect(await markOf(client, crashed.pending.swipeId)).toBeNull();
        const parent = await t.request({ url: `/v1/cards/transactions/${crashed.pending.swipeId}`, key: client.key });
        expect(parent.body.data.status).toBe('CANCELLED');
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
        await expectLedgerClean(t);
      });
    });

    it('migration 0051 gives the marks written before it their timer, due 34 s after their last change; one without a deadline is decided when it runs', async () => {
      await withEndpoint(async (client) => {
        await patchCoopProgram(client, { timeoutMs: 250 });
        const card = await coopCard('100.00', client);
        const crashed = await firstTransactionOnly(client, card.cardId, 300n, newNetworkDataRef());
        const { swipeId, childId } = crashed.pending;
        // As a mark was before: no timer, no deadline.
        await sql`DELETE FROM timers WHERE client_id = ${client.id} AND kind = 'card.coop-decision'`.execute(t.deps.db);
        await sql`UPDATE card_swipes SET coop_pending = coop_pending - 'decideBy' WHERE client_id = ${client.id} AND id = ${swipeId}`.execute(t.deps.db);
        const migration = fs.readFileSync(path.join(import.meta.dirname, '../../../../migrations/0051_card_coop_decision_timers.sql'), 'utf8');
        await sql.raw(migration).execute(t.deps.db);
        expect(await decisionTimers(client)).toEqual([swipeId]);
        expect((await advance(client, 33)).ran).toEqual([]);
        expect((await advance(client, 1)).ran).toMatchObject([{ kind: 'card.coop-decision', id: swipeId }]);
        const first = await t.request({ url: `/v1/cards/transactions/${childId}`, key: client.key });
        expect(first.body.data).toMatchObject({ status: 'FAILED', responseCode: '91', coopAuth: { standInReason: 'TIMEOUT' } });
        expect(await markOf(client, swipeId)).toBeNull();
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
      });
    });

    it('an answer applied as usual removes the timer', async () => {
      await withEndpoint(async (client, endpoint) => {
        answerWithFor(endpoint, { responseCode: '00' });
        const card = await coopCard('100.00', client);
        const result = await authorize(t, card.cardId, { amount: 4 }, client);
        expect(result.responseCode).toBe('00');
        expect(await decisionTimers(client)).toEqual([]);
        expect((await advance(client, 3600)).ran).toEqual([]);
        expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '96.00', RESERVED: '4.00' });
      });
    });
  });

  it("an advice's original{} is the message DE90 and its match name (for a reversal, the one it undid), none for one that opened its own lifecycle; an 0120's approvedAmountMinor is what it held", async () => {
    // Until 2026-12-05 original{} was always the lifecycle's first message (the message itself when
    // it opened a lifecycle of its own), and an 0120 gave the advised amount (found by an audit).
    await withEndpoint(async (client) => {
      const card = await coopCard('40.00', client);
      const { formatOriginalDataElements } = await import('../network/index.js');
      const send = async (message: Record<string, string>) => {
        const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', key: client.key, body: { format: 'json', message } });
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        return response.body.data as { response: Record<string, string>; cardTransactionId: string };
      };
      const first = await authorize(t, card.cardId, { amount: 10 }, client);
      const base: Record<string, string> = { ...first.iso.request.fields, '0': '0100', '2': await panOf(t, card.cardId) };
      const de90 = (stan: string) => formatOriginalDataElements({ mti: '0100', stan, transmissionDateTime: base['7'] ?? '', acquirerId: base['32'] ?? '' });
      const reference = (name: string) => `VIS00000${name.padEnd(16, '0')}1`;
      const increment = await send({ ...base, '4': '000000000500', '11': '005101', '37': '600000005101' });
      expect(increment.response['39']).toBe('00');
      const ofIncrement = await send({ ...base, '0': '0420', '4': '000000000500', '11': '005102', '37': '600000005102', '90': de90('005101') });
      const orphan = await send({ ...base, '0': '0420', '11': '005103', '37': '600000005103', '63': reference('ORPHAN51'), '90': de90('005199') });
      const forced = await send({ ...base, '0': '0220', '4': '000000000100', '11': '005104', '37': '600000005104', '63': reference('FORCED51') });
      const advice = await send({ ...base, '0': '0120', '4': '000000005000', '11': '005105', '37': '600000005105', '63': reference('ADVICE51') });
      const completion = await onParent(t, first.parentCardTransactionId, 'completions', { amount: 10 }, client);

      const eventOf = async (type: string, cardTransactionId: string) => {
        const found = (await eventsOfType(type, client)).find((event) => event.data.cardTransactionId === cardTransactionId);
        if (!found) return expect.fail(`no ${type} for ${cardTransactionId}`);
        return found.data;
      };
      expect((await eventOf('COOP_AUTH_0420', ofIncrement.cardTransactionId)).original).toEqual({ mti: '0100', stan: '005101', rrn: '600000005101' });
      expect((await eventOf('COOP_AUTH_0420', orphan.cardTransactionId)).original).toEqual({ mti: '0100', stan: '005199' });
      expect((await eventOf('COOP_AUTH_0220', forced.cardTransactionId)).original).toBeUndefined();
      expect((await eventOf('COOP_AUTH_0220', completion.cardTransactionId)).original).toEqual({ mti: '0100', stan: first.stan, rrn: first.rrn });
      // 40.00 less the first hold (10.00) and the force post (1.00): 29.00 of the 50.00 advised could be held.
      expect(await eventOf('COOP_AUTH_0120', advice.cardTransactionId)).toMatchObject({ amountMinor: 5000, approvedAmountMinor: 2900, responseCode: '00' });
      expect(await balances(t, card.walletId, client)).toMatchObject({ AVAILABLE: '0.00', RESERVED: '29.00' });
    });
  });

  it('advices, completions and reversals go out as COOP_AUTH_0120 / 0220 / 0420 events, correlated by networkDataRef', async () => {
    answerWith({ responseCode: '00' });
    const card = await coopCard('100.00');
    const auth = await authorize(t, card.cardId, { amount: 30 });
    const advice = await onParent(t, auth.parentCardTransactionId, 'advices', { amount: 30 });
    const advices = (await eventsOfType('COOP_AUTH_0120')).filter((event) => event.data.parentCardTransactionId === auth.parentCardTransactionId);
    expect(advices.map((event) => event.data)).toMatchObject([{ mti: '0120', networkDataRef: auth.networkDataRef, cardTransactionId: advice.cardTransactionId, responseCode: '00' }]);
    const completion = await onParent(t, auth.parentCardTransactionId, 'completions', { amount: 30 });
    const second = await authorize(t, card.cardId, { amount: 10 });
    await onParent(t, second.parentCardTransactionId, 'reversals');
    const completions = (await eventsOfType('COOP_AUTH_0220')).filter((event) => event.data.parentCardTransactionId === auth.parentCardTransactionId);
    expect(completions).toHaveLength(1);
    expect(completions[0].data).toMatchObject({ mti: '0220', networkDataRef: auth.networkDataRef, cardTransactionId: completion.cardTransactionId, responseCode: '00', approvedAmountMinor: 3000 });
    expect(completions[0].data.rrn).not.toBe(auth.rrn);
    const reversals = (await eventsOfType('COOP_AUTH_0420')).filter((event) => event.data.parentCardTransactionId === second.parentCardTransactionId);
    expect(reversals).toHaveLength(1);
    expect(reversals[0].data.networkDataRef).toBe(second.networkDataRef);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '70.00', RESERVED: '0.00' });
  });

  it('a decision type has one endpoint: a second active subscription listing it is refused (409), a paused one is not', async () => {
    const second = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'Second', url: receiver.url('/second'), subscribedEventTypes: ['COOP_AUTH_0200', 'CARD_TRANSACTION_PENDING'] } });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: 'COOP_AUTH_ENDPOINT_EXISTS', details: [{ field: 'subscribedEventTypes' }] });
    const paused = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'Standby', url: receiver.url('/standby'), subscribedEventTypes: ['COOP_AUTH_0100'], active: false } });
    expect(paused.status).toBe(201);
    const activate = await t.request({ method: 'PATCH', url: `/v1/webhooks/${paused.body.data.id as string}`, body: { active: true } });
    expect(activate.status).toBe(409);
    const advices = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'Advices', url: receiver.url('/advices'), subscribedEventTypes: ['COOP_AUTH_0120', 'COOP_AUTH_0220'] } });
    expect(advices.status).toBe(201);
    const widen = await t.request({ method: 'PATCH', url: `/v1/webhooks/${advices.body.data.id as string}`, body: { subscribedEventTypes: ['COOP_AUTH_0120', 'COOP_AUTH_0100'] } });
    expect(widen.status).toBe(409);
    for (const id of [paused.body.data.id, advices.body.data.id] as string[]) expect((await t.request({ method: 'DELETE', url: `/v1/webhooks/${id}` })).status).toBe(200);
  });

  it("two clients' endpoints never see each other's requests", async () => {
    await withEndpoint(async (client, theirs) => {
      answerWith({ responseCode: '00' });
      const mine = await coopCard('100.00');
      const other = await coopCard('100.00', client);
      const a = await authorize(t, mine.cardId, { amount: 1 });
      const b = await authorize(t, other.cardId, { amount: 1 }, client);
      expect(receiver.requestsFor(a.cardTransactionId)).toHaveLength(1);
      expect(receiver.requestsFor(b.cardTransactionId)).toHaveLength(0);
      expect(theirs.requests.map((request) => request.parsed.data.cardId)).toEqual([other.cardId]);
    });
  });

  it('an Idempotency-Key replays the answer without a second reservation or a second question', async () => {
    answerWith({ responseCode: '00' });
    const card = await coopCard('100.00');
    const asked = receiver.requests.length;
    const body = { amount: 7 };
    const first = await t.request({ method: 'POST', url: `/v1/sandbox/cards/${card.cardId}/authorizations`, body, idempotencyKey: `coop-${card.cardId}` });
    const again = await t.request({ method: 'POST', url: `/v1/sandbox/cards/${card.cardId}/authorizations`, body, idempotencyKey: `coop-${card.cardId}` });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data.cardTransactionId).toBe(first.body.data.cardTransactionId);
    expect(receiver.requests.length).toBe(asked + 1);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '93.00', RESERVED: '7.00' });
  });

  it('the same Idempotency-Key while the first request waits for the client: 409 IDEMPOTENCY_REQUEST_IN_PROGRESS, then the stored answer', async () => {
    await withEndpoint(async (client, slow) => {
      const requestSeen = slow.holdAnswers({ responseCode: '00' }, 300);
      const card = await coopCard('100.00', client);
      const send = () => t.request({ method: 'POST', url: `/v1/sandbox/cards/${card.cardId}/authorizations`, key: client.key, body: { amount: 4 }, idempotencyKey: 'waiting-key' });
      const first = send();
      await requestSeen;
      const during = await send();
      expect(during.status).toBe(409);
      expect(during.body.code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
      expect((await first).status).toBe(201);
      const after = await send();
      expect(after.status).toBe(201);
      expect(after.headers['idempotent-replayed']).toBe('true');
      expect(slow.requests).toHaveLength(1);
    });
  });

  it('a snapshot taken while a keyed request waits for the client restores (its in-progress record is restored as it was)', async () => {
    await withEndpoint(async (client, slow) => {
      let answer: (given: { body: unknown }) => void = () => undefined;
      const later = new Promise<{ body: unknown }>((resolve) => (answer = resolve));
      const seen = new Promise<void>((resolve) => {
        slow.answer = () => {
          resolve();
          return { body: null, later };
        };
      });
      // The longest window: the snapshot must be taken while the request still waits (with the
      // default 2 s a busy machine took longer once, and the snapshot held the stand-in's answer).
      await patchCoopProgram(client, { timeoutMs: 4000 });
      const card = await coopCard('100.00', client);
      const first = t.request({ method: 'POST', url: `/v1/sandbox/cards/${card.cardId}/authorizations`, key: client.key, body: { amount: 4 }, idempotencyKey: 'snapshot-key' });
      await seen;
      const snapshot = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'decision waiting' } });
      expect(snapshot.status, JSON.stringify(snapshot.body)).toBe(201);
      answer({ body: { responseCode: '00' } });
      expect((await first).status).toBe(201);
      const restore = await t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${snapshot.body.data.id}/restore`, key: client.key, body: {} });
      expect(restore.status, JSON.stringify(restore.body)).toBe(200);
      const record = await sql<{ status_code: number; body: string }>`
        SELECT status_code, response_body::text AS body FROM idempotency_keys WHERE client_id = ${client.id} AND key = 'snapshot-key'`.execute(t.deps.db);
      expect(record.rows).toEqual([{ status_code: 102, body: 'null' }]);
      await expectLedgerClean(t);
    });
  });

  it('an in-progress record left by a process that died between the two transactions runs anew after a minute', async () => {
    const card = await coopCard('100.00');
    answerWith({ responseCode: '00' });
    const url = `/v1/sandbox/cards/${card.cardId}/authorizations`;
    const body = { amount: 6 };
    const hash = crypto.createHash('sha256').update(`POST ${url}\n${JSON.stringify(body)}`).digest();
    const stale = new Date(t.deps.clock.now().getTime() - 61_000);
    await sql`
      INSERT INTO idempotency_keys (client_id, key, request_hash, method, path, status_code, response_body, response_sealed, created_at)
      VALUES (${t.clientA.id}, 'died-key', ${hash}, 'POST', ${url}, 102, 'null', false, ${stale})
    `.execute(t.deps.db);
    const response = await t.request({ method: 'POST', url, body, idempotencyKey: 'died-key' });
    expect(response.status).toBe(201);
    expect(response.headers['idempotent-replayed']).toBeUndefined();
    expect(response.body.data.responseCode).toBe('00');
  });

  it('metrics: decision latency by who decided, stand-ins by reason', async () => {
    const metrics = await t.request({ url: '/metrics', key: null });
    expect(metrics.status).toBe(200);
    const text = String(metrics.body);
    expect(text).toMatch(/openbaas_coop_auth_decision_seconds_count\{source="CLIENT"\} [1-9]/);
    expect(text).toMatch(/openbaas_coop_auth_decision_seconds_count\{source="STAND_IN"\} [1-9]/);
    for (const reason of ['NON_2XX', 'BAD_BODY', 'TIMEOUT', 'NO_ENDPOINT', 'LIFECYCLE_CLOSED']) {
      expect(text).toMatch(new RegExp(`openbaas_coop_auth_stand_ins_total\\{reason="${reason}"\\} [1-9]`));
    }
  });

  it('the ledger stays balanced through every decision above', async () => {
    await expectLedgerClean(t);
  });
});

describe('a decision request that waited for its card behind another process\'s message (2026-12-06)', () => {
  it('is dated after the lifecycle\'s last change, and its record is written at that moment (the id phase 1 reserved) after the answer', async () => {
    let client: TestClient | undefined;
    let card: FundedCard | undefined;
    let auth: any;
    await withEndpoint(async (withClient, endpoint) => {
      client = withClient;
      card = await coopCard('100.00', client);
      answerWithFor(endpoint, { responseCode: '00' });
      auth = await authorize(t, card.cardId, { amount: 10 }, client);
    });
    if (!client || !card) throw new Error('no client');
    expect(auth.responseCode).toBe('00');
    // The increment's answer below comes from the stand-in (nothing is sent: the exchange is null).
    const { networkDataRefOf } = await import('../network/index.js');
    // An increment whose moment was read 2 s before the authorization's change, as one that
    // arrived first on another process and waited for the card's lock has.
    const context: RequestContext = { clientId: client.id, traceId: `late-${crypto.randomUUID()}`, now: new Date(Date.parse(auth.record.createdAt) - 2000) };
    const message = buildSandboxMessage(await cardOfMessage(t, card.cardId), context.now, { mti: '0100', processingCode: '000000', amountMinor: 500n, networkDataRef: networkDataRefOf(auth.iso.request.fields['63']) ?? '' });
    const step = await withTransaction(t.deps.db, (tx) => processCardMessage(tx, context, t.deps, message));
    if (!isCoopDecisionStep(step)) throw new Error('expected a decision request');
    const { outcome } = await withTransaction(t.deps.db, (tx) => finishCoopDecision(tx, context, step.pendingDecision, null, context.now));
    expect(outcome.record).toMatchObject({ id: step.pendingDecision.childId, parentCardTransactionId: auth.parentCardTransactionId, type: 'PRE_AUTHORIZATION' });
    expect(Date.parse(outcome.record?.createdAt ?? '')).toBeGreaterThan(Date.parse(auth.record.createdAt));
    const children = (await lifecycle(t, auth.parentCardTransactionId, client)).children as { id: string; createdAt: string }[];
    expect(children.map((child) => child.id)).toEqual([auth.cardTransactionId, outcome.record?.id]);
    expect(children.map((child) => child.createdAt)).toEqual([...children.map((child) => child.createdAt)].sort());
    await expectLedgerClean(t);
  });
});

describe('the echo tool (POST /v1/sandbox/coop-auth/echo)', () => {
  it('sends a signed sample 0100 and answers what came back and what the processor would have done; nothing is recorded', async () => {
    answerWith({ responseCode: '00', approvedAmountMinor: 700 });
    const card = await coopCard('100.00');
    const eventsBefore = (await eventsOfType('COOP_AUTH_0100')).length;
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/coop-auth/echo', body: { cardId: card.cardId, amount: 12.5 } });
    expect(response.status).toBe(200);
    const echo = response.body.data;
    expect(echo).toMatchObject({
      timeoutMs: 2000,
      // availableMinor as a real request carries it: the card's funds (until 2026-12-07 left out; found by an audit).
      request: { type: 'COOP_AUTH_0100', data: { echo: true, amountMinor: 1250, cardId: card.cardId, mti: '0100', availableMinor: 10000 } },
      answer: { httpStatus: 200, error: null },
      outcome: { decisionSource: 'CLIENT', responseCode: '10', approvedAmountMinor: 700, standInReason: null, verdict: 'PARTIAL 700' },
    });
    const sent = receiver.requests.find((candidate) => candidate.parsed.id === echo.request.id);
    if (!sent) return expect.fail('the endpoint did not receive the sample');
    expect(verifyWebhook(secret, sent).data).toMatchObject({ echo: true });
    expect((await eventsOfType('COOP_AUTH_0100')).length).toBe(eventsBefore);
    expect(await balances(t, card.walletId)).toMatchObject({ AVAILABLE: '100.00', RESERVED: '0.00' });
  });

  it('without a card it sends a sample card; a bad answer shows the stand-in and why', async () => {
    answerWith('not json');
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/coop-auth/echo', body: {} });
    expect(response.status).toBe(200);
    expect(response.body.data.request.data).toMatchObject({ cardReferenceId: 'SAMPLE', amountMinor: 1000, availableMinor: 100000 });
    expect(response.body.data.request.data).not.toHaveProperty('cardId');
    expect(response.body.data.outcome).toMatchObject({ decisionSource: 'STAND_IN', responseCode: '91', approvedAmountMinor: 0, standInReason: 'BAD_BODY' });
  });

  it('no subscription lists COOP_AUTH_0100: 409 COOP_AUTH_ENDPOINT_MISSING; a number for amount only', async () => {
    const client = await t.newClient();
    const missing = await t.request({ method: 'POST', url: '/v1/sandbox/coop-auth/echo', key: client.key, body: {} });
    expect(missing.status).toBe(409);
    expect(missing.body.code).toBe('COOP_AUTH_ENDPOINT_MISSING');
    const text = await t.request({ method: 'POST', url: '/v1/sandbox/coop-auth/echo', body: { amount: '10.00' } });
    expect(text.status).toBe(400);
    expect(text.body.details[0].field).toBe('amount');
  });

  it('a card of a STANDARD program: 422 CARD_PROGRAM_MISMATCH naming cardId (nobody would be asked), nothing sent', async () => {
    const card = await fundedCard(t, '10.00');
    const before = receiver.requests.length;
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/coop-auth/echo', body: { cardId: card.cardId } });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ code: 'CARD_PROGRAM_MISMATCH', details: [{ field: 'cardId' }] });
    expect(receiver.requests.length).toBe(before);
  });
});


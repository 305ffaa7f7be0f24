import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { closedPortUrl, verifyEveryDelivery, verifyWebhook, WebhookReceiver } from '../../../test/webhook-receiver.js';

let t: TestContext;
let receiver: WebhookReceiver;
const missingId = '0195a3c2-7a10-7c4e-9d8a-3f1e2b4c5d6e';
const secrets = new Map<string, string[]>();

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MS: '10000', WEBHOOK_SECRET_OVERLAP_MS: '60000' } });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

async function createWebhook(body: Record<string, unknown> = {}, key?: string) {
  const response = await t.request({
    method: 'POST',
    url: '/v1/webhooks',
    body: { name: 'Main', url: receiver.url(), subscribedEventTypes: ['CUSTOMER_CREATED'], ...body },
    ...(key === undefined ? {} : { key }),
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  secrets.set(response.body.data.id, [response.body.data.secret]);
  return response.body.data;
}

async function eventsOf(type: string) {
  const response = await t.request({ url: `/v1/events?type=${type}&limit=200` });
  return response.body.data as Array<{ id: string; type: string; data: Record<string, unknown> }>;
}

describe('201', () => {
  it('creates a subscription and returns its whsec_ secret once', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { 'x-trace-id': 'trace-create-1' },
      body: { name: 'Ledger sync', url: receiver.url(), subscribedEventTypes: ['BANK_DEPOSIT_TRANSACTION_COMPLETED', 'CUSTOMER_CREATED'] },
    });
    expect(response.status).toBe(201);
    const created = response.body.data;
    expect(created).toMatchObject({
      name: 'Ledger sync',
      url: receiver.url(),
      subscribedEventTypes: ['CUSTOMER_CREATED', 'BANK_DEPOSIT_TRANSACTION_COMPLETED'],
      active: true,
      deletedAt: null,
      createdAt: '2026-03-01T12:00:00.000Z',
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const read = await t.request({ url: `/v1/webhooks/${created.id}` });
    expect(read.status).toBe(200);
    expect(read.body.data.secret).toBeUndefined();

    const events = await eventsOf('WEBHOOK_CREATED');
    const event = events.find((entry) => entry.data.webhookId === created.id);
    expect(event?.data).toEqual({ webhookId: created.id, traceId: 'trace-create-1' });
  });

  it('can create a paused subscription', async () => {
    const created = await createWebhook({ active: false });
    expect(created.active).toBe(false);
  });
});

describe('200', () => {
  it('lists subscriptions newest first, without deleted ones unless asked', async () => {
    const client = await t.newClient('Lister');
    const first = await createWebhook({ name: 'first' }, client.key);
    t.clock.advance(1);
    const second = await createWebhook({ name: 'second' }, client.key);
    await t.request({ method: 'DELETE', url: `/v1/webhooks/${first.id}`, key: client.key });

    const listed = await t.request({ url: '/v1/webhooks', key: client.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).toEqual([second.id]);
    expect(listed.body.pagination).toEqual({ totalResults: 1, totalResultsExact: true, hasMoreResults: false, nextStartAfterId: null });

    const all = await t.request({ url: '/v1/webhooks?includeDeleted=true', key: client.key });
    expect(all.body.data.map((entry: { id: string }) => entry.id)).toEqual([second.id, first.id]);
    expect(all.body.data.every((entry: Record<string, unknown>) => entry.secret === undefined)).toBe(true);
  });

  it('PATCH changes name, url, event types and active, and records WEBHOOK_UPDATED', async () => {
    const created = await createWebhook();
    const response = await t.request({
      method: 'PATCH',
      url: `/v1/webhooks/${created.id}`,
      body: { name: 'Renamed', url: receiver.url('/other'), subscribedEventTypes: ['CARD_TRANSACTION_PENDING'], active: false },
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      id: created.id,
      name: 'Renamed',
      url: receiver.url('/other'),
      subscribedEventTypes: ['CARD_TRANSACTION_PENDING'],
      active: false,
    });
    const events = await eventsOf('WEBHOOK_UPDATED');
    expect(events.some((event) => event.data.webhookId === created.id)).toBe(true);
  });

  it('DELETE is a soft delete: the record stays readable with deletedAt; deleting again changes nothing', async () => {
    const created = await createWebhook();
    t.clock.advance(1000);
    const deleted = await t.request({ method: 'DELETE', url: `/v1/webhooks/${created.id}` });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ id: created.id, active: false, deletedAt: t.clock.now().toISOString() });

    const read = await t.request({ url: `/v1/webhooks/${created.id}` });
    expect(read.body.data.deletedAt).toBe(t.clock.now().toISOString());

    const again = await t.request({ method: 'DELETE', url: `/v1/webhooks/${created.id}` });
    expect(again.status).toBe(200);
    expect(again.body.message).toBe('Webhook was already deleted');
    const events = (await eventsOf('WEBHOOK_DELETED')).filter((event) => event.data.webhookId === created.id);
    expect(events).toHaveLength(1);
  });

  it('rotate-secret returns a new secret once and keeps the previous one signing for the overlap', async () => {
    const created = await createWebhook();
    const rotated = await t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/rotate-secret` });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(created.secret);
    expect(rotated.body.data.secretRotatedAt).toBe(t.clock.now().toISOString());
    expect(rotated.body.data.previousSecretExpiresAt).toBe(new Date(t.clock.now().getTime() + 60_000).toISOString());
  });

  it('test sends a signed WEBHOOK_TEST event, reports the outcome and logs it', async () => {
    const created = await createWebhook({ subscribedEventTypes: ['LTV_LIQUIDATED'] });
    const before = receiver.requests.length;
    const response = await t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/test`, headers: { 'x-trace-id': 'trace-test-1' } });
    expect(response.status).toBe(200);
    expect(response.body.message).toBe('Test event delivered');
    const delivery = response.body.data;
    expect(delivery).toMatchObject({ webhookId: created.id, eventType: 'WEBHOOK_TEST', test: true, status: 'DELIVERED', attemptCount: 1 });
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ attempt: 1, succeeded: true, httpStatus: 200, responseBody: 'ok', error: null }),
    ]);

    expect(receiver.requests.length).toBe(before + 1);
    const received = receiver.requests[receiver.requests.length - 1];
    if (!received) throw new Error('nothing received');
    const body = verifyWebhook(created.secret, received);
    expect(body).toEqual({
      id: delivery.eventId,
      type: 'WEBHOOK_TEST',
      createdAt: t.clock.now().toISOString(),
      data: { webhookId: created.id, test: true, traceId: 'trace-test-1' },
    });
    expect(received.headers['openbaas-attempt']).toBe('1');
    expect(received.headers['openbaas-delivery-id']).toBe(delivery.id);

    const log = await t.request({ url: `/v1/webhooks/${created.id}/deliveries` });
    expect(log.body.data).toEqual([delivery]);
    const events = await t.request({ url: `/v1/events/${delivery.eventId}` });
    expect(events.status).toBe(404);
  });

  it('test dates its delivery finished when its attempt ended, not when it began', async () => {
    const created = await createWebhook();
    receiver.delayMs = 300;
    try {
      const response = await t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/test` });
      const delivery = response.body.data;
      const attempt = delivery.attempts[0];
      expect(attempt.latencyMs).toBeGreaterThanOrEqual(300);
      const ended = new Date(attempt.attemptedAt).getTime() + attempt.latencyMs;
      expect([delivery.completedAt, delivery.updatedAt]).toEqual([new Date(ended).toISOString(), new Date(ended).toISOString()]);
    } finally {
      receiver.delayMs = 0;
    }
  });

  it('test reports a receiver that cannot be reached', async () => {
    const created = await createWebhook({ url: await closedPortUrl() });
    const response = await t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/test` });
    expect(response.status).toBe(200);
    expect(response.body.message).toBe('Test event not delivered');
    expect(response.body.data.status).toBe('FAILED');
    expect(response.body.data.attempts[0]).toMatchObject({ succeeded: false, httpStatus: null, error: 'connection refused' });
  });

  it('a replayed test request (same Idempotency-Key) answers again without sending again', async () => {
    const created = await createWebhook();
    const before = receiver.requests.length;
    const first = await t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/test`, idempotencyKey: 'test-once' });
    const second = await t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/test`, idempotencyKey: 'test-once' });
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(receiver.requests.length).toBe(before + 1);
  });

  it('two test requests with one Idempotency-Key at once send one test event: the other waits its turn (409) or replays it', async () => {
    const created = await createWebhook();
    const before = receiver.requests.length;
    receiver.delayMs = 300;
    try {
      const answers = await Promise.all(
        [0, 1].map(() => t.request({ method: 'POST', url: `/v1/webhooks/${created.id as string}/test`, idempotencyKey: 'test-concurrent' })),
      );
      expect(receiver.requests.length).toBe(before + 1);
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses[0]).toBe(200);
      if (statuses[1] === 409) expect(answers.find((answer) => answer.status === 409)?.body.code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
      else expect(answers.some((answer) => answer.headers['idempotent-replayed'] === 'true')).toBe(true);
      // Once the first has its answer, the key replays it.
      const later = await t.request({ method: 'POST', url: `/v1/webhooks/${created.id as string}/test`, idempotencyKey: 'test-concurrent' });
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(later.body.data.eventId).toBe(answers.find((answer) => answer.status === 200)?.body.data.eventId);
      const log = await t.request({ url: `/v1/webhooks/${created.id as string}/deliveries?eventType=WEBHOOK_TEST` });
      expect(log.body.data).toHaveLength(1);
    } finally {
      receiver.delayMs = 0;
    }
  });
});

describe('400', () => {
  it('GET /v1/events with a type that does not exist: one detail naming `type` and every event type', async () => {
    // Until 2026-12-03 each event type was a detail of its own, cut at 20 (found by an audit).
    const { eventTypes } = await import('./event-types.js');
    const response = await t.request({ url: '/v1/events?type=NOT_A_THING' });
    expect(response.status).toBe(400);
    expect(response.body.details).toHaveLength(1);
    expect(response.body.details[0].field).toBe('type');
    for (const type of eventTypes) expect(response.body.details[0].message).toContain(`"${type}"`);
    // A legacy name is pointed at its replacement, as in a subscription's event types and the deliveries' filter.
    const legacy = await t.request({ url: '/v1/events?type=VIRTUAL_INTERNAL_TRANSACTION_SUCCEEDED' });
    expect(legacy.status).toBe(400);
    expect(legacy.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'type', message: 'VIRTUAL_INTERNAL_TRANSACTION_SUCCEEDED was renamed INTERNAL_TRANSACTION_COMPLETED; filter by INTERNAL_TRANSACTION_COMPLETED' }] });
  });

  // Until 2026-12-07 these refusals were stored under the key, and the corrected request answered
  // 422 IDEMPOTENCY_KEY_REUSED (found by an audit; docs/api-design.md).
  it('a refused URL or event type is not stored under its Idempotency-Key: the corrected request runs with it, once', async () => {
    const bad = { name: 'keyed', url: receiver.url(), subscribedEventTypes: ['NOT_A_THING'] };
    const first = await t.request({ method: 'POST', url: '/v1/webhooks', body: bad, idempotencyKey: 'webhook-refused' });
    expect(first.status).toBe(400);
    expect(first.body.code).toBe('UNKNOWN_EVENT_TYPE');
    const again = await t.request({ method: 'POST', url: '/v1/webhooks', body: bad, idempotencyKey: 'webhook-refused' });
    expect(again.status).toBe(400);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const corrected = { ...bad, subscribedEventTypes: ['CUSTOMER_CREATED'] };
    const other = await t.request({ method: 'POST', url: '/v1/webhooks', body: corrected, idempotencyKey: 'webhook-refused' });
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    const replayed = await t.request({ method: 'POST', url: '/v1/webhooks', body: corrected, idempotencyKey: 'webhook-refused' });
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body.data.id).toBe(other.body.data.id);

    const created = await createWebhook();
    const badPatch = await t.request({ method: 'PATCH', url: `/v1/webhooks/${created.id as string}`, body: { url: 'ftp://x/' }, idempotencyKey: 'webhook-patch-refused' });
    expect(badPatch.status).toBe(400);
    const renamed = await t.request({ method: 'PATCH', url: `/v1/webhooks/${created.id as string}`, body: { name: 'renamed' }, idempotencyKey: 'webhook-patch-refused' });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect((await t.request({ url: `/v1/webhooks/${created.id as string}` })).body.data.name).toBe('renamed');
  });

  it('an unknown event type is named', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/webhooks',
      body: { name: 'x', url: receiver.url(), subscribedEventTypes: ['CUSTOMER_CREATED', 'NOT_A_THING'] },
    });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('UNKNOWN_EVENT_TYPE');
    expect(response.body.details).toEqual([
      { field: 'subscribedEventTypes[1]', message: expect.stringContaining('NOT_A_THING is not an event type') },
    ]);
  });

  it('a renamed legacy event name is refused with its replacement', async () => {
    const response = await t.request({
      method: 'PATCH',
      url: `/v1/webhooks/${(await createWebhook()).id}`,
      body: { subscribedEventTypes: ['DEPOSIT_TRANSACTION_SUCCEEDED'] },
    });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('UNKNOWN_EVENT_TYPE');
    expect(response.body.details[0]).toEqual({
      field: 'subscribedEventTypes[0]',
      message: 'DEPOSIT_TRANSACTION_SUCCEEDED was renamed BANK_DEPOSIT_TRANSACTION_COMPLETED; subscribe to BANK_DEPOSIT_TRANSACTION_COMPLETED',
    });
  });

  it.each([
    ['ftp://example.com/hooks', 'must use http or https'],
    ['example.com/hooks', 'must be an absolute URL such as https://example.com/webhooks'],
    ['https://user:secret@example.com/hooks', 'must not contain credentials (user:password@)'],
    ['https://example.com/hooks#part', 'must not contain a fragment (#...)'],
    // What a URL parser would repair is refused rather than stored as typed.
    ['http:///x', 'must be an absolute URL such as https://example.com/webhooks (scheme, "://", then the host)'],
    ['http:127.0.0.1/x', 'must be an absolute URL such as https://example.com/webhooks (scheme, "://", then the host)'],
    [' http://127.0.0.1/x', 'must not contain spaces, control characters or backslashes'],
    ['http:\\\\127.0.0.1\\x', 'must not contain spaces, control characters or backslashes'],
    ['http://127.0.0.1/a b', 'must not contain spaces, control characters or backslashes'],
    ['http://127.0.0.1:4190/#', 'must not contain a fragment (#...)'],
    ['http://127.0.0.1:4190/x?y=1#', 'must not contain a fragment (#...)'],
    ['http://:@127.0.0.1:4190/', 'must not contain credentials (user:password@)'],
    ['http://@127.0.0.1:4190/', 'must not contain credentials (user:password@)'],
    ['http://exam\u00adple.com/x', 'must write its host as it is called: example.com (the URL parser reads "exam\u00adple.com" so)'],
    ['http://\uff11\uff12\uff17.0.0.1:4190/fw', 'must write its host as it is called: 127.0.0.1:4190 (the URL parser reads "\uff11\uff12\uff17.0.0.1:4190" so)'],
    ['http://%31%32%37.0.0.1:4190/pct', 'must write its host as it is called: 127.0.0.1:4190 (the URL parser reads "%31%32%37.0.0.1:4190" so)'],
    ['http://127.1:4190/', 'must write its host as it is called: 127.0.0.1:4190 (the URL parser reads "127.1:4190" so)'],
    // Host names no DNS lookup can answer (the URL parser takes them).
    ['http://a..b.com/x', 'has an empty label in its host name a..b.com (two dots in a row, or a leading dot)'],
    ['http://-a.com/x', 'has a label that starts or ends with a hyphen in its host name (-a); no DNS name does'],
    ['http://a-.example.com/x', 'has a label that starts or ends with a hyphen in its host name (a-); no DNS name does'],
    [`http://${'a'.repeat(64)}.com/x`, 'has a label of 64 characters in its host name; a DNS label has at most 63'],
    ["http://a!b.example.com/x", 'has a character other than a letter, digit, hyphen or underscore in its host name (a!b); no DNS name does'],
    ['http://ex~ample.com/x', 'has a character other than a letter, digit, hyphen or underscore in its host name (ex~ample); no DNS name does'],
    [`http://${Array.from({ length: 5 }, () => 'b'.repeat(60)).join('.')}.com/x`, 'has a host name of 308 characters; a DNS name has at most 253'],
    // Invisible or direction-changing characters in the path or query: the URL shown would read otherwise than the one called.
    ['http://127.0.0.1:4190/hooks\u202Ekcab', 'contains characters that are not allowed (U+202E); control characters (U+0000 to U+001F, U+007F to U+009F), line breaks, invisible formatting characters (Unicode category Cf, such as U+202E or U+200B) and Unicode noncharacters (U+FDD0 to U+FDEF, and U+FFFE and U+FFFF in every plane) are refused'],
    ['http://127.0.0.1:4190/a?b=\u200Bc', 'contains characters that are not allowed (U+200B); control characters (U+0000 to U+001F, U+007F to U+009F), line breaks, invisible formatting characters (Unicode category Cf, such as U+202E or U+200B) and Unicode noncharacters (U+FDD0 to U+FDEF, and U+FFFE and U+FFFF in every plane) are refused'],
  ])('url %s is refused', async (url, message) => {
    const response = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'x', url, subscribedEventTypes: ['CUSTOMER_CREATED'] } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(response.body.details).toEqual([{ field: 'url', message }]);
  });

  it.each(['https://Example.COM/hooks', 'https://example.com:443/hooks', 'http://127.0.0.1:80/x', 'https://example.com:8443/hooks?x=1', 'http://[::1]:4190/x', 'http://my_receiver:8080/hooks', 'https://example.com./hooks', `https://${'a'.repeat(63)}.com/x`])(
    'url %s, whose host is written as it is called, is taken as typed',
    async (url) => {
      const response = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'x', url, subscribedEventTypes: ['CUSTOMER_CREATED'], active: false } });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body.data.url).toBe(url);
    },
  );

  it.each([
    [{ url: 'http://127.0.0.1/x', subscribedEventTypes: ['CUSTOMER_CREATED'] }, 'name', 'is required'],
    [{ name: 'x', url: 'http://127.0.0.1/x', subscribedEventTypes: [] }, 'subscribedEventTypes', 'must NOT have fewer than 1 items'],
    [{ name: 'x', url: 'http://127.0.0.1/x', subscribedEventTypes: ['CUSTOMER_CREATED'], secret: 'whsec_x' }, 'secret', 'is not a known field'],
    [{ name: 5, url: 'http://127.0.0.1/x', subscribedEventTypes: ['CUSTOMER_CREATED'] }, 'name', 'must be string'],
    [{ name: 'x', url: 'http://127.0.0.1/x', subscribedEventTypes: ['CUSTOMER_CREATED'], active: 'yes' }, 'active', 'must be boolean'],
  ])('body %j is refused naming %s', async (body, field, message) => {
    const response = await t.request({ method: 'POST', url: '/v1/webhooks', body });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(response.body.details).toContainEqual({ field, message });
  });

  it('repeated event types are refused', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/webhooks',
      body: { name: 'x', url: receiver.url(), subscribedEventTypes: ['CUSTOMER_CREATED', 'CUSTOMER_CREATED'] },
    });
    expect(response.status).toBe(400);
    expect(response.body.details[0].field).toBe('subscribedEventTypes');
  });

  it('an empty PATCH is refused', async () => {
    const response = await t.request({ method: 'PATCH', url: `/v1/webhooks/${(await createWebhook()).id}`, body: {} });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
  });

  it('an unknown deliveries filter is refused', async () => {
    const created = await createWebhook();
    const response = await t.request({ url: `/v1/webhooks/${created.id}/deliveries?status=DONE` });
    expect(response.status).toBe(400);
    expect(response.body.details[0].field).toBe('status');
    // An event type that does not exist (or in the wrong case) is reported, not matched against nothing.
    for (const eventType of ['FOO', 'customer_created']) {
      const unknown = await t.request({ url: `/v1/webhooks/${created.id}/deliveries?eventType=${eventType}` });
      expect(unknown.status).toBe(400);
      expect(unknown.body.details[0].field).toBe('eventType');
    }
    for (const eventType of ['CUSTOMER_CREATED', 'WEBHOOK_TEST']) {
      expect((await t.request({ url: `/v1/webhooks/${created.id}/deliveries?eventType=${eventType}` })).status).toBe(200);
    }
    // A legacy name is pointed at its replacement, as in a subscription's event types.
    const legacy = await t.request({ url: `/v1/webhooks/${created.id}/deliveries?eventType=DEPOSIT_TRANSACTION_SUCCEEDED` });
    expect(legacy.status).toBe(400);
    expect(legacy.body.details).toEqual([{ field: 'eventType', message: 'DEPOSIT_TRANSACTION_SUCCEEDED was renamed BANK_DEPOSIT_TRANSACTION_COMPLETED; filter by BANK_DEPOSIT_TRANSACTION_COMPLETED' }]);
  });

  it('a name of nothing but white space is refused, on create and on update', async () => {
    const created = await createWebhook();
    for (const [method, url] of [['POST', '/v1/webhooks'], ['PATCH', `/v1/webhooks/${created.id}`]] as const) {
      const body = method === 'POST' ? { name: '   ', url: receiver.url(), subscribedEventTypes: ['CUSTOMER_CREATED'] } : { name: '  ' };
      const response = await t.request({ method, url, body });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.details).toEqual([{ field: 'name', message: 'must not be empty or only white space' }]);
    }
  });

  it('a replay window: bounds past the millisecond count as the next one, and each refusal says which bound', async () => {
    const created = await createWebhook();
    const now = t.clock.now();
    const replay = (body: Record<string, string>) => t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/replay`, body });
    const precise = await replay({ since: '2026-01-01T00:00:00.123456Z', until: '2026-01-01T00:00:01.000001Z' });
    expect(precise.status, JSON.stringify(precise.body)).toBe(200);
    expect(precise.body.data).toMatchObject({ since: '2026-01-01T00:00:00.124Z', until: '2026-01-01T00:00:01.001Z' });
    const empty = await replay({ since: '2026-01-01T00:00:00.000Z', until: '2026-01-01T00:00:00.000Z' });
    expect(empty.body.details).toEqual([{ field: 'since', message: 'must be before until (2026-01-01T00:00:00.000Z)' }]);
    const future = new Date(now.getTime() + 60_000).toISOString();
    const ahead = await replay({ since: future });
    expect(ahead.body.details).toEqual([{ field: 'since', message: `must not be after now (${now.toISOString()})` }]);
  });
});

describe('422', () => {
  it('a client has at most 100 subscriptions; deleted ones do not count', async () => {
    const client = await t.newClient('Many webhooks');
    const ids: string[] = [];
    for (let index = 0; index < 100; index++) ids.push((await createWebhook({ name: `w${index}` }, client.key)).id);
    const refused = await t.request({
      method: 'POST',
      url: '/v1/webhooks',
      key: client.key,
      body: { name: 'one too many', url: receiver.url(), subscribedEventTypes: ['CUSTOMER_CREATED'] },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('WEBHOOK_LIMIT_REACHED');
    await t.request({ method: 'DELETE', url: `/v1/webhooks/${ids[0]}`, key: client.key });
    await createWebhook({ name: 'room again' }, client.key);
  });
});

describe('404', () => {
  it.each([
    ['GET', ''],
    ['PATCH', ''],
    ['DELETE', ''],
    ['POST', '/rotate-secret'],
    ['POST', '/test'],
    ['GET', '/deliveries'],
  ] as const)('%s /v1/webhooks/:id%s answers 404 for a malformed, missing or other client\'s id', async (method, suffix) => {
    const other = await createWebhook({}, t.clientB.key);
    for (const id of ['not-a-uuid', missingId, other.id]) {
      const response = await t.request({ method, url: `/v1/webhooks/${id}${suffix}`, ...(method === 'PATCH' ? { body: { name: 'x' } } : {}) });
      expect(response.status, `${method} ${id}`).toBe(404);
      expect(response.body).toMatchObject({ code: 'NOT_FOUND', message: 'Webhook not found' });
    }
  });

  it('retrying a malformed, missing or other client\'s delivery answers 404', async () => {
    const other = await createWebhook({}, t.clientB.key);
    const tested = await t.request({ method: 'POST', url: `/v1/webhooks/${other.id}/test`, key: t.clientB.key });
    for (const id of ['nope', missingId, tested.body.data.id]) {
      const response = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${id}/retry` });
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'NOT_FOUND', message: 'Delivery not found' });
    }
  });
});

describe('409', () => {
  it('a deleted subscription cannot be changed, rotated or tested', async () => {
    const created = await createWebhook();
    await t.request({ method: 'DELETE', url: `/v1/webhooks/${created.id}` });
    const attempts = [
      await t.request({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, body: { active: true } }),
      await t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/rotate-secret` }),
      await t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/test` }),
    ];
    for (const response of attempts) {
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('CONFLICT');
    }
  });

  it('a delivery of a paused subscription cannot be retried', async () => {
    const created = await createWebhook();
    const tested = await t.request({ method: 'POST', url: `/v1/webhooks/${created.id}/test` });
    await t.request({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, body: { active: false } });
    const response = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${tested.body.data.id}/retry` });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('CONFLICT');
  });
});

describe('verification', () => {
  it('every request received in this file verifies with the standardwebhooks package', async () => {
    const checked = await verifyEveryDelivery(async (deliveryId) => {
      const row = await t.deps.db.selectFrom('webhook_deliveries').select('subscription_id').where('id', '=', deliveryId).executeTakeFirst();
      return row?.subscription_id;
    }, secrets);
    expect(checked).toBeGreaterThanOrEqual(2);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from './harness.js';
import { registerTestRoutes } from './support/test-routes.js';
import { appWithLogCapture } from './support/log-capture.js';
import { balanceOf, fund, linkedWallet, withdrawalBody } from './bank/fixtures.js';

// Issue 26, item 7: a wrong method on a known path, and a reused Idempotency-Key whose new body is
// itself invalid.

let t: TestContext;
const thing = { name: 'widget', amount: '10.50', asset: 'USD' };

beforeAll(async () => {
  t = await createTestApp({ extraRoutes: registerTestRoutes });
});
afterAll(async () => {
  await t.close();
});

describe('405', () => {
  it('a known path asked with another method: METHOD_NOT_ALLOWED, Allow lists the methods of the path', async () => {
    const response = await t.request({ method: 'POST', url: '/v1/assets', body: {} });
    expect(response.status).toBe(405);
    expect(response.body.code).toBe('METHOD_NOT_ALLOWED');
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.body.message).toBe('Method POST is not allowed on /v1/assets; allowed: GET, HEAD');
    expect(response.body.traceId).toBe(response.headers['x-trace-id']);
  });

  it('paths with parameters, a trailing slash or a query string match their route', async () => {
    const trailing = await t.request({ method: 'DELETE', url: '/v1/test/things/' });
    expect(trailing.status).toBe(405);
    expect(trailing.headers.allow).toBe('POST');
    const withParameter = await t.request({ method: 'PUT', url: '/v1/events/01900000-0000-7000-8000-000000000000?x=1' });
    expect(withParameter.status).toBe(405);
    expect(withParameter.headers.allow).toBe('GET, HEAD');
  });

  it('two trailing slashes are no route, as the router has it: 404, not a 405 listing the method asked', async () => {
    for (const method of ['POST', 'DELETE'] as const) {
      const response = await t.request({ method, url: '/v1/test/things//', body: {} });
      expect(response.status, method).toBe(404);
      expect(response.body.code).toBe('ROUTE_NOT_FOUND');
      expect(response.headers.allow).toBeUndefined();
    }
  });

  it('is answered before authentication, as 404 is', async () => {
    const response = await t.request({ method: 'PATCH', url: '/v1/assets', key: null, body: {} });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
  });
});

describe('404 and 410 stay', () => {
  it('an unknown path is ROUTE_NOT_FOUND whatever the method, without Allow', async () => {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const response = await t.request({ method, url: '/v1/nothing-here', ...(method === 'POST' ? { body: {} } : {}) });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('ROUTE_NOT_FOUND');
      expect(response.headers.allow).toBeUndefined();
    }
  });

  it('whatever the body: one that is not JSON does not turn a 404 or a 405 into a 400 (it did until 2026-12-07)', async () => {
    for (const [url, status, code] of [
      ['/v1/nothing-here', 404, 'ROUTE_NOT_FOUND'],
      ['/v1/assets', 405, 'METHOD_NOT_ALLOWED'],
    ] as const) {
      for (const key of [undefined, null]) {
        const response = await t.request({ method: 'POST', url, rawBody: '{"a": ', ...(key === null ? { key } : {}) });
        expect(response.status, `${url} ${String(key)}`).toBe(status);
        expect(response.body.code).toBe(code);
      }
    }
  });

  it('a path parameter too long to be an id is NOT_FOUND, and a path that cannot be decoded BAD_REQUEST, in the error envelope', async () => {
    const long = await t.request({ method: 'GET', url: `/v1/customers/${'a'.repeat(301)}` });
    expect(long.status).toBe(404);
    expect(long.body).toMatchObject({ code: 'NOT_FOUND', traceId: expect.any(String) });
    const deleted = await t.request({ method: 'DELETE', url: `/v1/webhooks/${'k'.repeat(400)}` });
    expect(deleted.status).toBe(404);
    expect(deleted.body.code).toBe('NOT_FOUND');
    const undecodable = await t.request({ method: 'GET', url: '/v1/customers/%zz', headers: { 'x-trace-id': 'my.trace.1' } });
    expect(undecodable.status).toBe(400);
    expect(undecodable.body).toMatchObject({ code: 'BAD_REQUEST', traceId: 'my.trace.1' });
    // The trace id in the header as well, as on every answer.
    expect(undecodable.headers['x-trace-id']).toBe('my.trace.1');
    expect(long.headers['x-trace-id']).toBe(long.body.traceId);
    // And the headers of every answer (until 2026-12-05 these two lacked them; found by an audit).
    for (const answer of [long, undecodable]) expect(answer.headers).toMatchObject({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  });

  it('those two answers are logged as every answer is: "incoming request", then "request completed" with the status, under the trace id', async () => {
    const capture = await appWithLogCapture(t);
    try {
      const urls = [`/v1/customers/${'a'.repeat(301)}`, '/v1/customers/%zz'];
      for (const url of urls) await capture.app.inject({ method: 'GET', url, headers: { authorization: t.clientA.key } });
      const lines = capture
        .logged()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { msg: string; traceId?: string; req?: { url?: string }; res?: { statusCode?: number } });
      for (const [index, url] of urls.entries()) {
        const incoming = lines.find((line) => line.msg === 'incoming request' && line.req?.url === url);
        expect(incoming?.traceId, url).toEqual(expect.any(String));
        const completed = lines.filter((line) => line.msg === 'request completed' && line.traceId === incoming?.traceId);
        expect(completed.map((line) => line.res?.statusCode)).toEqual([index === 0 ? 404 : 400]);
      }
    } finally {
      await capture.close();
    }
  });

  it('a removed endpoint answers 410, and its old method is not offered in Allow', async () => {
    const removed = await t.request({ method: 'GET', url: '/v1/customers/abc/transactions' });
    expect(removed.status).toBe(410);
    expect(removed.body.code).toBe('ENDPOINT_REMOVED');
    // Only the removed GET was ever on this path: another method is an unknown route, not a 405.
    const other = await t.request({ method: 'PUT', url: '/v1/customers/abc/transactions', body: {} });
    expect(other.status).toBe(404);
    expect(other.headers.allow).toBeUndefined();
  });
});

describe('422 IDEMPOTENCY_KEY_REUSED with an invalid body', () => {
  it('a key used before, sent again with a body validation refuses, is a reused key', async () => {
    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'reuse-invalid-1' });
    expect(first.status).toBe(201);
    for (const body of [
      { ...thing, amount: 10.5 }, // a JSON number where the schema wants a decimal string
      { name: 'widget' }, // required fields missing
      { ...thing, colour: 'red' }, // an unknown field
      { ...thing, legacyName: 'old' }, // a removed field (refused before validation)
    ]) {
      const response = await t.request({ method: 'POST', url: '/v1/test/things', body, idempotencyKey: 'reuse-invalid-1' });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    }
  });

  it('a first request refused with a 4xx is recorded too: reusing its key with an invalid body is 422', async () => {
    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: { ...thing, name: 'conflict' }, idempotencyKey: 'reuse-invalid-4' });
    expect(first.status).toBe(409);
    const response = await t.request({ method: 'POST', url: '/v1/test/things', body: { name: 'conflict' }, idempotencyKey: 'reuse-invalid-4' });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});

// Until 2026-12-07 a VALIDATION_ERROR found by a route's own code (not the schema) was stored under
// the key, so the corrected request answered 422 IDEMPOTENCY_KEY_REUSED (found by an audit).
describe("a route's own VALIDATION_ERROR is not stored: the corrected request runs under the same key", () => {
  it('an internal transfer to its own source wallet, then to another wallet (a batched write)', async () => {
    const source = await linkedWallet(t);
    const destination = await linkedWallet(t);
    await fund(t, source, '10.00');
    const body = { sourceWalletId: source.walletId, destinationWalletId: source.walletId, amount: '1.00', asset: 'USD' };
    const refused = await t.request({ method: 'POST', url: '/v1/internal-transfer', body, idempotencyKey: 'own-refusal-transfer' });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.code).toBe('VALIDATION_ERROR');
    expect(refused.body.details.map((detail: { field: string }) => detail.field)).toEqual(['destinationWalletId']);
    const again = await t.request({ method: 'POST', url: '/v1/internal-transfer', body, idempotencyKey: 'own-refusal-transfer' });
    expect(again.status).toBe(400);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const corrected = await t.request({ method: 'POST', url: '/v1/internal-transfer', body: { ...body, destinationWalletId: destination.walletId }, idempotencyKey: 'own-refusal-transfer' });
    expect(corrected.status, JSON.stringify(corrected.body)).toBe(201);
    expect(await balanceOf(t, destination.walletId)).toMatchObject({ AVAILABLE: '1.00' });
    const replayed = await t.request({ method: 'POST', url: '/v1/internal-transfer', body: { ...body, destinationWalletId: destination.walletId }, idempotencyKey: 'own-refusal-transfer' });
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(await balanceOf(t, destination.walletId)).toMatchObject({ AVAILABLE: '1.00' });
  });

  it('a withdrawal to a routing number whose check digit is wrong (INVALID_ROUTING_NUMBER), then to a good one', async () => {
    const wallet = await linkedWallet(t);
    await fund(t, wallet, '10.00');
    const refused = await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount: '1.00', routingNumber: '021000022' }), idempotencyKey: 'own-refusal-routing' });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.code).toBe('INVALID_ROUTING_NUMBER');
    const corrected = await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount: '1.00' }), idempotencyKey: 'own-refusal-routing' });
    expect(corrected.status, JSON.stringify(corrected.body)).toBe(201);
    expect(await balanceOf(t, wallet.walletId)).toMatchObject({ AVAILABLE: '9.00' });
  });

  it('a webhook URL with a space, then a good one (a write of one transaction)', async () => {
    const body = { name: 'own refusal', url: 'https://hooks.example.com/a b', subscribedEventTypes: ['*'] };
    const refused = await t.request({ method: 'POST', url: '/v1/webhooks', body, idempotencyKey: 'own-refusal-webhook' });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.code).toBe('VALIDATION_ERROR');
    expect(refused.body.details.map((detail: { field: string }) => detail.field)).toEqual(['url']);
    const corrected = await t.request({ method: 'POST', url: '/v1/webhooks', body: { ...body, url: 'https://hooks.example.com/ab' }, idempotencyKey: 'own-refusal-webhook' });
    expect(corrected.status, JSON.stringify(corrected.body)).toBe(201);
  });
});

describe('422 IDEMPOTENCY_KEY_REUSED for any malformed request under a used key', () => {
  it('a route that takes no body: fields or an array sent with the key of an earlier call', async () => {
    const first = await t.request({ method: 'POST', url: '/v1/vault/secret/rotate', idempotencyKey: 'no-body-reuse-1' });
    expect(first.status).toBe(200);
    for (const rawBody of ['{"zzz":1}', '[]']) {
      const response = await t.request({ method: 'POST', url: '/v1/vault/secret/rotate', rawBody, idempotencyKey: 'no-body-reuse-1' });
      expect(response.status, rawBody).toBe(422);
      expect(response.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    }
  });

  it('an unknown event type in a webhook created or changed under a used key', async () => {
    const body = { name: 'reuse', url: 'http://127.0.0.1:9/reuse', subscribedEventTypes: ['CUSTOMER_CREATED'] };
    const created = await t.request({ method: 'POST', url: '/v1/webhooks', body, idempotencyKey: 'event-type-reuse-1' });
    expect(created.status).toBe(201);
    const again = await t.request({ method: 'POST', url: '/v1/webhooks', body: { ...body, subscribedEventTypes: ['NOT_A_TYPE'] }, idempotencyKey: 'event-type-reuse-1' });
    expect(again.status).toBe(422);
    expect(again.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const id: string = created.body.data.id;
    expect((await t.request({ method: 'PATCH', url: `/v1/webhooks/${id}`, body: { name: 'renamed' }, idempotencyKey: 'event-type-reuse-2' })).status).toBe(200);
    const patched = await t.request({ method: 'PATCH', url: `/v1/webhooks/${id}`, body: { subscribedEventTypes: ['NOPE'] }, idempotencyKey: 'event-type-reuse-2' });
    expect(patched.status).toBe(422);
    expect(patched.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Under a fresh key the malformed request is the 400 it is.
    const fresh = await t.request({ method: 'PATCH', url: `/v1/webhooks/${id}`, body: { subscribedEventTypes: ['NOPE'] }, idempotencyKey: 'event-type-reuse-3' });
    expect(fresh.body.code).toBe('UNKNOWN_EVENT_TYPE');
  });
});

describe('no body, null and {} are one request', () => {
  it('on a route that takes no body, a retry in any of the three spellings replays the first answer', async () => {
    for (const [index, spellings] of [
      [undefined, '{}', 'null'],
      ['{}', undefined, 'null'],
      ['null', '{}', undefined],
    ].entries()) {
      const idempotencyKey = `no-body-spellings-${index}`;
      const answers = [];
      for (const rawBody of spellings) answers.push(await t.request({ method: 'POST', url: '/v1/vault/secret/rotate', ...(rawBody === undefined ? {} : { rawBody }), idempotencyKey }));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
      expect(answers.map((answer) => answer.headers['idempotent-replayed'])).toEqual([undefined, 'true', 'true']);
      expect(answers[1]?.body.data).toEqual(answers[0]?.body.data);
    }
  });
});

describe('400 VALIDATION_ERROR stays', () => {
  it('for a key never used, and for a key another client used', async () => {
    const invalid = { ...thing, amount: 10.5 };
    const fresh = await t.request({ method: 'POST', url: '/v1/test/things', body: invalid, idempotencyKey: 'reuse-invalid-2' });
    expect(fresh.status).toBe(400);
    expect(fresh.body.code).toBe('VALIDATION_ERROR');

    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'reuse-invalid-3' });
    expect(first.status).toBe(201);
    const otherClient = await t.request({ method: 'POST', url: '/v1/test/things', body: invalid, idempotencyKey: 'reuse-invalid-3', key: t.clientB.key });
    expect(otherClient.status).toBe(400);
    expect(otherClient.body.code).toBe('VALIDATION_ERROR');
  });

  it('for the same body and path with a bad query string: not a different request, and the key still replays', async () => {
    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'reuse-invalid-5' });
    expect(first.status).toBe(201);
    const sameRequest = await t.request({ method: 'POST', url: '/v1/test/things?unknown=1', body: thing, idempotencyKey: 'reuse-invalid-5' });
    expect(sameRequest.status).toBe(400);
    expect(sameRequest.body.code).toBe('VALIDATION_ERROR');
    const replay = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'reuse-invalid-5' });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('a path written with percent-escapes is the path the router reads: the key replays', async () => {
    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'reuse-escaped-1' });
    expect(first.status).toBe(201);
    const escaped = await t.request({ method: 'POST', url: '/v1/test/th%69ngs', body: thing, idempotencyKey: 'reuse-escaped-1' });
    expect(escaped.status, JSON.stringify(escaped.body)).toBe(201);
    expect(escaped.headers['idempotent-replayed']).toBe('true');
  });
});

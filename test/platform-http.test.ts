import net from 'node:net';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createTestApp, type TestContext } from './harness.js';
import { appWithLogCapture } from './support/log-capture.js';
import { listeningPort, rawExchange } from './support/raw-http.js';
import { registerTestRoutes } from './support/test-routes.js';

let t: TestContext;
const thing = { name: 'widget', amount: '10.50', asset: 'USD' };

beforeAll(async () => {
  t = await createTestApp({ extraRoutes: registerTestRoutes });
});
afterAll(async () => {
  await t.close();
});

async function eventCount(clientId = t.clientA.id): Promise<number> {
  const rows = await t.deps.db.selectFrom('events').select('id').where('client_id', '=', clientId).execute();
  return rows.length;
}

describe('success envelope and trace ids', () => {
  it('wraps data in { message, data, traceId } and echoes a sane X-Trace-Id', async () => {
    const response = await t.request({ url: '/v1/assets', headers: { 'x-trace-id': 'my-trace_1.2:3' } });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'message', 'traceId']);
    expect(response.body.traceId).toBe('my-trace_1.2:3');
    expect(response.headers['x-trace-id']).toBe('my-trace_1.2:3');
  });

  it.each(['has spaces and <tags>', '.', '..', '...'])('replaces the X-Trace-Id %j with a new UUID (dots alone could not be read back by path)', async (given) => {
    const response = await t.request({ url: '/v1/assets', headers: { 'x-trace-id': given } });
    expect(response.body.traceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers['x-trace-id']).toBe(response.body.traceId);
  });

  it('keeps an X-Trace-Id with dots among other characters', async () => {
    const response = await t.request({ url: '/v1/assets', headers: { 'x-trace-id': '..a' } });
    expect(response.body.traceId).toBe('..a');
  });

  it('puts the request trace id into the events the request records', async () => {
    const response = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, headers: { 'x-trace-id': 'trace-for-event' } });
    expect(response.status).toBe(201);
    const event = await t.request({ url: `/v1/events/${response.body.data.eventId}` });
    expect(event.body.data.data.traceId).toBe('trace-for-event');
  });
});

describe('response headers', () => {
  it('API answers are never cached and never sniffed: Cache-Control no-store and nosniff on reads, writes and errors', async () => {
    const answers = [
      await t.request({ url: '/v1/assets' }),
      await t.request({ method: 'POST', url: '/v1/test/things', body: thing }),
      await t.request({ url: '/v1/customers/019ca945-0a00-7000-8000-000000000000' }),
      await t.request({ url: '/v1/assets', key: null }),
    ];
    for (const response of answers) {
      expect(response.headers['cache-control'], String(response.status)).toBe('no-store');
      expect(response.headers['x-content-type-options'], String(response.status)).toBe('nosniff');
    }
    expect(answers.map((response) => response.status)).toEqual([200, 201, 404, 401]);
    const document = await t.request({ url: '/openapi.json' });
    expect(document.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('a request line in absolute form (GET http://host/v1/…, as a proxy sends it)', () => {
  it('is read as the path it names: no-store, the same idempotency key replays across both forms, 405 with Allow for another method', async () => {
    const port = await listeningPort(t.app);
    const auth = { Authorization: t.clientA.key };
    const read = await rawExchange(port, 'GET http://localhost/v1/assets HTTP/1.1', auth);
    expect(read.status).toBe(200);
    expect(read.headers['cache-control']).toBe('no-store');
    const key = `absolute-${crypto.randomUUID()}`;
    const first = await rawExchange(port, 'POST http://localhost:8080/v1/test/things HTTP/1.1', { ...auth, 'Idempotency-Key': key }, JSON.stringify(thing));
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.headers['cache-control']).toBe('no-store');
    const again = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: key });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data).toEqual(first.body?.data);
    const wrongMethod = await rawExchange(port, 'GET http://localhost/v1/internal-transfer HTTP/1.1', auth);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');
  });
});

describe('what is not read', () => {
  it('a compressed body (Content-Encoding other than identity): 415 naming the header; identity is read', async () => {
    const gzip = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, headers: { 'content-encoding': 'gzip' } });
    expect(gzip.status).toBe(415);
    expect(gzip.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', details: [{ field: 'Content-Encoding' }] });
    const identity = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, headers: { 'content-encoding': 'identity' } });
    expect(identity.status).toBe(201);
  });

  it('an Authorization header of another scheme is said to hold no key, not to be missing', async () => {
    const basic = await t.request({ url: '/v1/assets', key: null, headers: { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` } });
    expect(basic.status).toBe(401);
    expect(basic.body.message).toMatch(/^The Authorization header holds no API key/);
    const none = await t.request({ url: '/v1/assets', key: null });
    expect(none.body.message).toMatch(/^Missing API key/);
    // The Bearer scheme without its key holds no key either (it was looked up as the key "Bearer").
    for (const authorization of ['Bearer', 'bearer  ', 'Bearer \t']) {
      const bare = await t.request({ url: '/v1/assets', key: null, headers: { authorization } });
      expect(bare.status).toBe(401);
      expect(bare.body.message, JSON.stringify(authorization)).toMatch(/^The Authorization header holds no API key/);
    }
  });
});

describe('400', () => {
  const cases: Array<[string, { rawBody?: string | Buffer; body?: unknown; contentType?: string }, string, string | undefined]> = [
    ['malformed JSON', { rawBody: '{"name": ' }, 'INVALID_JSON', undefined],
    ['a body that is an array', { body: [thing] }, 'VALIDATION_ERROR', 'body'],
    ['a body that is a string', { body: 'hello' }, 'VALIDATION_ERROR', 'body'],
    ['a JSON number where a decimal string is expected', { body: { ...thing, amount: 10.5 } }, 'VALIDATION_ERROR', 'amount'],
    ['an unknown field', { body: { ...thing, colour: 'red' } }, 'VALIDATION_ERROR', 'colour'],
    ['an unknown nested field', { body: { ...thing, nested: { note: 'a', extra: 1 } } }, 'VALIDATION_ERROR', 'nested.extra'],
    ['a missing required field', { body: { amount: '1.00', asset: 'USD' } }, 'VALIDATION_ERROR', 'name'],
    ['a removed field', { body: { ...thing, legacyName: 'x' } }, 'FIELD_REMOVED', 'legacyName'],
    ['an over-long string', { body: { ...thing, name: 'x'.repeat(51) } }, 'VALIDATION_ERROR', 'name'],
    ['a NUL character in a string, named', { rawBody: JSON.stringify({ ...thing, name: 'a\u0000b' }) }, 'INVALID_JSON', 'name'],
    ['a NUL character in a nested string, named by its path', { rawBody: JSON.stringify({ ...thing, nested: { note: 'a\u0000' } }) }, 'INVALID_JSON', 'nested.note'],
    ['a NUL character in an array, named by its path', { rawBody: JSON.stringify({ ...thing, list: ['ok', 'a\u0000'] }) }, 'INVALID_JSON', 'list[1]'],
    ['a lone surrogate in a string, named', { rawBody: '{"name":"a\\ud800b","amount":"1.00","asset":"USD"}' }, 'INVALID_JSON', 'name'],
    ['a lone surrogate in a key, the object holding it named', { rawBody: '{"\\udc00":"x","name":"a","amount":"1.00","asset":"USD"}' }, 'INVALID_JSON', 'body'],
    ['a NUL character in a nested key, the object holding it named', { rawBody: '{"name":"a","amount":"1.00","asset":"USD","nested":{"no\\u0000te":"x"}}' }, 'INVALID_JSON', 'nested'],
    ['nesting deeper than 32 levels', { rawBody: `${'['.repeat(40)}${']'.repeat(40)}` }, 'INVALID_JSON', undefined],
    ['very deep nesting', { rawBody: `${'{"a":'.repeat(20000)}1${'}'.repeat(20000)}` }, 'INVALID_JSON', undefined],
    ['an amount with too many decimals', { body: { ...thing, amount: '1.234' } }, 'INVALID_AMOUNT', 'amount'],
    ['an amount with an exponent', { body: { ...thing, amount: '1e3' } }, 'INVALID_AMOUNT', 'amount'],
    ['an unknown asset', { body: { ...thing, asset: 'DOGE' } }, 'UNKNOWN_ASSET', 'asset'],
    ['__proto__ pollution: named as an unknown field', { rawBody: '{"__proto__":{"admin":true},"name":"a","amount":"1.00","asset":"USD"}' }, 'VALIDATION_ERROR', '__proto__'],
    ['a nested __proto__, named by its path', { rawBody: '{"name":"a","amount":"1.00","asset":"USD","nested":{"__proto__":{"x":1}}}' }, 'VALIDATION_ERROR', 'nested.__proto__'],
    ['constructor.prototype in an array, named by its path', { rawBody: '{"name":"a","amount":"1.00","asset":"USD","list":[1,{"constructor":{"prototype":{}}}]}' }, 'VALIDATION_ERROR', 'list[1].constructor'],
    ['bytes that are not UTF-8 (never replaced by U+FFFD)', { rawBody: Buffer.concat([Buffer.from('{"name":"Caf'), Buffer.from([0xe9]), Buffer.from('","amount":"1.00","asset":"USD"}')]) }, 'INVALID_JSON', undefined],
    ['a field sent twice (JSON.parse would keep the last)', { rawBody: '{"name":"a","amount":"1.00","amount":"7.00","asset":"USD"}' }, 'VALIDATION_ERROR', 'amount'],
    ['a field sent twice, once escaped', { rawBody: '{"name":"a","am\\u006funt":"1.00","amount":"7.00","asset":"USD"}' }, 'VALIDATION_ERROR', 'amount'],
    ['a nested field sent twice', { rawBody: '{"name":"a","amount":"1.00","asset":"USD","nested":{"note":"x","note":"y"}}' }, 'VALIDATION_ERROR', 'nested.note'],
    ['a number JSON.parse would round, named by its path', { rawBody: '{"name":"a","amount":"1.00","asset":"USD","list":[1,4.999999999999999999999]}' }, 'VALIDATION_ERROR', 'list[1]'],
    ['a number JSON.parse would read as 0, named by its path', { rawBody: '{"name":"a","amount":"1.00","asset":"USD","list":[1e-400]}' }, 'VALIDATION_ERROR', 'list[0]'],
    ['a number JSON.parse would read as Infinity, named by its path', { rawBody: '[1e400]' }, 'VALIDATION_ERROR', '[0]'],
  ];

  it.each(cases)('%s', async (_name, input, code, field) => {
    const before = await eventCount();
    const response = await t.request({ method: 'POST', url: '/v1/test/things', ...input });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(code);
    expect(typeof response.body.message).toBe('string');
    expect(response.body.traceId).toBeTypeOf('string');
    if (field) expect(response.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
    expect(await eventCount()).toBe(before);
  });

  it('a prototype key inside a free-form object (an ISO 8583 field map) is refused by the key check itself, naming its path', async () => {
    // The schema lets any field through here, so only the key check stands between it and the code.
    for (const [rawBody, field] of [
      ['{"format":"json","message":{"0":"0100","__proto__":{"2":"x"}}}', 'message.__proto__'],
      ['{"format":"json","message":{"0":"0100","constructor":{"prototype":{"2":"x"}}}}', 'message.constructor'],
    ] as const) {
      const response = await t.request({ method: 'POST', url: '/v1/sandbox/iso8583', rawBody });
      expect(response.status, rawBody).toBe(400);
      expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field, message: 'is not a known field' }] });
    }
  });

  it('a number is refused only when JSON.parse cannot hold it as written: any double\'s own form, and its other spellings, pass', async () => {
    const { checkJsonText, inexactNumber } = await import('../src/platform/http/validation.js');
    for (const literal of ['0', '-0', '25.5', '1.50', '1E2', '1e+2', '-1.0e-2', '0.30000000000000004', '123456789012345', '100000000000000000000', '0.000000000000001', '5e-324', '1.7976931348623157e308', '-0.0000000000000000000']) {
      expect(inexactNumber(literal), literal).toBeUndefined();
    }
    for (const [literal, read] of [
      ['4.999999999999999999999', '5'],
      ['1.0000000000000001', '1'],
      ['123456789012345678', '123456789012345680'],
      ['1e-400', '0'],
      ['-1e400', '-Infinity'],
      ['0.1000000000000000055511151231257827', '0.1'],
    ] as const) {
      expect(inexactNumber(literal), literal).toBe(read);
    }
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(() => checkJsonText(JSON.stringify({ value, list: [value] }))).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });

  it('a whole number or an amount sent as a number with more digits than a double holds is refused, not rounded', async () => {
    // The sandbox clock's seconds: 4.999999999999999999999 was read as 5 and the clock moved.
    const before = await t.request({ url: '/v1/sandbox/clock' });
    const advance = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', rawBody: '{"seconds":4.999999999999999999999}' });
    expect(advance.status, JSON.stringify(advance.body)).toBe(400);
    expect(advance.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'seconds', message: expect.stringContaining('would be read as 5') }] });
    expect(before.body.data.offsetSeconds).toBeTypeOf('number');
    expect((await t.request({ url: '/v1/sandbox/clock' })).body.data.offsetSeconds).toBe(before.body.data.offsetSeconds);
  });

  it('reads a field name in an object as a field only: the same text as a value, in another object or in an array is no duplicate', async () => {
    const { checkJsonText } = await import('../src/platform/http/validation.js');
    for (const text of ['{"a":"a","b":{"a":1},"c":[{"a":1},{"a":2}],"d":"{\\"d\\":1,\\"d\\":2}"}', '[{"a":1},{"a":1}]', '"x"', '{}']) {
      expect(() => checkJsonText(text), text).not.toThrow();
    }
    const named = (text: string) => {
      try {
        checkJsonText(text);
        return undefined;
      } catch (error) {
        return (error as { details?: Array<{ field: string }> }).details?.[0]?.field;
      }
    };
    expect(named('{"items":[{"amount":"1"},{"amount":"1","amount":"2"}]}')).toBe('items[1].amount');
    expect(named('[{"a":1},{"b":{"c":1,"c":2}}]')).toBe('[1].b.c');
    expect(named('{"x\\"y":1, "x\\"y" :2}')).toBe('x"y');
    // Any JSON without a repeated name passes, except the prototype keys, refused on purpose (a
    // `__proto__` key, or `constructor` holding `prototype`: tested below); fast-check generates
    // them now and then (a CI pre-check drew `{"__proto__":false}`).
    const prototypeKey = (value: unknown): boolean =>
      Array.isArray(value)
        ? value.some(prototypeKey)
        : typeof value === 'object' && value !== null
          ? Object.entries(value).some(
              ([key, inner]) => key === '__proto__' || (key === 'constructor' && typeof inner === 'object' && inner !== null && Object.hasOwn(inner, 'prototype')) || prototypeKey(inner),
            )
          : false;
    fc.assert(
      fc.property(
        fc.jsonValue().filter((value) => !prototypeKey(value)),
        (value) => {
          expect(() => checkJsonText(JSON.stringify(value))).not.toThrow();
        },
      ),
      { numRuns: 300 },
    );
    expect(named('{"__proto__":false}')).toBe('__proto__');
  });

  it.each([
    ['/v1/customers?email=a%00b@example.com', 'email'],
    ['/v1/customers/%00', 'id'],
    ['/v1/transactions?parentTransactionId=%00&limit=5', 'parentTransactionId'],
    ['/v1/assets?colour=%00', 'colour'],
  ])('%s: 400 VALIDATION_ERROR naming %s (a NUL character in the URL never reaches the database)', async (url, field) => {
    const response = await t.request({ url });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(response.body.details[0].field).toBe(field);
  });

  it('refuses unknown query parameters', async () => {
    const response = await t.request({ url: '/v1/assets?colour=red' });
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([{ field: 'colour', message: 'is not a known query parameter' }]);
  });

  it.each([
    ['limit=-1', 'limit'],
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=99999999999999999999', 'limit'],
    ['limit=abc', 'limit'],
    ['offset=-5', 'offset'],
    ['offset=1000000000', 'offset'],
    ['createdAfter=yesterday', 'createdAfter'],
    // A day that does not exist, whatever the offset, and a leap second no date can hold.
    ['createdAfter=2026-02-30T10:00:00%2B01:00', 'createdAfter'],
    ['createdBefore=2026-04-31T12:00:00-05:00', 'createdBefore'],
    ['createdAfter=2026-02-30T10:00:00Z', 'createdAfter'],
    ['createdBefore=2026-12-31T23:59:60Z', 'createdBefore'],
    // Hour 24 (JavaScript reads the next midnight) and offsets no clock has.
    ['createdAfter=2026-12-02T24:00:00Z', 'createdAfter'],
    ['createdAfter=2026-12-02T24:00Z', 'createdAfter'],
    ['createdBefore=2026-12-02T10:00:00%2B24:00', 'createdBefore'],
    ['createdBefore=2026-12-02T10:00:00-05:60', 'createdBefore'],
    ['type=NOT_AN_EVENT', 'type'],
    // Number() would read these; a whole number is written in decimal digits.
    ['limit=0x10', 'limit'],
    ['limit=1e1', 'limit'],
    ['limit=%2B5', 'limit'],
    ['limit=5.0', 'limit'],
    ['limit=5%20', 'limit'],
    ['limit=%205', 'limit'],
    ['offset=1e0', 'offset'],
    ['offset=0x1', 'offset'],
  ])('refuses the list query %s', async (query, field) => {
    const response = await t.request({ url: `/v1/events?${query}` });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(response.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it('a route that takes no body refuses JSON fields (naming each) and other JSON values; no body and {} go on', async () => {
    const url = '/v1/sandbox/bank-transactions/0190f1f2-0000-7000-8000-000000000000/settle';
    const fields = await t.request({ method: 'POST', url, body: { foo: 1, bar: 2 } });
    expect(fields.status).toBe(400);
    expect(fields.body.details).toEqual([{ field: 'foo', message: 'is not a known field' }, { field: 'bar', message: 'is not a known field' }]);
    const list = await t.request({ method: 'POST', url, body: [1] });
    expect(list.status).toBe(400);
    expect(list.body.details[0].field).toBe('body');
    expect((await t.request({ method: 'POST', url, body: {} })).status).toBe(404);
    expect((await t.request({ method: 'POST', url })).status).toBe(404);
    const rotate = await t.request({ method: 'POST', url: '/v1/webhooks/0190f1f2-0000-7000-8000-000000000000/rotate-secret', body: { secret: 'mine' } });
    expect(rotate.status).toBe(400);
    expect(rotate.body.details).toEqual([{ field: 'secret', message: 'is not a known field' }]);
  });

  it.each(['1', '0'])('refuses offset=%s together with startAfterId', async (offset) => {
    const response = await t.request({ url: `/v1/events?offset=${offset}&startAfterId=01900000-0000-7000-8000-000000000000` });
    expect(response.status).toBe(400);
    expect(response.body.details[0].field).toBe('offset');
  });

  it.each([
    ['empty', ''],
    ['300 characters long', 'k'.repeat(300)],
    ['holding a space', 'two words'],
    ['holding non-ASCII', 'clé'],
  ])('refuses an Idempotency-Key that is %s', async (_name, idempotencyKey) => {
    const response = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, headers: { 'idempotency-key': idempotencyKey } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_IDEMPOTENCY_KEY');
    // Before the body is read or checked: a body the schema refuses, or one that is not JSON, is
    // answered after the key (until 2026-12-07 the body's 400 came first; found by an audit).
    for (const input of [{ body: { amount: 7 } }, { rawBody: '{"name": ' }]) {
      const first = await t.request({ method: 'POST', url: '/v1/test/things', ...input, headers: { 'idempotency-key': idempotencyKey } });
      expect(first.status).toBe(400);
      expect(first.body).toMatchObject({ code: 'INVALID_IDEMPOTENCY_KEY', details: [{ field: 'Idempotency-Key' }] });
    }
  });

  it('refuses a malformed key before the body on the unversioned paths too (POST /internal-transfer)', async () => {
    for (const input of [{ body: { amount: 7 } }, { rawBody: '{"amount": ' }]) {
      const response = await t.request({ method: 'POST', url: '/internal-transfer', ...input, headers: { 'idempotency-key': 'two words' } });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'INVALID_IDEMPOTENCY_KEY', details: [{ field: 'Idempotency-Key' }] });
    }
  });

  it('leaves the key alone on a read (the admin routes: test/tenants.test.ts)', async () => {
    const read = await t.request({ url: '/v1/assets', headers: { 'idempotency-key': 'two words' } });
    expect(read.status).toBe(200);
  });
});

describe('401 and 403', () => {
  it('two Authorization headers: 401 whichever keys they hold (a proxy may read the other one)', async () => {
    const port = await listeningPort(t.app);
    for (const second of [t.clientA.key, t.clientB.key]) {
      const response = await rawExchange(port, 'GET /v1/assets HTTP/1.1', { Authorization: t.clientA.key, authorization: second });
      expect(response.status).toBe(401);
      expect(JSON.stringify(response.body)).toContain('more than one Authorization header');
    }
    expect((await rawExchange(port, 'GET /v1/assets HTTP/1.1', { Authorization: t.clientA.key })).status).toBe(200);
  });

  it('accepts the raw key, Bearer, and odd spacing around them', async () => {
    for (const header of [t.clientA.key, `Bearer ${t.clientA.key}`, `bearer   ${t.clientA.key}`, `  ${t.clientA.key}\t`, `Bearer\t${t.clientA.key} `]) {
      const response = await t.request({ url: '/v1/assets', key: header });
      expect(response.status, header).toBe(200);
    }
  });

  it.each([
    ['no header', null],
    ['an empty header', ''],
    ['only the scheme', 'Bearer'],
    ['two keys', `${t?.clientA?.key ?? 'sk_test_x'} ${t?.clientA?.key ?? 'sk_test_y'}`],
    ['Basic auth', 'Basic dXNlcjpwYXNz'],
    ['a key of the wrong shape', 'sk_test_short'],
    ['an unknown well-formed key', `sk_test_${'A'.repeat(32)}`],
  ])('401 for %s', async (_name, key) => {
    const response = await t.request({ url: '/v1/assets', key });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHENTICATED');
  });

  it('401 comes before body parsing: a huge body without a key is not read', async () => {
    const response = await t.request({ method: 'POST', url: '/v1/test/things', rawBody: 'x'.repeat(2 * 1024 * 1024), key: null });
    expect(response.status).toBe(401);
  });

  it('403 for a read-only key on a write, 200 on a read', async () => {
    expect((await t.request({ url: '/v1/assets', key: t.clientA.readOnlyKey })).status).toBe(200);
    const write = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, key: t.clientA.readOnlyKey });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('FORBIDDEN');
  });
});

describe('what the HTTP parser refuses before there is a request', () => {
  it.each([
    ['an unknown method', 'FROB /v1/assets HTTP/1.1', {}, 400, 'BAD_REQUEST'],
    ['a header line without a colon', 'GET /v1/assets HTTP/1.1', { 'X-Broken header': 'x' }, 400, 'BAD_REQUEST'],
    ['headers over 16 KiB', 'GET /v1/assets HTTP/1.1', { 'X-Filler': 'a'.repeat(20_000) }, 431, 'REQUEST_HEADERS_TOO_LARGE'],
  ])('%s: the API error envelope with a trace id, and the connection closed', async (_name, requestLine, headers, status, code) => {
    const port = await listeningPort(t.app);
    const response = await rawExchange(port, requestLine, { Authorization: t.clientA.key, ...headers });
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ message: expect.any(String), code, traceId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(response.headers).toMatchObject({ 'x-trace-id': (response.body as { traceId: string }).traceId, connection: 'close', 'cache-control': 'no-store' });
  });
});

describe('what the HTTP parser refuses, in the log', () => {
  it('one info line with the trace id the client got, the status, the code and the parser\'s reason', async () => {
    const capture = await appWithLogCapture(t);
    try {
      const port = await listeningPort(capture.app);
      const response = await rawExchange(port, 'FROB /v1/assets HTTP/1.1', { Authorization: t.clientA.key });
      expect(response.status).toBe(400);
      const traceId = (response.body as { traceId: string }).traceId;
      const lines = capture.logged().trimEnd().split('\n');
      const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.traceId === traceId);
      expect(logged).toEqual([expect.objectContaining({ level: 30, msg: 'request refused by the HTTP parser', statusCode: 400, code: 'BAD_REQUEST', reason: 'HPE_INVALID_METHOD' })]);
      expect(capture.logged()).not.toContain(t.clientA.key);
    } finally {
      await capture.close();
    }
  });
});

describe('503 while the server shuts down', () => {
  it('a request that arrives meanwhile is not applied: 503 SERVICE_UNAVAILABLE in the envelope, with its trace id, Retry-After and Connection: close; the health routes still answer', async () => {
    const { app, markShuttingDown } = await buildApp(t.deps, { logger: false, extraRoutes: registerTestRoutes });
    try {
      markShuttingDown();
      const before = await eventCount();
      const response = await app.inject({ method: 'POST', url: '/v1/test/things', headers: { authorization: t.clientA.key, 'x-trace-id': 'closing-trace' }, payload: thing });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ message: expect.stringContaining('shutting down'), code: 'SERVICE_UNAVAILABLE', traceId: 'closing-trace' });
      expect(response.headers).toMatchObject({ 'x-trace-id': 'closing-trace', 'retry-after': '1', connection: 'close' });
      expect(await eventCount()).toBe(before);
      expect((await app.inject({ url: '/health/live' })).statusCode).toBe(200);
      expect((await app.inject({ url: '/health/ready' })).statusCode).toBe(503);
    } finally {
      await app.close();
    }
  });
});

describe('a request in flight when the server shuts down', () => {
  it('is answered with Connection: close, so its keep-alive connection does not hold up the close until SHUTDOWN_TIMEOUT_MS', async () => {
    const { app, markShuttingDown } = await buildApp(t.deps, { logger: false, extraRoutes: registerTestRoutes });
    const socket = net.connect(await listeningPort(app), '127.0.0.1');
    try {
      const body = JSON.stringify(thing);
      // A keep-alive request whose body is still on its way when the shutdown starts.
      socket.write(
        ['POST /v1/test/things HTTP/1.1', 'Host: localhost', `Authorization: ${t.clientA.key}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`]
          .join('\r\n') + `\r\n\r\n${body.slice(0, 5)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      markShuttingDown();
      const closed = app.close().then(() => 'closed');
      const received: Buffer[] = [];
      const ended = new Promise<void>((resolve) => {
        socket.on('data', (chunk: Buffer) => received.push(chunk));
        socket.on('close', () => resolve());
      });
      socket.write(body.slice(5));
      // Before, the answer kept the connection open and the close waited for the client to hang up.
      expect(await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve('still open'), 3000))])).toBe('closed');
      await ended;
      const [head = ''] = Buffer.concat(received).toString('utf8').split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 201 /);
      expect(head.toLowerCase()).toContain('connection: close');
    } finally {
      socket.destroy();
      await app.close();
    }
  });
});

describe('503 from /health/ready while the server drains (SHUTDOWN_DRAIN_MS)', () => {
  it('the readiness probe answers 503 "draining" while every other request is still served and applied', async () => {
    const { app, markDraining } = await buildApp(t.deps, { logger: false, extraRoutes: registerTestRoutes });
    try {
      expect((await app.inject({ url: '/health/ready' })).statusCode).toBe(200);
      markDraining();
      const ready = await app.inject({ url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'Not ready: draining' });
      const before = await eventCount();
      const response = await app.inject({ method: 'POST', url: '/v1/test/things', headers: { authorization: t.clientA.key }, payload: thing });
      expect(response.statusCode).toBe(201);
      expect(await eventCount()).toBe(before + 1);
      expect((await app.inject({ url: '/health/live' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('404, 410, 413, 415', () => {
  it('answers an unknown route with a JSON 404', async () => {
    const response = await t.request({ url: '/v1/nothing-here' });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('ROUTE_NOT_FOUND');
  });

  it.each([
    ['GET', '/v1/customers/abc/transactions', 'GET /v1/transactions?walletId='],
    ['POST', '/v1/customers/abc/addresses', 'PATCH /v1/customers/:id'],
    ['DELETE', '/v1/digital-wallets/abc', 'Wallet archival is unavailable'],
  ] as const)('410 for the removed %s %s, naming the replacement', async (method, url, replacement) => {
    const response = await t.request({ method, url });
    expect(response.status).toBe(410);
    expect(response.body.code).toBe('ENDPOINT_REMOVED');
    expect(response.body.message).toContain(replacement);
  });

  it('410 for a removed endpoint whatever body it is sent with (a form, plain text), not 415', async () => {
    for (const contentType of ['application/x-www-form-urlencoded', 'text/plain']) {
      const response = await t.request({ method: 'POST', url: '/v1/customers/abc/addresses', rawBody: 'street=1', contentType });
      expect(response.status, contentType).toBe(410);
      expect(response.body.code).toBe('ENDPOINT_REMOVED');
    }
  });

  it('413 for a 2 MiB JSON body', async () => {
    const response = await t.request({ method: 'POST', url: '/v1/test/things', rawBody: JSON.stringify({ ...thing, name: 'x'.repeat(2 * 1024 * 1024) }) });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])('415 for Content-Type %s', async (contentType) => {
    const response = await t.request({ method: 'POST', url: '/v1/test/things', rawBody: 'name=widget', contentType });
    expect(response.status).toBe(415);
    expect(response.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(response.body.details).toEqual([{ field: 'Content-Type', message: 'send JSON bodies as application/json' }]);
  });

  it.each(['application/json; charset=iso-8859-1', 'application/json;charset="utf-16"', 'application/json; charset=latin1'])(
    '415 for %s: JSON bodies are UTF-8, another charset is not read as if it were',
    async (contentType) => {
      const response = await t.request({ method: 'POST', url: '/v1/test/things', rawBody: JSON.stringify(thing), contentType });
      expect(response.status).toBe(415);
      expect(response.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(response.body.details).toEqual([{ field: 'Content-Type', message: expect.stringMatching(/^charset=.* is not accepted: JSON bodies are UTF-8$/) }]);
    },
  );

  it.each(['application/json; charset=utf-8; charset=latin1', 'application/json; charset=utf-8;charset=utf-8'])('415 for %s: a charset named twice, which readers could take either way', async (contentType) => {
    const response = await t.request({ method: 'POST', url: '/v1/test/things', rawBody: JSON.stringify(thing), contentType });
    expect(response.status, JSON.stringify(response.body)).toBe(415);
    expect(response.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', details: [{ field: 'Content-Type', message: 'names charset more than once' }] });
  });

  it.each(['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json; charset="utf8"'])('%s is read', async (contentType) => {
    const response = await t.request({ method: 'POST', url: '/v1/test/things', rawBody: JSON.stringify({ ...thing, name: 'Café 東京' }), contentType });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
  });
});

describe('idempotency', () => {
  it('replays the first response and records the effect once', async () => {
    const before = await eventCount();
    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'replay-1' });
    const second = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'replay-1' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await eventCount()).toBe(before + 1);
  });

  it('a retry that adds or drops a trailing slash is the same request (the router ignores it): replayed, not 422', async () => {
    const before = await eventCount();
    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'slash-1' });
    const second = await t.request({ method: 'POST', url: '/v1/test/things/', body: thing, idempotencyKey: 'slash-1' });
    expect(first.status).toBe(201);
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await eventCount()).toBe(before + 1);
  });

  it('422 when the key is reused with a different body', async () => {
    await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'reuse-1' });
    const response = await t.request({ method: 'POST', url: '/v1/test/things', body: { ...thing, amount: '11.00' }, idempotencyKey: 'reuse-1' });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('replays a retry that gives the same fields in another order', async () => {
    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: { name: 'reordered', amount: '10.50', asset: 'USD' }, idempotencyKey: 'order-1' });
    const second = await t.request({ method: 'POST', url: '/v1/test/things', body: { asset: 'USD', amount: '10.50', name: 'reordered' }, idempotencyKey: 'order-1' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
  });

  it('replays a retry that writes an id of the path in capitals, and still refuses another id', async () => {
    const created = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'case', url: 'https://example.com/hooks', subscribedEventTypes: ['CUSTOMER_CREATED'] } });
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;
    const first = await t.request({ method: 'POST', url: `/v1/webhooks/${id}/rotate-secret`, idempotencyKey: 'case-1' });
    const second = await t.request({ method: 'POST', url: `/v1/webhooks/${id.toUpperCase()}/rotate-secret`, idempotencyKey: 'case-1' });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    const other = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'other', url: 'https://example.com/hooks', subscribedEventTypes: ['CUSTOMER_CREATED'] } });
    const reused = await t.request({ method: 'POST', url: `/v1/webhooks/${other.body.data.id}/rotate-secret`, idempotencyKey: 'case-1' });
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('keys are scoped to the client', async () => {
    const a = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'shared-key' });
    const b = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, idempotencyKey: 'shared-key', key: t.clientB.key });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.data.eventId).not.toBe(a.body.data.eventId);
  });

  it('stores a 4xx outcome and replays it, with nothing recorded', async () => {
    const before = await eventCount();
    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: { ...thing, name: 'conflict' }, idempotencyKey: 'conflict-1' });
    const second = await t.request({ method: 'POST', url: '/v1/test/things', body: { ...thing, name: 'conflict' }, idempotencyKey: 'conflict-1' });
    expect(first.status).toBe(409);
    expect(second.status).toBe(409);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await eventCount()).toBe(before);
  });

  it('does not store a 500, so the client may retry', async () => {
    const first = await t.request({ method: 'POST', url: '/v1/test/things', body: { ...thing, name: 'crash' }, idempotencyKey: 'crash-1' });
    expect(first.status).toBe(500);
    expect(first.body.code).toBe('INTERNAL_ERROR');
    const stored = await t.deps.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'crash-1').execute();
    expect(stored).toEqual([]);
  });

  it('20 concurrent requests with one key record the effect once', async () => {
    const before = await eventCount();
    const body = { ...thing, name: 'slow' };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => t.request({ method: 'POST', url: '/v1/test/things', body, idempotencyKey: 'concurrent-1' })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const created = responses.filter((response) => response.status === 201);
    expect(new Set(created.map((response) => response.body.data.eventId)).size).toBe(1);
    for (const conflict of responses.filter((response) => response.status === 409)) {
      expect(conflict.body.code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
    }
    expect(await eventCount()).toBe(before + 1);
  });
});

describe('events', () => {
  it('lists newest first and pages with offset and with startAfterId alike', async () => {
    const client = await t.newClient('Pager');
    for (let index = 0; index < 45; index++) {
      t.clock.advance(1000);
      const response = await t.request({ method: 'POST', url: '/v1/test/things', body: { ...thing, name: `n${index}` }, key: client.key });
      expect(response.status).toBe(201);
    }
    const byOffset: string[] = [];
    for (let offset = 0; ; offset += 20) {
      const page = await t.request({ url: `/v1/events?limit=20&offset=${offset}`, key: client.key });
      expect(page.body.pagination.totalResults).toBe(45);
      byOffset.push(...page.body.data.map((event: { id: string }) => event.id));
      if (!page.body.pagination.hasMoreResults) break;
    }
    const byCursor: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof t.request>> = await t.request({ url: `/v1/events?limit=20${cursor ? `&startAfterId=${cursor}` : ''}`, key: client.key });
      byCursor.push(...page.body.data.map((event: { id: string }) => event.id));
      cursor = page.body.pagination.nextStartAfterId;
    } while (cursor);
    expect(byOffset).toHaveLength(45);
    expect(byCursor).toEqual(byOffset);
    expect([...byOffset].sort().reverse()).toEqual(byOffset);
  });

  it('counts up to 10,000 matching records: beyond, totalResults is 10,000 and totalResultsExact false; fewer are counted exactly', async () => {
    const client = await t.newClient('Long list');
    const created = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, key: client.key });
    expect(created.status).toBe(201);
    // 10,001 events in all, as fast as the database writes them: copies of the one just written.
    await sql`INSERT INTO events (client_id, id, type, data, created_at)
      SELECT client_id, gen_random_uuid(), type, data, created_at FROM events, generate_series(1, 10000)
      WHERE client_id = ${client.id}::uuid`.execute(t.deps.db);
    const page = await t.request({ url: '/v1/events?limit=1', key: client.key });
    expect(page.body.pagination).toMatchObject({ totalResults: 10_000, totalResultsExact: false, hasMoreResults: true });
    // A cursor page counts what matches the filters, as the first page does.
    const next = await t.request({ url: `/v1/events?limit=1&startAfterId=${String(page.body.pagination.nextStartAfterId)}`, key: client.key });
    expect(next.body.pagination).toMatchObject({ totalResults: 10_000, totalResultsExact: false });
    const few = await t.request({ url: '/v1/events?type=WEBHOOK_CREATED', key: client.key });
    expect(few.body.pagination).toMatchObject({ totalResults: 0, totalResultsExact: true, hasMoreResults: false });
    // Exactly 10,000 is counted exactly.
    await sql`DELETE FROM events WHERE client_id = ${client.id}::uuid AND id = (SELECT id FROM events WHERE client_id = ${client.id}::uuid ORDER BY id LIMIT 1)`.execute(t.deps.db);
    const all = await t.request({ url: '/v1/events?limit=1', key: client.key });
    expect(all.body.pagination).toMatchObject({ totalResults: 10_000, totalResultsExact: true });
  });

  it('filters by type and creation time', async () => {
    const client = await t.newClient('Filter');
    t.clock.set('2026-06-01T00:00:00Z');
    await t.request({ method: 'POST', url: '/v1/test/things', body: thing, key: client.key });
    t.clock.set('2026-06-02T00:00:00Z');
    await t.request({ method: 'POST', url: '/v1/test/things', body: thing, key: client.key });
    const after = await t.request({ url: '/v1/events?createdAfter=2026-06-01T12:00:00Z', key: client.key });
    expect(after.body.data).toHaveLength(1);
    const before = await t.request({ url: '/v1/events?createdBefore=2026-06-02', key: client.key });
    expect(before.body.data).toHaveLength(1);
    const byType = await t.request({ url: '/v1/events?type=WEBHOOK_CREATED', key: client.key });
    expect(byType.body.data).toHaveLength(0);
  });

  it('a bound with digits finer than a millisecond is the next millisecond: a record at .177 is before .177999', async () => {
    const client = await t.newClient('Fine bounds');
    t.clock.set('2026-06-03T00:00:00.177Z');
    await t.request({ method: 'POST', url: '/v1/test/things', body: thing, key: client.key });
    const count = async (query: string) => (await t.request({ url: `/v1/events?${query}`, key: client.key })).body.pagination.totalResults as number;
    expect(await count('createdAfter=2026-06-03T00:00:00.177999Z')).toBe(0);
    expect(await count('createdBefore=2026-06-03T00:00:00.177999Z')).toBe(1);
    expect(await count('createdAfter=2026-06-03T00:00:00.177000Z')).toBe(1);
    expect(await count('createdBefore=2026-06-03T00:00:00.177000Z')).toBe(0);
    expect(await count('createdAfter=2026-06-03T02:00:00.177%2B02:00')).toBe(1);
    // Years 0000 to 0099 are years like any other (Date.UTC would read 0050 as 1950).
    expect(await count('createdAfter=0050-01-01')).toBe(1);
    expect(await count('createdBefore=0099-12-31T23:59:59Z')).toBe(0);
  });

  it("404 for a malformed id, a missing id and another client's id alike", async () => {
    const created = await t.request({ method: 'POST', url: '/v1/test/things', body: thing, key: t.clientB.key });
    const responses = await Promise.all([
      t.request({ url: '/v1/events/not-a-uuid' }),
      t.request({ url: '/v1/events/01900000-0000-7000-8000-000000000000' }),
      t.request({ url: `/v1/events/${created.body.data.eventId}` }),
    ]);
    for (const response of responses) {
      expect(response.status).toBe(404);
      expect({ code: response.body.code, message: response.body.message }).toEqual({ code: 'NOT_FOUND', message: 'Event not found' });
    }
  });
});

import { decodeJwt, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldCipherOf } from '../../platform/crypto/field-cipher.js';
import { appWithLogCapture } from '../../../test/support/log-capture.js';
import { listeningPort, rawExchange } from '../../../test/support/raw-http.js';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { issuedCard } from '../../../test/cards/fixtures.js';
import { cardVaultOf } from '../cards/index.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp({ env: { OPENBAAS_VAULT_ALLOWED_ORIGINS: 'https://app.example.com' } });
});
afterAll(async () => {
  await t.close();
});

async function tokenFor(customerId: string, options: { cardId?: string; scopes?: string[]; client?: TestClient } = {}): Promise<string> {
  const body = { userId: customerId, ...(options.cardId ? { cardId: options.cardId } : {}), ...(options.scopes ? { scopes: options.scopes } : {}) };
  const response = await t.request({ method: 'POST', url: '/v1/vault/token', key: (options.client ?? t.clientA).key, body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data.token as string;
}

function revealRequest(token: string | null, body: unknown, headers: Record<string, string> = {}) {
  return t.request({ method: 'POST', url: '/v1/vault/reveal', key: null, body, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
}

async function panOf(cardId: string, clientId = t.clientA.id): Promise<string> {
  const row = await t.deps.db.selectFrom('cards').select('pan_encrypted').where('client_id', '=', clientId).where('id', '=', cardId).executeTakeFirstOrThrow();
  return cardVaultOf(t.deps).decryptPan(row.pan_encrypted, clientId, cardId);
}

/** The client's current signing secret, as only the server holds it (to forge tokens that differ in one claim). */
async function signingSecret(clientId = t.clientA.id): Promise<Uint8Array> {
  const row = await t.deps.db.selectFrom('vault_settings').selectAll().where('client_id', '=', clientId).executeTakeFirstOrThrow();
  return Buffer.from(fieldCipherOf(t.deps).decrypt(row.secret_encrypted, `${clientId}:vault:secret:v${row.secret_version}`), 'base64url');
}

/**
 * Saves a snapshot of the client, then moves its clock on by `seconds`; the function returned
 * restores the snapshot, moving the clock back.
 */
async function snapshotThenAdvance(client: TestClient, seconds: number): Promise<() => Promise<void>> {
  const saved = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'before' } });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  expect((await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds } })).status).toBe(200);
  return async () => {
    const restored = await t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${saved.body.data.id as string}/restore`, key: client.key, body: {} });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
  };
}

describe('configuration and tokens', () => {
  it('the configuration is fixed per client', async () => {
    const first = await t.request({ url: '/v1/vault/config' });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ vaultId: expect.stringMatching(/^tnt[a-z0-9]{8}$/), environment: 'sandbox', cname: 'openbaas.test', routeId: expect.any(String) });
    expect((await t.request({ url: '/v1/vault/config' })).body.data).toEqual(first.body.data);
    expect((await t.request({ url: '/v1/vault/config', key: t.clientB.key })).body.data.vaultId).not.toBe(first.body.data.vaultId);
  });

  it('a token carries the contract claims, lives 6 minutes by the client clock, and is audited', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const response = await t.request({ method: 'POST', url: '/v1/vault/token', body: { userId: wallet.customerId, cardId } });
    expect(response.status).toBe(200);
    const claims = decodeJwt(response.body.data.token);
    expect(claims).toMatchObject({ iss: 'openbaas', aud: 'openbaas-vault', sub: wallet.customerId, cid: t.clientA.id, card: cardId, scope: 'cards:reveal' });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(360);
    expect(claims.iat).toBe(Math.floor(t.clock.now().getTime() / 1000));
    expect(response.body.data.expiresAt).toBe(new Date(((claims.exp ?? 0) * 1000)).toISOString());
    const audit = await t.request({ url: `/v1/vault/audit?cardId=${cardId}&action=TOKEN_ISSUED` });
    expect(audit.body.data).toEqual([expect.objectContaining({ action: 'TOKEN_ISSUED', customerId: wallet.customerId, cardId, fields: ['cards:reveal'], tokenId: claims.jti })]);
  });

  it('another client\'s customer, or a card of another customer: 404', async () => {
    const mine = await issuedCard(t);
    const theirs = await issuedCard(t, t.clientB);
    // Each names the field that was not found (until 2026-12-07 neither did).
    const customer = await t.request({ method: 'POST', url: '/v1/vault/token', body: { userId: theirs.wallet.customerId } });
    expect(customer.status).toBe(404);
    expect(customer.body.details).toEqual([{ field: 'userId', message: 'no such customer' }]);
    const other = await issuedCard(t);
    const card = await t.request({ method: 'POST', url: '/v1/vault/token', body: { userId: mine.wallet.customerId, cardId: other.cardId } });
    expect(card.status).toBe(404);
    expect(card.body.details).toEqual([{ field: 'cardId', message: 'no such card' }]);
  });
});

describe('reveals', () => {
  it('a card id in capitals names the same card: the token, show and reveal answer it, and the audit names it as stored', async () => {
    const client = await t.newClient('Capitals');
    const { wallet, cardId } = await issuedCard(t, client);
    const token = await tokenFor(wallet.customerId, { cardId: cardId.toUpperCase(), client });
    const pan = await panOf(cardId, client.id);
    expect((await revealRequest(token, { cardId, fields: ['pan'] })).body.data.card).toEqual({ pan });
    const upper = await revealRequest(token, { cardId: cardId.toUpperCase(), fields: ['pan'] });
    expect(upper.status).toBe(200);
    expect(upper.body.data.card).toEqual({ pan });
    const shown = await t.request({ url: `/v1/vault/show?type=card&cardId=${cardId.toUpperCase()}&fields=pan`, key: null, headers: { authorization: `Bearer ${token}` } });
    expect(shown.status).toBe(200);
    // The scheme name in any case, as HTTP has it.
    expect((await revealRequest(null, { cardId, fields: ['pan'] }, { authorization: `bearer ${token}` })).body.data.card).toEqual({ pan });
    const audit = (await t.request({ url: '/v1/vault/audit', key: client.key })).body.data as Array<{ cardId: string | null }>;
    expect(audit.length).toBeGreaterThanOrEqual(3);
    expect(audit.every((entry) => entry.cardId === cardId)).toBe(true);
  });

  it('show refuses a field named twice in fields, naming it, as reveal does (it was merged silently)', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const token = await tokenFor(wallet.customerId, { cardId });
    const shown = await t.request({ url: `/v1/vault/show?type=card&cardId=${cardId}&fields=pan,pan`, key: null, headers: { authorization: `Bearer ${token}` } });
    expect(shown.status, JSON.stringify(shown.body)).toBe(400);
    expect(shown.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'fields', message: 'must not repeat an item (pan is named twice)' }] });
  });

  it('show answers aliases; reveal turns them, or a card and fields, into the values, with no-store', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const token = await tokenFor(wallet.customerId, { cardId });
    const shown = await t.request({ url: `/v1/vault/show?type=card&cardId=${cardId}&fields=pan,cvv,expiry`, key: null, headers: { authorization: `Bearer ${token}` } });
    expect(shown.status).toBe(200);
    expect(shown.headers['cache-control']).toBe('no-store');
    const aliases = shown.body.data.card;
    for (const alias of Object.values(aliases)) expect(alias).toMatch(/^tok_sandbox_[A-Za-z0-9]{24}$/);
    const again = await t.request({ url: `/v1/vault/show?type=card&cardId=${cardId}`, key: null, headers: { authorization: `Bearer ${token}` } });
    expect(again.body.data.card).toEqual(aliases);

    const pan = await panOf(cardId);
    const byAlias = await revealRequest(token, { aliases: [aliases.pan, aliases.cvv, aliases.expiryDate] });
    expect(byAlias.status).toBe(200);
    expect(byAlias.headers['cache-control']).toBe('no-store');
    const card = (await t.request({ url: `/v1/cards/${cardId}` })).body.data;
    const expiry = `${String(card.expiryMonth).padStart(2, '0')}${String(card.expiryYear % 100).padStart(2, '0')}`;
    expect(byAlias.body.data.aliases).toEqual({ [aliases.pan]: pan, [aliases.cvv]: expect.stringMatching(/^[0-9]{3}$/), [aliases.expiryDate]: expiry });

    const byCard = await revealRequest(token, { cardId, fields: ['pan', 'cvv', 'expiry'] });
    expect(byCard.body.data.card).toEqual({ pan, cvv: byAlias.body.data.aliases[aliases.cvv], expiryDate: expiry });
    expect(pan.slice(-4)).toBe(card.last4);
  });

  it('documents:reveal gives the customer\'s SSN; without the scope it is refused', async () => {
    const { wallet } = await issuedCard(t);
    const withScope = await tokenFor(wallet.customerId, { scopes: ['documents:reveal'] });
    const revealed = await revealRequest(withScope, { documents: ['ssn', 'documentPassport'] });
    expect(revealed.status).toBe(200);
    expect(revealed.body.data.documents.ssn.replace(/-/g, '')).toBe('123456789');
    expect(revealed.body.data.documents.documentPassport).toBeNull();
    const cardsOnly = await tokenFor(wallet.customerId);
    expect((await revealRequest(cardsOnly, { documents: ['ssn'] })).status).toBe(403);
    expect((await revealRequest(withScope, { cardId: wallet.walletId, fields: ['pan'] })).status).toBe(403);
  });

  it('CORS answers only the configured origins', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const token = await tokenFor(wallet.customerId);
    const allowed = await revealRequest(token, { cardId, fields: ['cvv'] }, { origin: 'https://app.example.com' });
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const other = await revealRequest(token, { cardId, fields: ['cvv'] }, { origin: 'https://evil.example.com' });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await t.request({ method: 'OPTIONS' as never, url: '/v1/vault/reveal', key: null, headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toContain('authorization');
  });

  it('at most 10 reveals of a card per minute of the client clock: the 11th is 429 with Retry-After', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const token = await tokenFor(wallet.customerId);
    for (let index = 0; index < 10; index++) expect((await revealRequest(token, { cardId, fields: ['cvv'] })).status).toBe(200);
    const refused = await revealRequest(token, { cardId, fields: ['cvv'] });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 61 } });
    expect((await revealRequest(await tokenFor(wallet.customerId), { cardId, fields: ['cvv'] })).status).toBe(200);
  });

  it('reveals dated after the clock (moved back by a snapshot restore; the audit stays) do not count against the minute', async () => {
    const client = await t.newClient('vault rewind');
    const { wallet, cardId } = await issuedCard(t, client);
    const restore = await snapshotThenAdvance(client, 3600);
    const token = await tokenFor(wallet.customerId, { client });
    for (let index = 0; index < 10; index++) expect((await revealRequest(token, { cardId, fields: ['cvv'] })).status).toBe(200);
    await restore();
    const response = await revealRequest(await tokenFor(wallet.customerId, { client }), { cardId, fields: ['cvv'] });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  });

  it('every reveal is audited with the fields, the address and the user agent, never a value', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const token = await tokenFor(wallet.customerId);
    await revealRequest(token, { cardId, fields: ['pan', 'cvv'] }, { 'user-agent': 'cardholder-app/1.0' });
    const audit = await t.request({ url: `/v1/vault/audit?cardId=${cardId}&action=REVEALED` });
    expect(audit.body.data).toEqual([expect.objectContaining({ customerId: wallet.customerId, fields: ['cvv', 'pan'], userAgent: 'cardholder-app/1.0', ip: expect.any(String) })]);
    expect(JSON.stringify(audit.body)).not.toContain(await panOf(cardId));
  });
});

describe('reveals refused', () => {
  it('an API key, no header, or a malformed token: 401 VAULT_TOKEN_INVALID', async () => {
    const { cardId } = await issuedCard(t);
    for (const authorization of [t.clientA.key, `Bearer ${t.clientA.key}`, 'Bearer not-a-token', undefined]) {
      const response = await revealRequest(null, { cardId, fields: ['pan'] }, authorization ? { authorization } : {});
      expect(response.status, String(authorization)).toBe(401);
      expect(response.body.code).toBe('VAULT_TOKEN_INVALID');
    }
  });

  it('two Authorization headers, even with a good token first: 401 VAULT_TOKEN_INVALID (a proxy may read the other one)', async () => {
    const { cardId, wallet } = await issuedCard(t);
    const token = await tokenFor(wallet.customerId);
    const port = await listeningPort(t.app);
    const body = JSON.stringify({ cardId, fields: ['pan'] });
    const twice = await rawExchange(port, 'POST /v1/vault/reveal HTTP/1.1', { Authorization: `Bearer ${token}`, authorization: 'Bearer x.y.z' }, body);
    expect(twice.status).toBe(401);
    expect(twice.body).toMatchObject({ code: 'VAULT_TOKEN_INVALID', message: expect.stringContaining('more than one Authorization header') });
    expect((await rawExchange(port, 'POST /v1/vault/reveal HTTP/1.1', { Authorization: `Bearer ${token}` }, body)).status).toBe(200);
  });

  it('400 names only what is wrong in the shape the body was meant for (a card reveal is not told its cardId is unknown to the aliases shape)', async () => {
    const { cardId, wallet } = await issuedCard(t);
    const token = await tokenFor(wallet.customerId);
    const cases: [unknown, { field: string; message: string }[]][] = [
      [{ cardId, fields: ['pan'], x: 1 }, [{ field: 'x', message: 'is not a known field' }]],
      [{ cardId, fields: [] }, [{ field: 'fields', message: 'must NOT have fewer than 1 items' }]],
      [{ cardId }, [{ field: 'fields', message: 'is required' }]],
      // A value wrong inside a form whose fields are all there is told about that value, however
      // many alternatives it failed (it was told that `aliases` is required).
      [{ documents: ['passport'] }, [{ field: 'documents[0]', message: 'must be one of "ssn", "documentIdCard", "documentLicense", "documentPassport"' }]],
      [{ cardId, fields: ['pin'] }, [{ field: 'fields[0]', message: 'must be one of "pan", "cvv", "expiry"' }]],
      [{ documents: ['ssn', 'ssn'] }, [{ field: 'documents', message: 'must not repeat an item (items 0 and 1 are the same)' }]],
      // Failing that, the form missing the fewest of its fields: a card reveal without its cardId.
      [{ fields: ['pin'] }, [{ field: 'cardId', message: 'is required' }, { field: 'fields[0]', message: 'must be one of "pan", "cvv", "expiry"' }]],
      // A body with no field of any form is told every form (until 2026-12-07 the card form was left out).
      [{}, [{ field: 'body', message: 'must have the fields of one of its forms: { aliases }, or { cardId, fields }, or { documents }' }]],
      // …and a field no form knows is named as well (found by the re-audit: the card form was left out again).
      [
        { foo: 1 },
        [
          { field: 'body', message: 'must have the fields of one of its forms: { aliases }, or { cardId, fields }, or { documents }' },
          { field: 'foo', message: 'is not a known field' },
        ],
      ],
    ];
    for (const [body, details] of cases) {
      const response = await revealRequest(token, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.details, JSON.stringify(body)).toEqual(details);
    }
    // Many fields no form knows: at most 20 details, as on every route (60,000 were all listed).
    const many = await revealRequest(token, Object.fromEntries(Array.from({ length: 500 }, (_, index) => [`k${index}`, 1])));
    expect(many.status).toBe(400);
    expect(many.body.details).toHaveLength(20);
    expect(many.body.details[0].message).toMatch(/^must have the fields of one of its forms/);
    expect(many.raw.body.length).toBeLessThan(4000);
  });

  it('400 on a token request that repeats a scope, naming scopes (it was dropped silently)', async () => {
    const { wallet } = await issuedCard(t);
    const response = await t.request({ method: 'POST', url: '/v1/vault/token', key: t.clientA.key, body: { userId: wallet.customerId, scopes: ['cards:reveal', 'cards:reveal'] } });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'scopes', message: 'must not repeat an item (items 0 and 1 are the same)' }] });
  });

  it('without a good token, a malformed body or query is 401 too: the token is checked first, before the request is read', async () => {
    for (const authorization of [t.clientA.key, undefined]) {
      const headers: Record<string, string> = authorization ? { authorization } : {};
      const reveal = await revealRequest(null, { x: 1 }, headers);
      expect(reveal.status, JSON.stringify(reveal.body)).toBe(401);
      expect(reveal.body.code).toBe('VAULT_TOKEN_INVALID');
      const show = await t.request({ url: '/v1/vault/show?type=card&nonsense=1', key: null, headers });
      expect(show.status, JSON.stringify(show.body)).toBe(401);
      expect(show.body.code).toBe('VAULT_TOKEN_INVALID');
    }
  });

  it('a tampered signature, alg none, a wrong audience or issuer, another client\'s claim: 401 VAULT_TOKEN_INVALID', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const token = await tokenFor(wallet.customerId);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flipped = `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    const claims = decodeJwt(token);
    const none = new UnsecuredJWT({ ...claims }).encode();
    const secret = await signingSecret();
    const forge = (changes: Record<string, unknown>, alg = 'HS256') =>
      new SignJWT({ ...claims, ...changes }).setProtectedHeader({ alg, typ: 'JWT', kid: 'v1' }).sign(secret);
    const cases: Record<string, string> = {
      'tampered signature': flipped,
      'alg none': none,
      'wrong audience': await forge({ aud: 'someone-else' }),
      'wrong issuer': await forge({ iss: 'someone-else' }),
      'HS512': await forge({}, 'HS512'),
      'another client named in cid': await forge({ cid: t.clientB.id }),
    };
    for (const [name, forged] of Object.entries(cases)) {
      const response = await revealRequest(forged, { cardId, fields: ['pan'] });
      expect(response.status, name).toBe(401);
      expect(response.body.code, name).toBe('VAULT_TOKEN_INVALID');
    }
  });

  it('a token relabelled with another client\'s id and one relabelled with a made-up id answer alike (which ids exist is not told)', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const claims = decodeJwt(await tokenFor(wallet.customerId));
    const secret = await signingSecret();
    const relabelled = (cid: string) => new SignJWT({ ...claims, cid }).setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: 'v1' }).sign(secret);
    // The other client has its vault settings (made at its first vault call).
    expect((await t.request({ url: '/v1/vault/config', key: t.clientB.key })).status).toBe(200);
    const existing = await revealRequest(await relabelled(t.clientB.id), { cardId, fields: ['pan'] });
    const madeUp = await revealRequest(await relabelled('019c0000-0000-7000-8000-000000000000'), { cardId, fields: ['pan'] });
    expect(existing.status).toBe(401);
    expect(madeUp.status).toBe(401);
    expect({ code: madeUp.body.code, message: madeUp.body.message }).toEqual({ code: existing.body.code, message: existing.body.message });
  });

  it('a key id the client has no secret of answers as a bad signature: which client ids exist, and their secret version, are not told', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const claims = decodeJwt(await tokenFor(wallet.customerId));
    const anyKey = new TextEncoder().encode('not-the-secret-not-the-secret-00');
    const signed = (cid: string, kid: string) => new SignJWT({ ...claims, cid }).setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid }).sign(anyKey);
    const answers = [];
    for (const [cid, kid] of [
      [t.clientA.id, 'v7'],
      [t.clientA.id, 'v0'],
      [t.clientA.id, 'v1'],
      ['019c0000-0000-7000-8000-000000000000', 'v7'],
    ] as const) {
      const response = await revealRequest(await signed(cid, kid), { cardId, fields: ['pan'] });
      expect(response.status, `${cid} ${kid}`).toBe(401);
      answers.push({ code: response.body.code, message: response.body.message });
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size, JSON.stringify(answers)).toBe(1);
  });

  it('an expired token: 401 VAULT_TOKEN_EXPIRED', async () => {
    const { wallet, cardId } = await issuedCard(t);
    const token = await tokenFor(wallet.customerId);
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 361 } });
    const response = await revealRequest(token, { cardId, fields: ['pan'] });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('VAULT_TOKEN_EXPIRED');
  });

  it('a token of another customer, of another client, or for another card: 404', async () => {
    const mine = await issuedCard(t);
    const sameCustomerOther = await issuedCard(t, t.clientA, { wallet: mine.wallet });
    const otherCustomer = await issuedCard(t);
    const theirs = await issuedCard(t, t.clientB);
    const token = await tokenFor(mine.wallet.customerId, { cardId: mine.cardId });
    expect((await revealRequest(token, { cardId: sameCustomerOther.cardId, fields: ['pan'] })).status).toBe(404);
    expect((await revealRequest(token, { cardId: otherCustomer.cardId, fields: ['pan'] })).status).toBe(404);
    expect((await revealRequest(token, { cardId: theirs.cardId, fields: ['pan'] })).status).toBe(404);
    // The card is named, in the body and in GET /v1/vault/show's query, malformed or not (until 2026-12-07 it was not).
    for (const cardId of [theirs.cardId, 'not-an-id']) {
      expect((await revealRequest(token, { cardId, fields: ['pan'] })).body.details).toEqual([{ field: 'cardId', message: 'no such card' }]);
      const shown = await t.request({ url: `/v1/vault/show?type=card&cardId=${cardId}&fields=pan`, key: null, headers: { authorization: `Bearer ${token}` } });
      expect(shown.status).toBe(404);
      expect(shown.body.details).toEqual([{ field: 'cardId', message: 'no such card' }]);
    }
    const theirToken = await tokenFor(theirs.wallet.customerId, { client: t.clientB });
    expect((await revealRequest(theirToken, { cardId: mine.cardId, fields: ['pan'] })).status).toBe(404);
    const unknown = await revealRequest(token, { aliases: ['tok_sandbox_AAAAAAAAAAAAAAAAAAAAAAAA'] });
    expect(unknown.status).toBe(404);
    // Another customer's live alias answers exactly as an unknown one.
    const otherToken = await tokenFor(otherCustomer.wallet.customerId);
    const otherAlias = (await t.request({ url: `/v1/vault/show?type=card&cardId=${otherCustomer.cardId}&fields=pan`, key: null, headers: { authorization: `Bearer ${otherToken}` } })).body.data.card.pan;
    const foreign = await revealRequest(token, { aliases: [otherAlias] });
    expect(foreign.status).toBe(404);
    expect({ ...foreign.body, traceId: null }).toEqual({ ...unknown.body, traceId: null });
    expect(unknown.body.details).toEqual([{ field: 'aliases', message: 'no such alias' }]);
  });

  it('a card that is not ACTIVE: 422 CARD_NOT_ACTIVE; a physical card without revealPhysicalCards: 403', async () => {
    const suspended = await issuedCard(t);
    await t.request({ method: 'PATCH', url: `/v1/cards/${suspended.cardId}`, body: { status: 'SUSPENDED' } });
    const response = await revealRequest(await tokenFor(suspended.wallet.customerId), { cardId: suspended.cardId, fields: ['pan'] });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('CARD_NOT_ACTIVE');

    const physical = await issuedCard(t, t.clientA, { isVirtual: false });
    await t.request({ method: 'POST', url: `/v1/cards/${physical.cardId}/activate` });
    const token = await tokenFor(physical.wallet.customerId);
    expect((await revealRequest(token, { cardId: physical.cardId, fields: ['pan'] })).status).toBe(403);
    const card = (await t.request({ url: `/v1/cards/${physical.cardId}` })).body.data;
    const allow = (revealPhysicalCards: boolean) => t.request({ method: 'PATCH', url: `/v1/cards/programs/${card.cardProgramId as string}`, body: { revealPhysicalCards } });
    expect((await allow(true)).body.data.revealPhysicalCards).toBe(true);
    expect((await revealRequest(token, { cardId: physical.cardId, fields: ['pan'] })).status).toBe(200);
    expect((await allow(false)).body.data.revealPhysicalCards).toBe(false);
    expect((await revealRequest(token, { cardId: physical.cardId, fields: ['pan'] })).status).toBe(403);
  });
});

describe('secret rotation', () => {
  it('a token signed before a rotation keeps working; a second rotation ends it', async () => {
    const client = await t.newClient('Rotation');
    const { wallet, cardId } = await issuedCard(t, client);
    const before = await tokenFor(wallet.customerId, { client });
    const rotated = await t.request({ method: 'POST', url: '/v1/vault/secret/rotate', key: client.key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secretVersion).toBe(2);
    const after = await tokenFor(wallet.customerId, { client });
    expect((await revealRequest(before, { cardId, fields: ['cvv'] })).status).toBe(200);
    expect((await revealRequest(after, { cardId, fields: ['cvv'] })).status).toBe(200);
    await t.request({ method: 'POST', url: '/v1/vault/secret/rotate', key: client.key });
    const refused = await revealRequest(before, { cardId, fields: ['cvv'] });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('VAULT_TOKEN_INVALID');
    expect((await revealRequest(after, { cardId, fields: ['cvv'] })).status).toBe(200);
  });

  it('a secret rotated away stays away after a snapshot restore moves the clock back', async () => {
    const client = await t.newClient('Rotation and restore');
    const { wallet, cardId } = await issuedCard(t, client);
    const restore = await snapshotThenAdvance(client, 3600);
    const old = await tokenFor(wallet.customerId, { client });
    expect((await t.request({ method: 'POST', url: '/v1/vault/secret/rotate', key: client.key })).status).toBe(200);
    // The overlap (6 minutes) ends.
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 600 } });
    expect((await revealRequest(old, { cardId, fields: ['cvv'] })).status).toBe(401);
    await restore();
    const refused = await revealRequest(old, { cardId, fields: ['cvv'] });
    expect(refused.status, JSON.stringify(refused.body)).toBe(401);
    expect(refused.body.code).toBe('VAULT_TOKEN_INVALID');
    // Tokens signed with the current secret work on the restored clock.
    expect((await revealRequest(await tokenFor(wallet.customerId, { client }), { cardId, fields: ['cvv'] })).status).toBe(200);
  });
});

describe('a token and a clock moved back', () => {
  it('a token issued after the snapshot is refused once a restore moves the clock back before its iat; one issued then works', async () => {
    const client = await t.newClient('Token and restore');
    const { wallet, cardId } = await issuedCard(t, client);
    const restore = await snapshotThenAdvance(client, 30 * 86_400);
    const late = await tokenFor(wallet.customerId, { client });
    expect((await revealRequest(late, { cardId, fields: ['cvv'] })).status).toBe(200);
    await restore();
    // Judged by exp alone it would live 30 days and 6 minutes more.
    const refused = await revealRequest(late, { cardId, fields: ['cvv'] });
    expect(refused.status, JSON.stringify(refused.body)).toBe(401);
    expect(refused.body.code).toBe('VAULT_TOKEN_INVALID');
    expect(refused.body.message).toMatch(/issued after the current time of your clock/);
    expect((await revealRequest(await tokenFor(wallet.customerId, { client }), { cardId, fields: ['cvv'] })).status).toBe(200);
  });
});

describe('values never reach the logs', () => {
  it('trace-level logs of tokens, shows and reveals carry no card number, CVV, SSN or token', async () => {
    const capture = await appWithLogCapture(t);
    const { app } = capture;
    try {
      const { wallet, cardId } = await issuedCard(t);
      const headers = { authorization: t.clientA.key, 'content-type': 'application/json' };
      const issued = await app.inject({ method: 'POST', url: '/v1/vault/token', headers, payload: { userId: wallet.customerId, scopes: ['cards:reveal', 'documents:reveal'] } });
      const token = issued.json().data.token as string;
      const bearer = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      await app.inject({ method: 'GET', url: `/v1/vault/show?type=card&cardId=${cardId}`, headers: bearer });
      const revealed = await app.inject({ method: 'POST', url: '/v1/vault/reveal', headers: bearer, payload: { cardId, fields: ['pan', 'cvv', 'expiry'] } });
      const documents = await app.inject({ method: 'POST', url: '/v1/vault/reveal', headers: bearer, payload: { documents: ['ssn'] } });
      const values = revealed.json().data.card;
      expect(capture.logged()).toContain(cardId);
      for (const secret of [values.pan, values.pan.slice(6), token, documents.json().data.documents.ssn]) expect(capture.logged()).not.toContain(secret);
      expect(capture.logged()).not.toMatch(new RegExp(`"cvv":"${values.cvv as string}"`));
    } finally {
      await app.close();
    }
  });

  it('a token put in the hosted frame\'s query string (it belongs in the fragment) is not logged', async () => {
    const capture = await appWithLogCapture(t);
    try {
      const { wallet } = await issuedCard(t);
      const token = await tokenFor(wallet.customerId);
      // The path as the router reads it, percent-decoded: an encoded spelling is the frame too.
      for (const url of [`/vault/frame?token=${token}`, `/vault/frame/?lang=en&token=${token}`, `/vault/fram%65?token=${token}`, `/v%61ult/frame?token=${token}`]) {
        expect((await capture.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
      }
      const logged = capture.logged();
      expect(logged).toContain('"url":"/vault/frame?[REDACTED]"');
      expect(logged).toContain('"url":"/vault/frame/?[REDACTED]"');
      expect(logged.split('"url":"/vault/frame?[REDACTED]"')).toHaveLength(4);
      expect(logged).not.toContain(token);
      expect(logged).not.toContain(token.split('.')[2] as string);
    } finally {
      await capture.close();
    }
  });
});

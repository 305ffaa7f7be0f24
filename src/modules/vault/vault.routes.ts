import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { clientNow, readClockOffset } from '../../platform/client-clock.js';
import { fieldCipherOf } from '../../platform/crypto/field-cipher.js';
import { withClientTransaction } from '../../platform/db/client-fence.js';
import { authorizationHeadersOf } from '../../platform/http/auth.js';
import { authOf } from '../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../platform/http/envelope.js';
import { runWrite, requestContext } from '../../platform/http/idempotency.js';
import { listQueryProperties } from '../../platform/http/pagination.js';
import { validationError } from '../../platform/http/errors.js';
import { framePage, frameContentSecurityPolicy, frameNonce } from './frame.js';
import { bearerToken, invalidVaultToken, rotateVaultSecret, vaultScopes, verifyVaultToken, type VaultTokenClaims } from './vault-token.js';
import * as vault from './vault.service.js';
import { assert } from '../../platform/assert.js';

const tags = ['Vault'];
const exampleId = '019ca945-0a00-74c1-8797-3bfde107f365';
const CardField = Type.Union([Type.Literal('pan'), Type.Literal('cvv'), Type.Literal('expiry')]);
const DocumentField = Type.Union(vault.vaultDocumentFields.map((field) => Type.Literal(field)));

const TokenBody = Type.Object(
  {
    userId: Text.id({ description: 'the customer (cardholder) the token is for' }),
    cardId: Type.Optional(Text.id({ description: 'restricts the token to this card of the customer' })),
    scopes: Type.Optional(
      Type.Array(Type.Union(vaultScopes.map((scope) => Type.Literal(scope))), {
        minItems: 1,
        maxItems: 2,
        // As the reveal's fields and documents: a repeated scope is refused, not dropped (until 2026-12-06 it was dropped; found by an audit).
        uniqueItems: true,
        description: 'cards:reveal (default): card number, CVV, expiry; documents:reveal: the SSN and document numbers; each at most once',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ userId: exampleId, cardId: '019ca945-0a00-7b2e-8d41-2f6c9e1a3b57' }] },
);

const RevealBody = Type.Union(
  [
    Type.Object({ aliases: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 30 }) }, { additionalProperties: false }),
    Type.Object({ cardId: Text.id(), fields: Type.Array(CardField, { minItems: 1, maxItems: 3, uniqueItems: true }) }, { additionalProperties: false }),
    Type.Object({ documents: Type.Array(DocumentField, { minItems: 1, maxItems: 4, uniqueItems: true }) }, { additionalProperties: false }),
  ],
  { examples: [{ cardId: '019ca945-0a00-7b2e-8d41-2f6c9e1a3b57', fields: ['pan', 'cvv', 'expiry'] }] },
);

const ShowQuery = Type.Object(
  {
    type: Type.Literal('card'),
    cardId: Text.id(),
    fields: Type.Optional(Type.String({ maxLength: 40, pattern: '^(pan|cvv|expiry)(,(pan|cvv|expiry)){0,2}$', description: 'comma-separated: pan,cvv,expiry (default all three)' })),
  },
  { additionalProperties: false },
);

const AuditQuery = Type.Object(
  {
    ...listQueryProperties,
    customerId: Type.Optional(Text.id()),
    cardId: Type.Optional(Text.id()),
    action: Type.Optional(Type.Union([Type.Literal('TOKEN_ISSUED'), Type.Literal('REVEALED')])),
  },
  { additionalProperties: false },
);

const AuditEntry = Type.Object(
  {
    id: Type.String(),
    action: Type.Union([Type.Literal('TOKEN_ISSUED'), Type.Literal('REVEALED')]),
    customerId: Type.String(),
    cardId: Type.Union([Type.String(), Type.Null()]),
    fields: Type.Array(Type.String(), { description: 'the scopes of an issued token, or the fields revealed (never their values)' }),
    tokenId: Type.String({ description: 'the token\'s jti' }),
    ip: Type.Union([Type.String(), Type.Null()]),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'VaultAuditEntry' },
);

function requesterOf(request: FastifyRequest): vault.Requester {
  const agent = request.headers['user-agent'];
  return { ip: request.ip ?? null, userAgent: typeof agent === 'string' ? agent : null };
}

/** CORS for the browser-facing vault endpoints: only the configured origins, never credentials. */
function allowOrigin(deps: Deps, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('vary', 'Origin');
  const origin = request.headers.origin;
  if (typeof origin === 'string' && deps.config.vaultAllowedOrigins.includes(origin)) {
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-allow-headers', 'authorization, content-type');
    reply.header('access-control-allow-methods', 'GET, POST');
    reply.header('access-control-max-age', '600');
  }
}

/** A browser-facing request's verified token and the client's time it was judged by (one clock read for both). */
interface VerifiedToken {
  claims: VaultTokenClaims;
  now: Date;
}

const verifiedTokens = new WeakMap<FastifyRequest, VerifiedToken>();

/**
 * onRequest of the browser-facing endpoints: CORS and no-store headers, then the vault token,
 * before the body is read or the query validated, so a request without a good token is 401
 * whatever it carries (as the API key check is for the other routes), never a 400 that answers
 * questions about the request's shape to someone without a token.
 */
function vaultTokenHook(deps: Deps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    allowOrigin(deps, request, reply);
    reply.header('cache-control', 'no-store');
    // As for API keys: a proxy may read the other of two headers, so a request with two is nobody's
    // (until 2026-12-05 the vault routes used the first; found by an audit).
    if (authorizationHeadersOf(request.raw.rawHeaders) > 1) throw invalidVaultToken('the request carries more than one Authorization header: send exactly one');
    let now: Date | undefined;
    const claims = await verifyVaultToken(deps.db, fieldCipherOf(deps), bearerToken(request.headers.authorization), async (clientId) => {
      now = clientNow(deps.clock, await readClockOffset(deps.db, clientId));
      return now;
    });
    assert(now !== undefined, 'a verified token was judged by its client\'s clock');
    verifiedTokens.set(request, { claims, now });
  };
}

function verifiedToken(request: FastifyRequest): VerifiedToken {
  const verified = verifiedTokens.get(request);
  assert(verified !== undefined, 'the vault token hook verified this request');
  return verified;
}

export function registerVaultRoutes(app: App, deps: Deps): void {
  app.get(
    '/v1/vault/config',
    {
      schema: {
        operationId: 'vault.getConfig',
        tags,
        summary: 'The vault configuration the card-data SDK is initialised with',
        response: {
          200: Envelope(
            Type.Object(
              {
                vaultId: Type.String({ examples: ['tnt4k2m9x7q'] }),
                environment: Type.Union([Type.Literal('sandbox'), Type.Literal('live')]),
                cname: Type.String({ description: 'the host the SDK calls' }),
                routeId: Type.String({ format: 'uuid' }),
              },
              { title: 'VaultConfig' },
            ),
          ),
        },
      },
    },
    async (request) => {
      const context = requestContext(request, deps);
      return { message: 'Vault configuration retrieved', data: await vault.vaultConfig(deps.db, deps, context.clientId, context.now), traceId: String(request.id) };
    },
  );

  app.post(
    '/v1/vault/token',
    {
      schema: {
        operationId: 'vault.createToken',
        tags,
        summary: 'Issue a vault token (a JWT, 6 minutes) for a cardholder',
        description:
          'Your server asks for it and hands it to the cardholder\'s browser or app, which uses it with the vault SDK or the hosted frame (/vault/frame#token=…). ' +
          'HS256, signed with your vault secret; claims iss, aud, sub (customer), cid (client), card (optional), scope, iat, exp, jti. Another client\'s customer or card: 404.',
        body: TokenBody,
        response: {
          200: Envelope(Type.Object({ token: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }, { title: 'VaultToken' })),
        },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Vault token issued',
        data: await vault.issueVaultToken(tx, context, deps, request.body, requesterOf(request)),
      }));
    },
  );

  app.post(
    '/v1/vault/secret/rotate',
    {
      schema: {
        operationId: 'vault.rotateSecret',
        tags,
        summary: 'Rotate the secret that signs vault tokens',
        description: 'Tokens signed with the previous secret keep working until they expire (6 minutes); a second rotation within that time ends them at once.',
        response: {
          200: Envelope(Type.Object({ secretVersion: Type.Integer(), previousSecretValidUntil: Type.String({ format: 'date-time' }) }, { title: 'VaultSecretRotation' })),
        },
      },
    },
    async (request, reply) => {
      await runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Vault secret rotated',
        data: await rotateVaultSecret(tx, fieldCipherOf(deps), context.clientId, context.now),
      }));
    },
  );

  app.get(
    '/v1/vault/audit',
    {
      schema: {
        operationId: 'vault.listAudit',
        tags,
        summary: 'The vault audit: every token issued and every reveal, newest first',
        querystring: AuditQuery,
        response: { 200: ListEnvelope(AuditEntry) },
      },
    },
    async (request) => {
      const { data, pagination } = await vault.listAudit(deps.db, authOf(request).clientId, request.query);
      return { message: 'Vault audit retrieved', data: data as never, pagination, traceId: String(request.id) };
    },
  );

  // The browser-facing endpoints: authenticated by the vault token only (public to the API-key check).
  for (const url of ['/v1/vault/show', '/v1/vault/reveal']) {
    app.options(url, { config: { public: true, rateLimit: false }, schema: { hide: true } }, async (request, reply) => {
      allowOrigin(deps, request, reply);
      return reply.code(204).send();
    });
  }

  app.get(
    '/v1/vault/show',
    {
      config: { public: true },
      onRequest: vaultTokenHook(deps),
      schema: {
        operationId: 'vault.show',
        tags,
        summary: 'A card\'s aliases (vault token only): what POST /v1/vault/reveal turns into values',
        description: 'Authorization: Bearer <vault token>; an API key is refused (401). The card must be the token\'s customer\'s (404 otherwise), ACTIVE (422 CARD_NOT_ACTIVE).',
        security: [{ vaultToken: [] }],
        querystring: ShowQuery,
        response: {
          200: Envelope(
            Type.Object({ card: Type.Object({ pan: Type.Optional(Type.String()), cvv: Type.Optional(Type.String()), expiryDate: Type.Optional(Type.String()) }) }, { title: 'VaultShow' }),
          ),
        },
      },
    },
    async (request) => {
      const { claims, now } = verifiedToken(request);
      const fields = (request.query.fields ?? 'pan,cvv,expiry').split(',') as Array<'pan' | 'cvv' | 'expiry'>;
      // As the reveal's `fields` array (uniqueItems): a field named twice is a mistake, not merged
      // silently (until 2026-12-08; found by an audit).
      const repeated = fields.find((field, index) => fields.indexOf(field) !== index);
      if (repeated !== undefined) throw validationError('fields', `must not repeat an item (${repeated} is named twice)`);
      const data = await withClientTransaction(deps.db, claims.clientId, (tx) => vault.showCard(tx, deps, claims, request.query.cardId, fields, now));
      return { message: 'Card aliases retrieved', data, traceId: String(request.id) };
    },
  );

  app.post(
    '/v1/vault/reveal',
    {
      config: { public: true },
      onRequest: vaultTokenHook(deps),
      schema: {
        operationId: 'vault.reveal',
        tags,
        summary: 'Values in clear for the cardholder (vault token only)',
        description:
          '{ cardId, fields } or { aliases } (cards:reveal): the card number, CVV and expiry (MMYY) of an ACTIVE card of the token\'s customer; at most ' +
          `${vault.revealsPerCardPerMinute} reveals per card per minute (429). { documents } (documents:reveal): the customer's SSN and document numbers. ` +
          'Answers carry Cache-Control: no-store; CORS only for OPENBAAS_VAULT_ALLOWED_ORIGINS; every reveal is audited.',
        security: [{ vaultToken: [] }],
        body: RevealBody,
        response: { 200: Envelope(Type.Record(Type.String(), Type.Unknown(), { title: 'VaultReveal' })) },
      },
    },
    async (request) => {
      const { claims, now } = verifiedToken(request);
      const data = await withClientTransaction(deps.db, claims.clientId, (tx) => vault.reveal(tx, deps, claims, request.body, now, requesterOf(request)));
      return { message: 'Revealed', data, traceId: String(request.id) };
    },
  );

  app.get('/vault/frame', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    const nonce = frameNonce();
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', frameContentSecurityPolicy(nonce, deps.config.vaultFrameAncestors))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
      .send(framePage(nonce));
  });
}

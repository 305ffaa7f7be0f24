import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { Envelope, ListEnvelope, Text } from '../../platform/http/envelope.js';
import { listQueryProperties } from '../../platform/http/pagination.js';
import type { ApiKeyResolver } from './api-key-resolver.js';
import * as tenants from './tenants.service.js';

const ClientSchema = Type.Object({ id: Type.String(), name: Type.String(), createdAt: Type.String() }, { title: 'Client' });
const ApiKeySchema = Type.Object(
  {
    key: Type.String({ description: 'the full key: shown once, stored only as a hash' }),
    prefix: Type.String(),
    clientId: Type.String(),
    readOnly: Type.Boolean(),
    allowedCidrs: Type.Array(Type.String()),
    createdAt: Type.String(),
  },
  { title: 'ApiKey' },
);
const AdminApiKeySummarySchema = Type.Object(
  {
    prefix: Type.String({ description: 'the first 16 characters of the key (what DELETE /v1/admin/keys/:keyPrefix takes)' }),
    clientId: Type.String(),
    readOnly: Type.Boolean(),
    allowedCidrs: Type.Array(Type.String(), { description: 'the addresses the key is accepted from; empty means any' }),
    createdAt: Type.String({ format: 'date-time' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the key was revoked; null while it works' }),
  },
  { title: 'AdminApiKeySummary' },
);
const KeyOptionsSchema = Type.Object(
  {
    readOnly: Type.Optional(Type.Boolean()),
    allowedCidrs: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
  },
  { additionalProperties: false },
);

/**
 * Tenant administration over HTTP, for a running server whose embedded database the CLI cannot
 * open. These routes exist only when OPENBAAS_ADMIN_KEY is set.
 */
export function registerAdminRoutes(app: App, deps: Deps, resolver: ApiKeyResolver): void {
  if (!deps.config.adminKey) return;
  const config = { admin: true } as const;
  const security = [{ adminKey: [] }];

  app.post(
    '/v1/admin/clients',
    {
      config,
      schema: {
        operationId: 'admin.createClient',
        tags: ['Admin'],
        summary: 'Create a client (tenant) and its first API key',
        security,
        body: Type.Object(
          { name: Text.short({ maxLength: tenants.clientNameLengthMax }), ...KeyOptionsSchema.properties },
          { additionalProperties: false, examples: [{ name: 'Acme Payments' }] },
        ),
        response: { 201: Envelope(Type.Object({ client: ClientSchema, apiKey: ApiKeySchema })) },
      },
    },
    async (request, reply) => {
      const { name, ...keyOptions } = request.body;
      const result = await tenants.createClientWithKey(deps, name, keyOptions);
      return reply.code(201).send({ message: 'Client created', data: result, traceId: String(request.id) });
    },
  );

  app.get(
    '/v1/admin/clients',
    {
      config,
      schema: {
        operationId: 'admin.listClients',
        tags: ['Admin'],
        summary: 'List the clients (tenants), newest first',
        description: 'As `openbaas clients list`, for a running server whose embedded database the CLI cannot open.',
        security,
        querystring: Type.Object(listQueryProperties, { additionalProperties: false }),
        response: { 200: ListEnvelope(ClientSchema) },
      },
    },
    async (request) => {
      const { clients, pagination } = await tenants.listClientsPage(deps, request.query);
      return { message: 'Clients retrieved', data: clients, pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/admin/clients/:clientId/keys',
    {
      config,
      schema: {
        operationId: 'admin.listApiKeys',
        tags: ['Admin'],
        summary: "List a client's API keys, newest first (revoked ones too)",
        description: 'Each key by its prefix, never the key itself nor its hash (the key is shown once, when created). 404 for an unknown client.',
        security,
        params: Type.Object({ clientId: Text.id() }),
        querystring: Type.Object(listQueryProperties, { additionalProperties: false }),
        response: { 200: ListEnvelope(AdminApiKeySummarySchema) },
      },
    },
    async (request) => {
      const { keys, pagination } = await tenants.listClientKeysPage(deps, request.params.clientId, request.query);
      return { message: 'API keys retrieved', data: keys, pagination, traceId: String(request.id) };
    },
  );

  app.post(
    '/v1/admin/clients/:clientId/keys',
    {
      config,
      schema: {
        operationId: 'admin.createApiKey',
        tags: ['Admin'],
        summary: 'Create another API key for a client',
        security,
        params: Type.Object({ clientId: Text.id() }),
        body: Type.Object(KeyOptionsSchema.properties, { additionalProperties: false, examples: [{ readOnly: true, allowedCidrs: ['10.0.0.0/8'] }] }),
        response: { 201: Envelope(Type.Object({ apiKey: ApiKeySchema })) },
      },
    },
    async (request, reply) => {
      const apiKey = await tenants.createApiKey(deps, request.params.clientId, request.body);
      return reply.code(201).send({ message: 'API key created', data: { apiKey }, traceId: String(request.id) });
    },
  );

  app.delete(
    '/v1/admin/keys/:keyPrefix',
    {
      config,
      schema: {
        operationId: 'admin.revokeApiKey',
        tags: ['Admin'],
        summary: 'Revoke an API key by its prefix',
        description: 'keyPrefix is the first 16 characters of the key (sk_test_Ab12Cd34); the whole key revokes that key too.',
        security,
        params: Type.Object({ keyPrefix: Text.short() }),
        response: {
          200: Envelope(Type.Object({ prefix: Type.String(), clientId: Type.String(), revokedAt: Type.String() })),
        },
      },
    },
    async (request) => {
      const revoked = await tenants.revokeApiKey(deps, request.params.keyPrefix);
      resolver.forgetAll();
      return { message: 'API key revoked', data: revoked, traceId: String(request.id) };
    },
  );
}

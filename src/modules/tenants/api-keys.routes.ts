import { Type } from 'typebox';
import type { App } from '../../platform/http/app-type.js';
import type { Deps } from '../../platform/deps.js';
import { authOf } from '../../platform/http/context.js';
import { ListEnvelope } from '../../platform/http/envelope.js';
import { listQueryProperties, paginate } from '../../platform/http/pagination.js';
import * as tenants from './tenants.service.js';
import * as store from './tenants.store.js';

const exampleTime = '2026-03-01T12:00:00.000Z';

/** A key without its secret: the full key is shown once, when created, and stored only as a hash. */
const ApiKeySummarySchema = Type.Object(
  {
    prefix: Type.String({ description: 'the first 16 characters of the key: enough to recognise it, too few to use it', examples: ['sk_test_Ab12Cd34'] }),
    readOnly: Type.Boolean({ description: 'true when the key may only read (GET)' }),
    allowedCidrs: Type.Array(Type.String(), { description: 'the addresses the key is accepted from; empty means any', examples: [['10.0.0.0/8']] }),
    createdAt: Type.String({ format: 'date-time', examples: [exampleTime] }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the key was revoked; null while it works' }),
    current: Type.Boolean({ description: 'true for the key making this request' }),
  },
  { title: 'ApiKeySummary' },
);

/** The calling client's own API keys, read-only: keys are created and revoked with the CLI or the admin API. */
export function registerApiKeyRoutes(app: App, deps: Deps): void {
  app.get(
    '/v1/api-keys',
    {
      schema: {
        operationId: 'apiKeys.list',
        tags: ['API keys'],
        summary: "List your client's API keys (newest first, revoked ones too)",
        description:
          'Read-only: the API cannot create or revoke keys. Create them with `openbaas keys create` or ' +
          '`POST /v1/admin/clients/:clientId/keys`, revoke them with `openbaas keys revoke` or ' +
          '`DELETE /v1/admin/keys/:keyPrefix` (admin API, enabled by OPENBAAS_ADMIN_KEY). Lists only the keys of the ' +
          'client of the calling key, which read-only keys may call too; never the key itself nor its hash, only its prefix.',
        querystring: Type.Object(listQueryProperties, { additionalProperties: false }),
        response: { 200: ListEnvelope(ApiKeySummarySchema) },
      },
    },
    async (request) => {
      const { clientId, keyId } = authOf(request);
      const { rows, pagination } = await paginate(deps.db, store.apiKeysQuery(deps.db, clientId), request.query, { id: 'id', createdAt: 'created_at' });
      return {
        message: 'API keys retrieved',
        data: rows.map((row) => tenants.apiKeySummaryView(row, keyId)),
        pagination,
        traceId: String(request.id),
      };
    },
  );
}

import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Deps } from '../deps.js';
import type { App } from './app-type.js';

/**
 * The OpenAPI 3.1 document (/openapi.json, /openapi.yaml) and the interactive reference (/docs),
 * built from the routes' TypeBox schemas.
 */
export async function registerOpenApi(app: App, deps: Deps): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'OpenBaaS API',
        version: '1',
        description:
          'Banking-as-a-Service core: customers, compliance, wallets, bank rails, transfers, cards and webhooks. ' +
          'Every success body is { message, data, traceId }; every error body is { message, code, details?, traceId }.',
      },
      servers: [{ url: deps.config.publicBaseUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Your API key, raw or as "Bearer <key>".' },
          adminKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'OPENBAAS_ADMIN_KEY' },
        },
      },
      security: [{ apiKey: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}

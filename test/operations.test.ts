import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { parse as parseYaml } from 'yaml';
import { createTestApp, type TestContext } from './harness.js';
import { errorCodes } from '../src/platform/http/error-codes.js';
import { eventTypes } from '../src/modules/webhooks/event-types.js';

let t: TestContext;

beforeAll(async () => {
  // With an admin key, so the document holds the admin operations too and their operationIds are
  // pinned with the rest (until 2026-12-07 they were not: renaming one failed no test; found by an audit).
  t = await createTestApp({ env: { OPENBAAS_ADMIN_KEY: 'adm_test_operations_0123456789' } });
});
afterAll(async () => {
  await t.close();
});

describe('health', () => {
  it('is live and ready without an API key', async () => {
    const live = await t.request({ url: '/health/live', key: null });
    expect(live.status).toBe(200);
    const ready = await t.request({ url: '/health/ready', key: null });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', database: t.database.kind });
  });
});

describe('metrics', () => {
  it('exposes request latencies by route and status, and the database pool', async () => {
    await t.request({ url: '/v1/assets' });
    await t.request({ url: '/v1/assets', key: null });
    const response = await t.request({ url: '/metrics', key: null });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    expect(response.body).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/v1\/assets",status_code="200"\} \d+/);
    expect(response.body).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/v1\/assets",status_code="401"\} \d+/);
    expect(response.body).toMatch(/db_pool_connections\{state="total"\}/);
  });
});

describe('metrics behind OPENBAAS_METRICS_TOKEN', () => {
  const token = 'metrics-token-0123456789';
  let guarded: TestContext;
  beforeAll(async () => {
    guarded = await createTestApp({ env: { OPENBAAS_METRICS_TOKEN: token } });
  });
  afterAll(async () => {
    await guarded.close();
  });

  it('answers the token, as "Bearer <token>" or alone', async () => {
    for (const key of [`Bearer ${token}`, token]) {
      const response = await guarded.request({ url: '/metrics', key });
      expect(response.status, key).toBe(200);
      expect(response.body).toMatch(/db_pool_connections\{state="total"\}/);
    }
  });

  it('refuses no key, another token and a client API key with 401, the metrics unread; health and the reference stay public', async () => {
    for (const key of [null, 'metrics-token-0123456780', guarded.clientA.key]) {
      const response = await guarded.request({ url: '/metrics', key });
      expect(response.status, String(key)).toBe(401);
      expect(response.body).toMatchObject({ code: 'UNAUTHENTICATED' });
      expect(JSON.stringify(response.body)).not.toContain('db_pool_connections');
    }
    expect((await guarded.request({ url: '/health/live', key: null })).status).toBe(200);
    expect((await guarded.request({ url: '/openapi.json', key: null })).status).toBe(200);
  });

  it('is refused at start when shorter than 16 characters or with white space', async () => {
    const { ConfigError, loadConfig } = await import('../src/platform/config.js');
    expect(() => loadConfig({ OPENBAAS_METRICS_TOKEN: 'short-token' })).toThrow(ConfigError);
    expect(() => loadConfig({ OPENBAAS_METRICS_TOKEN: 'metrics token 0123456789' })).toThrow(ConfigError);
    expect(loadConfig({ OPENBAAS_METRICS_TOKEN: token }).metricsToken).toBe(token);
    expect(loadConfig({}).metricsToken).toBeUndefined();
  });
});

// Until the thirty-fourth session "-1" was told "must be a whole number" (it is one; it is below
// the range), and a number out of range "must be between …" (found by an audit).
describe('whole-number settings', () => {
  it.each(['-1', '60001', '1.5', 'ten'])('SHUTDOWN_DRAIN_MS=%s is refused with the range in the message', async (raw) => {
    const { loadConfig } = await import('../src/platform/config.js');
    expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: raw })).toThrow(`SHUTDOWN_DRAIN_MS must be a whole number from 0 to 60000, got "${raw}"`);
  });
});

// Until 2026-12-08 any text was taken and handed to the vault SDK as its cname (found by an audit).
describe('OPENBAAS_VAULT_PUBLIC_HOST', () => {
  it.each(['bad host/x', 'vault.example.com/path', 'https://vault.example.com', 'vault.example.com:0', 'vault.example.com:70000', '256.1.1.1', '[::1', 'a..b'])(
    '%s is refused, naming the variable',
    async (raw) => {
      const { loadConfig } = await import('../src/platform/config.js');
      expect(() => loadConfig({ OPENBAAS_VAULT_PUBLIC_HOST: raw })).toThrow(`OPENBAAS_VAULT_PUBLIC_HOST must be a host name or IP address, with :port or not (such as vault.example.com or vault.example.com:8443), got "${raw}"`);
    },
  );

  it('takes a host name, an address and either with a port; defaults to the host of PUBLIC_BASE_URL', async () => {
    const { loadConfig } = await import('../src/platform/config.js');
    for (const raw of ['vault.example.com', 'Vault.Example.com:8443', '10.0.0.5', '[2001:db8::1]:443', 'vault']) {
      expect(loadConfig({ OPENBAAS_VAULT_PUBLIC_HOST: raw }).vaultPublicHost).toBe(raw.toLowerCase());
    }
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com' }).vaultPublicHost).toBe('api.example.com');
  });
});

describe('OpenAPI', () => {
  it('serves a valid OpenAPI 3.1 document', async () => {
    const response = await t.request({ url: '/openapi.json', key: null });
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(response.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every API route with its error body, and no hidden route', async () => {
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    const paths = Object.keys(document.paths);
    for (const route of t.routes.filter((entry) => entry.url.startsWith('/v1') && !entry.public)) {
      const openApiPath = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
      expect(paths, route.url).toContain(openApiPath);
      const operation = document.paths[openApiPath][route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.url}`).toBeDefined();
      expect(operation.responses['4XX'] ?? operation.responses['4xx'], `${route.method} ${route.url}`).toBeDefined();
    }
    expect(paths).not.toContain('/v1/customers/{id}/transactions');
  });

  it('gives every string of every request body a maximum length', async () => {
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    const unbounded: string[] = [];
    const visit = (given: Record<string, unknown> | undefined, where: string) => {
      // Shared schemas are components, reached through $ref.
      const schema = typeof given?.$ref === 'string' ? document.components.schemas[given.$ref.split('/').pop() ?? ''] : given;
      if (!schema || typeof schema !== 'object') return;
      if (schema.type === 'string' && schema.maxLength === undefined && schema.enum === undefined && schema.const === undefined) unbounded.push(where);
      for (const [key, value] of Object.entries(schema)) {
        if (key === 'properties' && value && typeof value === 'object') {
          for (const [name, child] of Object.entries(value)) visit(child as Record<string, unknown>, `${where}.${name}`);
        } else if ((key === 'items' || key === 'additionalProperties') && value && typeof value === 'object') {
          visit(value as Record<string, unknown>, `${where}[]`);
        } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
          value.forEach((child, index) => visit(child as Record<string, unknown>, `${where}|${index}`));
        }
      }
    };
    for (const [path, operations] of Object.entries<Record<string, { requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> } }>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const content of Object.values(operation.requestBody?.content ?? {})) visit(content.schema, `${method.toUpperCase()} ${path}`);
      }
    }
    expect(unbounded).toEqual([]);
  });
});

describe('OpenAPI for code generators', () => {
  // The document's operations, as [METHOD path, operation].
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const operationsOf = (document: any): Array<[string, any]> =>
    Object.entries<Record<string, unknown>>(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as [string, unknown]),
    );
  const writeMethods = ['POST', 'PUT', 'PATCH', 'DELETE'];

  it('gives every operation a unique operationId in resource.action form, and keeps them stable', async () => {
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    const missing: string[] = [];
    const ids: string[] = [];
    for (const [where, operation] of operationsOf(document)) {
      if (typeof operation.operationId !== 'string') missing.push(where);
      else ids.push(`${operation.operationId} ${where}`);
    }
    expect(missing).toEqual([]);
    const bare = ids.map((entry) => entry.split(' ')[0] ?? '');
    expect(new Set(bare).size).toBe(bare.length);
    for (const id of bare) expect(id).toMatch(/^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)+$/);
    // Renaming an operationId breaks every generated SDK: the list is pinned, so a change is deliberate.
    await expect(ids.sort().join('\n') + '\n').toMatchFileSnapshot('./__snapshots__/openapi-operation-ids.txt');
  });

  it('declares the Idempotency-Key header on every write that takes one, and on no read', async () => {
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    const lacking: string[] = [];
    const extra: string[] = [];
    const without: string[] = [];
    for (const [where, operation] of operationsOf(document)) {
      const declares = (operation.parameters ?? []).some((parameter: { $ref?: string }) => parameter.$ref === '#/components/parameters/IdempotencyKey');
      const write = writeMethods.includes(where.split(' ')[0] ?? '');
      // The admin routes belong to no client, and a vault reveal's answer is never stored.
      const takesNone = / \/v1\/admin\/| \/v1\/vault\/reveal$/.test(where);
      if (write && takesNone) {
        without.push(where);
        if (declares) extra.push(where);
      } else if (write && !declares) lacking.push(where);
      if (!write && declares) extra.push(where);
    }
    expect(lacking).toEqual([]);
    expect(extra).toEqual([]);
    expect(without).toContain('POST /v1/vault/reveal');
    expect(document.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
  });

  it('declares a JSON body that may be left out (its schema takes {}) as not required, and every other body as required', async () => {
    // Until 2026-12-05 every body was required, and the SDK asked for body: {} on a reversal (found by an audit).
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    const optional = operationsOf(document)
      .filter(([, operation]) => operation.requestBody?.required === false)
      .map(([where]) => where);
    expect(optional).toEqual(
      expect.arrayContaining(['POST /v1/sandbox/card-transactions/{parentId}/completions', 'POST /v1/sandbox/card-transactions/{parentId}/reversals', 'POST /v1/sandbox/bank-transactions/{id}/fail']),
    );
    for (const [where, operation] of operationsOf(document)) {
      if (operation.requestBody === undefined || optional.includes(where)) continue;
      expect(operation.requestBody.required, where).toBe(true);
    }
    expect(optional).not.toContain('POST /v1/customers/individual');
    // A PATCH whose schema asks for one field at least stays required.
    expect(optional).not.toContain('PATCH /v1/cards/programs/{id}');
  });

  it('gives every request body an example', async () => {
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    const without: string[] = [];
    for (const [where, operation] of operationsOf(document)) {
      // @fastify/swagger moves a body schema's first example to the media type's `example`.
      for (const [type, content] of Object.entries<{ example?: unknown; examples?: object }>(operation.requestBody?.content ?? {})) {
        if (content.example === undefined && content.examples === undefined) without.push(`${where} ${type}`);
      }
    }
    expect(without).toEqual([]);
  });

  it('describes the error body once, with every error code as an enum, and every 4XX/5XX answer refers to it', async () => {
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    expect(document.components.schemas.Error.properties.code.enum).toEqual(Object.keys(errorCodes));
    for (const [where, operation] of operationsOf(document)) {
      for (const status of ['4XX', '5XX']) {
        expect(operation.responses[status]?.content['application/json'].schema, `${where} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it('shares named schemas through components and $ref', async () => {
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    // No titled schema is left inline in an operation: each is a component, referenced.
    expect(JSON.stringify(document.paths).includes('"title":')).toBe(false);
    const text = JSON.stringify(document);
    for (const name of ['Customer', 'Wallet', 'BankTransaction', 'Webhook', 'WalletTransaction', 'Address']) {
      expect(document.components.schemas[name], name).toBeDefined();
      expect(text.includes(`"#/components/schemas/${name}"`), name).toBe(true);
    }
  });

  it('types the event catalogue: one schema per event type, WebhookEvent by type, the 3.1 webhooks section, and subscribedEventTypes as an enum', async () => {
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    const { schemas } = document.components;
    expect(schemas.EventType.enum).toEqual([...eventTypes]);
    expect(schemas.SubscribedEventType.enum).toEqual(['*', ...eventTypes]);
    const mapping = schemas.WebhookEvent.discriminator.mapping;
    expect(Object.keys(mapping).sort()).toEqual([...eventTypes, 'WEBHOOK_TEST'].sort());
    expect(schemas.WebhookEvent.oneOf).toHaveLength(eventTypes.length + 1);
    expect(schemas.CustomerCreatedEvent.properties.type).toEqual({ type: 'string', const: 'CUSTOMER_CREATED' });
    expect(schemas.CustomerCreatedEvent.properties.data.required).toEqual(expect.arrayContaining(['customerId', 'traceId']));
    expect(Object.keys(document.webhooks).sort()).toEqual([...eventTypes, 'WEBHOOK_TEST'].sort());
    expect(document.webhooks.BANK_DEPOSIT_TRANSACTION_COMPLETED.post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/BankDepositTransactionCompletedEvent',
    });
    const subscribed = { $ref: '#/components/schemas/SubscribedEventType' };
    expect(schemas.Webhook.properties.subscribedEventTypes.items).toEqual(subscribed);
    expect(document.paths['/v1/webhooks'].post.requestBody.content['application/json'].schema.properties.subscribedEventTypes.items).toEqual(subscribed);
    expect(schemas.Event.properties.type).toEqual({ $ref: '#/components/schemas/EventType' });
  });

  it('marks the two aliases of the internal transfer deprecated, not the versioned path', async () => {
    const document = (await t.request({ url: '/openapi.json', key: null })).body;
    expect(document.paths['/v1/internal-transfer'].post.deprecated).toBeUndefined();
    expect(document.paths['/v1/internal-transfer'].post.operationId).toBe('internalTransfers.create');
    expect(document.paths['/internal-transfer'].post.deprecated).toBe(true);
    expect(document.paths['/v1/baas/transactions/internal-transfer'].post.deprecated).toBe(true);
  });

  it('serves the same document as YAML at /openapi.yaml', async () => {
    const json = (await t.request({ url: '/openapi.json', key: null })).body;
    const response = await t.request({ url: '/openapi.yaml', key: null });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('application/yaml');
    expect(parseYaml(response.raw.body)).toEqual(json);
  });
});

describe('docs', () => {
  it('renders the interactive reference', async () => {
    const response = await t.request({ url: '/docs/', key: null });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).toContain('swagger-ui');
  });
});

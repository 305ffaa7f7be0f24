import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createTestApp, type TestContext } from './harness.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
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
    const visit = (schema: Record<string, unknown> | undefined, where: string) => {
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

describe('docs', () => {
  it('renders the interactive reference', async () => {
    const response = await t.request({ url: '/docs/', key: null });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).toContain('swagger-ui');
  });
});

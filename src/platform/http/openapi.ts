import { isDeepStrictEqual } from 'node:util';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Deps } from '../deps.js';
import type { App } from './app-type.js';
import { errorCodes } from './error-codes.js';
import { withoutIdempotency } from './idempotency.js';

/**
 * The OpenAPI 3.1 document (/openapi.json, /openapi.yaml) and the interactive reference (/docs),
 * built from the routes' TypeBox schemas and refined for code generators (refineOpenApi).
 */

type Json = Record<string, unknown>;

/** What the modules add to the document beyond their routes (the event catalogue, for now). */
export interface OpenApiExtras {
  /** Named schemas, put under components.schemas as they are. */
  schemas: Record<string, Json>;
  /** The OpenAPI 3.1 `webhooks` section: the requests the API sends to its users. */
  webhooks: Record<string, Json>;
}

const writeMethods = new Set(['post', 'put', 'patch', 'delete']);

const idempotencyKeyParameter: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the write safe to retry: a repeat with the same key and body replays the first answer (its status and body, 4xx refusals included) ' +
    'with the response headers Idempotent-Replayed: true and Original-Trace-Id (the first request\'s trace id; X-Trace-Id stays the ' +
    'replay\'s own); the same key with another body is 422 IDEMPOTENCY_KEY_REUSED; while the first is ' +
    'still running, 409 IDEMPOTENCY_REQUEST_IN_PROGRESS. Not stored, so the key stays free: 5xx, every 400 (a refusal of the request ' +
    'itself), 401, 403, 413, 415, 429 and the retry-later conflicts (docs/api-design.md). Keys are kept per client, at least 24 hours ' +
    '(IDEMPOTENCY_RETENTION_HOURS).',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  example: '3f0c1a52-9b7e-4c1d-8a2f-6d5e4c3b2a10',
};

const ref = (section: 'schemas' | 'parameters', name: string) => ({ $ref: `#/components/${section}/${name}` });
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const schemaKeywords = ['type', 'properties', 'anyOf', 'oneOf', 'allOf', 'items', 'enum', 'const'];

/**
 * Moves every schema that has a `title` into components.schemas under that title and puts a $ref
 * in its place (children first, so nested titled schemas become references too). Two different
 * schemas with one title are a bug in the routes: refused, so the test of the document fails.
 */
function hoistTitledSchemas(node: unknown, schemas: Record<string, Json>): unknown {
  if (Array.isArray(node)) return node.map((child) => hoistTitledSchemas(child, schemas));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    // Examples are data, not schemas: an example may well have a `title` field.
    out[key] = key === 'examples' || key === 'example' ? value : hoistTitledSchemas(value, schemas);
  }
  const title = out.title;
  if (typeof title !== 'string' || !schemaKeywords.some((keyword) => keyword in out)) return out;
  if (!/^[A-Za-z0-9._-]+$/.test(title)) throw new Error(`OpenAPI: the schema title "${title}" is not a valid component name`);
  const existing = schemas[title];
  if (existing === undefined) schemas[title] = out;
  else if (!isDeepStrictEqual(existing, out)) throw new Error(`OpenAPI: two different schemas are titled "${title}"`);
  return ref('schemas', title);
}

/** Every `subscribedEventTypes` array lists SubscribedEventType values. */
function typeSubscribedEventTypes(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(typeSubscribedEventTypes);
  if (!isObject(node)) return;
  const properties = node.properties;
  if (isObject(properties) && isObject(properties.subscribedEventTypes) && properties.subscribedEventTypes.type === 'array') {
    const { items: _items, ...rest } = properties.subscribedEventTypes;
    properties.subscribedEventTypes = { ...rest, items: ref('schemas', 'SubscribedEventType') };
  }
  for (const [key, value] of Object.entries(node)) if (key !== 'examples' && key !== 'example') typeSubscribedEventTypes(value);
}

/**
 * Refines the generated document for code generators (Stainless, openapi-generator,
 * openapi-typescript, Postman): shared schemas under components.schemas referenced by $ref, the
 * error body with every code as an enum, the Idempotency-Key header on every write, the event
 * catalogue as schemas and as the 3.1 `webhooks` section, and the tags listed once.
 */
/**
 * A JSON body whose schema takes {} (an object without required fields or a minimum of them) may be
 * left out: the server reads a write sent without a body as {} (src/app.ts). Declared so
 * (`requestBody.required: false`), a generated client lets the caller leave it out too; until
 * 2026-12-05 every body was required, and the SDK asked for `body: {}` on a settle or a reversal
 * (found by an audit).
 */
function markOptionalBodies(paths: Record<string, Record<string, Json>>, schemas: Record<string, Json>): void {
  const resolved = (schema: unknown): Json | undefined => {
    if (!isObject(schema)) return undefined;
    const target = typeof schema.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined;
    return target === undefined ? schema : schemas[target];
  };
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      if (!isObject(operation) || !isObject(operation.requestBody)) continue;
      const content = operation.requestBody.content;
      if (!isObject(content) || Object.keys(content).join() !== 'application/json') continue;
      const schema = resolved((content['application/json'] as Json | undefined)?.schema);
      if (!schema || schema.type !== 'object' || schema.anyOf !== undefined || schema.oneOf !== undefined || schema.allOf !== undefined) continue;
      const required = Array.isArray(schema.required) ? schema.required.length : 0;
      if (required === 0 && !(typeof schema.minProperties === 'number' && schema.minProperties > 0)) operation.requestBody = { ...operation.requestBody, required: false };
    }
  }
}

export function refineOpenApi(document: Json, extras: OpenApiExtras): Json {
  const components = isObject(document.components) ? { ...document.components } : {};
  const schemas: Record<string, Json> = { ...(isObject(components.schemas) ? (components.schemas as Record<string, Json>) : {}), ...extras.schemas };
  const paths = hoistTitledSchemas(document.paths ?? {}, schemas) as Record<string, Record<string, Json>>;

  const errorSchema = schemas.Error;
  if (errorSchema && isObject(errorSchema.properties)) {
    errorSchema.properties = {
      ...errorSchema.properties,
      code: { type: 'string', enum: Object.keys(errorCodes), description: 'stable machine-readable code; docs/errors.md explains each' },
    };
  }
  const event = schemas.Event;
  if (event && isObject(event.properties)) event.properties = { ...event.properties, type: ref('schemas', 'EventType') };

  const tags = new Set<string>();
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!isObject(operation)) continue;
      for (const tag of (operation.tags as string[] | undefined) ?? []) tags.add(tag);
      if (writeMethods.has(method) && !withoutIdempotency(path)) {
        const parameters: unknown[] = Array.isArray(operation.parameters) ? (operation.parameters as unknown[]) : [];
        operation.parameters = [...parameters, ref('parameters', 'IdempotencyKey')];
      }
    }
  }
  for (const entry of Object.values(extras.webhooks)) {
    for (const operation of Object.values(entry)) if (isObject(operation)) for (const tag of (operation.tags as string[] | undefined) ?? []) tags.add(tag);
  }
  markOptionalBodies(paths, schemas);
  typeSubscribedEventTypes(paths);
  typeSubscribedEventTypes(schemas);

  return {
    ...document,
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    webhooks: extras.webhooks,
    components: {
      ...components,
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      parameters: { ...(isObject(components.parameters) ? components.parameters : {}), IdempotencyKey: idempotencyKeyParameter },
    },
  };
}

export async function registerOpenApi(app: App, deps: Deps, extras: OpenApiExtras): Promise<void> {
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
          vaultToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A vault token from POST /v1/vault/token (the vault\'s browser-facing endpoints take nothing else).' },
        },
      },
      security: [{ apiKey: [] }],
    },
    transformObject: (documentObject) => refineOpenApi((documentObject as unknown as { openapiObject: Json }).openapiObject, extras) as never,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}

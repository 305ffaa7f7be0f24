import crypto from 'node:crypto';
import fs from 'node:fs';
import { inject } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp, type BuildAppOptions, type RouteInfo } from '../src/app.js';
import { ManualClock } from '../src/platform/clock.js';
import { loadConfig, type Config } from '../src/platform/config.js';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/database.js';
import { migrate } from '../src/platform/db/migrate.js';
import type { Deps } from '../src/platform/deps.js';
import type { App } from '../src/platform/http/app-type.js';
import { clientSeeders } from '../src/modules/routes.js';
import { createApiKey, createClientWithKey } from '../src/modules/tenants/tenants.service.js';
import { databaseUrlNamed } from './support/database-url.js';

/** The field-encryption key of every test app (32 bytes, hex); override it through createTestApp({ env }). */
export const testEncryptionKey = '0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0';

export const testDatabase = (process.env.TEST_DB ?? 'pglite') as 'pglite' | 'postgres';

export interface TestClient {
  id: string;
  key: string;
  readOnlyKey: string;
}

export interface TestResponse {
  status: number;
  // Tests read response bodies freely.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: LightMyRequestResponse['headers'];
  raw: LightMyRequestResponse;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  url: string;
  /** The API key to send; null sends no Authorization header. Defaults to client A's key. */
  key?: string | null;
  body?: unknown;
  /** Sent as-is (already serialised), with the given content type. */
  rawBody?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  idempotencyKey?: string;
}

export interface TestContext {
  app: App;
  routes: RouteInfo[];
  deps: Deps;
  config: Config;
  clock: ManualClock;
  database: DatabaseHandle;
  /** PostgreSQL only: the URL of the test app's database (for processes of the program on it). */
  databaseUrl?: string;
  clientA: TestClient;
  clientB: TestClient;
  request(options: RequestOptions): Promise<TestResponse>;
  newClient(name?: string): Promise<TestClient>;
  close(): Promise<void>;
}

let template: Blob | undefined;
/** The migrated embedded database the pglite project's global setup wrote (pglite-template.global.ts), read once per worker process. */
function pgliteTemplate(): Blob {
  if (!template) template = new Blob([fs.readFileSync(inject('pgliteTemplate'))]);
  return template;
}

/** The pglite project only: a migrated in-memory embedded database of its own, with this connection timeout. */
export async function openEmbeddedTestDatabase(connectTimeoutMs: number): Promise<DatabaseHandle> {
  const database = await openDatabase({ memory: true, poolMax: 1, connectTimeoutMs, memoryDataDump: pgliteTemplate() });
  await migrate(database.pool);
  return database;
}

async function openTestDatabase(
  routeUrl: (url: string) => string = (url) => url,
  embeddedConnectTimeoutMs = 30_000,
): Promise<{ database: DatabaseHandle; databaseUrl?: string; dispose: () => Promise<void> }> {
  if (testDatabase === 'pglite') {
    const database = await openDatabase({ memory: true, poolMax: 1, connectTimeoutMs: embeddedConnectTimeoutMs, memoryDataDump: pgliteTemplate() });
    // Nothing to apply when the template is current; applies what it lacks otherwise.
    await migrate(database.pool);
    return { database, dispose: () => database.close() };
  }
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is required for the postgres test project');
  // Each test app works in a database of its own, a copy of the run's migrated template
  // (test/postgres-template.global.ts), so files run in parallel without seeing each other. Until
  // 2026-12-07 each had a schema of its own in TEST_DATABASE_URL's database, migrated afresh.
  const name = `test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = await openDatabase({ databaseUrl: url, poolMax: 1, connectTimeoutMs: 10_000 });
  await admin.pool.query(`CREATE DATABASE ${name} TEMPLATE ${inject('postgresTemplate')}`);
  const databaseUrl = databaseUrlNamed(url, name);
  const database = await openDatabase({ databaseUrl: routeUrl(databaseUrl), poolMax: 10, connectTimeoutMs: 10_000 });
  // Nothing to apply when the template is current; applies what it lacks otherwise.
  await migrate(database.pool);
  return {
    database,
    databaseUrl,
    dispose: async () => {
      await database.close();
      // FORCE: a process of the program a test left connected does not keep the database.
      await admin.pool.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.close();
    },
  };
}

/** A ManualClock that also moves with the wall clock (see `clockFollowsWallClock`). */
class WallFollowingClock extends ManualClock {
  private readonly startedAtMs = Date.now();

  override now(): Date {
    return new Date(super.now().getTime() + (Date.now() - this.startedAtMs));
  }

  override set(to: Date | string): void {
    const targetMs = new Date(to).getTime();
    if (targetMs < this.now().getTime()) throw new Error('a clock never moves backwards');
    super.advance(targetMs - this.now().getTime());
  }
}

export interface TestAppOptions {
  env?: Record<string, string>;
  extraRoutes?: BuildAppOptions['extraRoutes'];
  clockStart?: string;
  /**
   * The app's clock moves with the wall clock as well as by `advance` (from `clockStart`, or now):
   * for an app beside processes of the program, which read the wall clock.
   */
  clockFollowsWallClock?: boolean;
  /** PostgreSQL only: the address the app connects to, given the server's (a relay in front of it, say). */
  routeDatabaseUrl?: (url: string) => string;
  /** The embedded database only: how long a query waits for its one connection (30 s by default). */
  embeddedConnectTimeoutMs?: number;
}

/** Builds the real app on a fresh database with two clients (A and B), each with a full and a read-only key. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestContext> {
  const { database, databaseUrl, dispose } = await openTestDatabase(options.routeDatabaseUrl, options.embeddedConnectTimeoutMs);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: 'http://openbaas.test',
    // A fixed test key: without one the embedded database would write a key file into ./data.
    OPENBAAS_ENCRYPTION_KEY: testEncryptionKey,
    ...options.env,
  });
  const clockStart = options.clockStart ?? (options.clockFollowsWallClock ? new Date().toISOString() : '2026-03-01T12:00:00.000Z');
  const clock = options.clockFollowsWallClock ? new WallFollowingClock(clockStart) : new ManualClock(clockStart);
  const deps: Deps = { config, database, db: database.db, clock, clientSeeders };
  const { app, routes } = await buildApp(deps, { logger: false, ...(options.extraRoutes ? { extraRoutes: options.extraRoutes } : {}) });

  const newClient = async (name = 'Test client'): Promise<TestClient> => {
    const { client, apiKey } = await createClientWithKey(deps, name);
    const readOnly = await createApiKey(deps, client.id, { readOnly: true });
    return { id: client.id, key: apiKey.key, readOnlyKey: readOnly.key };
  };
  const clientA = await newClient('Client A');
  const clientB = await newClient('Client B');

  const request = async (requestOptions: RequestOptions): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...requestOptions.headers };
    const key = requestOptions.key === undefined ? clientA.key : requestOptions.key;
    if (key !== null) headers.authorization = key;
    if (requestOptions.idempotencyKey !== undefined) headers['idempotency-key'] = requestOptions.idempotencyKey;
    let payload: string | Buffer | undefined;
    if (requestOptions.rawBody !== undefined) {
      payload = requestOptions.rawBody;
      headers['content-type'] = requestOptions.contentType ?? 'application/json';
    } else if (requestOptions.body !== undefined) {
      payload = JSON.stringify(requestOptions.body);
      headers['content-type'] = requestOptions.contentType ?? 'application/json';
    }
    const raw = await app.inject({
      method: requestOptions.method ?? 'GET',
      url: requestOptions.url,
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
    let body: unknown = raw.body;
    if ((raw.headers['content-type'] ?? '').toString().includes('json') && raw.body.length > 0) body = JSON.parse(raw.body);
    return { status: raw.statusCode, body, headers: raw.headers, raw };
  };

  return {
    app,
    routes,
    deps,
    config,
    clock,
    database,
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
    clientA,
    clientB,
    request,
    newClient,
    close: async () => {
      await app.close();
      await dispose();
    },
  };
}

/** Subscribes `client` to `eventTypes` at an address nothing listens on (the deliveries stay owed); returns the subscription. */
export async function subscribeNowhere(t: TestContext, client: TestClient, name: string, eventTypes: readonly string[]): Promise<{ id: string }> {
  const subscription = await t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: { name, url: 'http://127.0.0.1:9/hook', subscribedEventTypes: eventTypes } });
  if (subscription.status !== 201) throw new Error(`subscribing failed: ${JSON.stringify(subscription.body)}`);
  return subscription.body.data as { id: string };
}

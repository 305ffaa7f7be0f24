import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WorkerRunner } from '../src/platform/workers.js';
import { createTestApp, type TestContext } from './harness.js';
import { appWithLogCapture } from './support/log-capture.js';

// The embedded database has one connection: a request that holds it for long (seeding 100
// customers takes seconds) makes the others wait, and those that wait past DB_CONNECT_TIMEOUT_MS
// are answered 503. Until 2026-12-08 they were answered "cannot reach its database" and logged at
// error level, as were the worker tasks that waited (found by an audit): the database is busy,
// not unreachable. PostgreSQL's pool has connections to spare, so this file runs on PGlite only.

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp({ embeddedConnectTimeoutMs: 300 });
});
afterAll(async () => {
  await t.close();
});

describe('a request or a worker task that finds the one connection held past the connection timeout', () => {
  it('the request is answered 503 SERVICE_UNAVAILABLE saying the database is busy, with Retry-After, logged as a warning; the task is logged as a warning and runs again later', async () => {
    const capture = await appWithLogCapture(t);
    const held = await t.database.pool.connect();
    try {
      const response = await capture.app.inject({ url: '/v1/customers', headers: { authorization: t.clientA.key } });
      expect(response.statusCode, response.body).toBe(503);
      expect(response.headers['retry-after']).toBe('1');
      expect(JSON.parse(response.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('No database connection came free in time') });
      const lines = capture.logged().trimEnd().split('\n').map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
      expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual(['no database connection came free within DB_CONNECT_TIMEOUT_MS']);

      const warned: string[] = [];
      const failed: string[] = [];
      const runner = new WorkerRunner([{ name: 'probe', intervalMs: 60_000, run: () => sql`SELECT 1`.execute(t.deps.db) }], {
        warn: (_object, message) => warned.push(message),
        error: (_object, message) => failed.push(message),
      });
      runner.start();
      await vi.waitFor(() => expect(warned).toEqual(['worker task found no free database connection in time; it runs again in 60000 ms']), { timeout: 5_000 });
      await runner.stop();
      expect(failed).toEqual([]);
    } finally {
      held.release();
      await capture.close();
    }
    // Once the connection is free, the same request is answered.
    expect((await t.request({ url: '/v1/customers' })).status).toBe(200);
  });
});

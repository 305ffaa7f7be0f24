import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { withTransaction } from '../src/platform/db/transaction.js';
import { RequestLog } from '../src/modules/traces/request-log.js';
import { openEmbeddedTestDatabase } from './harness.js';

// The embedded database has one connection: a request that holds it longer than the pool's
// connection timeout made the request log's buffered write give up, and the rows of the requests
// answered meanwhile were dropped. PostgreSQL's pool has connections to spare, so this file runs
// only in the pglite project.

describe('the request log on the embedded database', () => {
  it('waits for the one connection while a long transaction holds it past the connection timeout, and writes its rows', async () => {
    const database = await openEmbeddedTestDatabase(200);
    const errors: string[] = [];
    const logger = { error: (_object: unknown, message: string) => errors.push(message), warn: (_object: unknown, message: string) => errors.push(message) } as unknown as FastifyBaseLogger;
    try {
      const clientId = crypto.randomUUID();
      await sql`INSERT INTO clients (id, name, created_at) VALUES (${clientId}, 'request log', now())`.execute(database.db);
      const log = new RequestLog(database.db, logger);
      const traceId = `wait-${crypto.randomUUID()}`;
      let written: Promise<void> = Promise.resolve();
      await withTransaction(database.db, async (tx) => {
        log.add({ clientId, id: crypto.randomUUID(), traceId, method: 'POST', path: '/v1/sandbox/customers', operationId: null, statusCode: 201, durationMs: 1, idempotencyKey: null, errorCode: null, createdAt: new Date() });
        written = log.flush();
        // Three connection timeouts long, as a request seeding many customers held it (waiting in
        // JavaScript: pg_sleep would stop the whole process, the pool's timer with it).
        await sql`SELECT 1`.execute(tx);
        await new Promise((resolve) => setTimeout(resolve, 700));
      });
      await written;
      const rows = await database.db.selectFrom('api_requests').select('trace_id').where('trace_id', '=', traceId).execute();
      expect(rows).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      await database.close();
    }
  });
});

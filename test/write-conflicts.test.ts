import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transactionAttemptsMax } from '../src/platform/db/transaction.js';
import { individualBody } from './customers/fixtures.js';
import { createTestApp, type TestContext } from './harness.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/**
 * Makes every insert of a customer fail as PostgreSQL fails a transaction that conflicts with
 * another (SQLSTATE `sqlState`: 40001 a serialization failure, 40P01 a deadlock), until `clear`.
 * A trigger in this test app's own database: the conflict is real to the server, which runs the
 * transaction again (up to 8 times) before it answers.
 */
async function conflictingInserts(sqlState: '40001' | '40P01'): Promise<{ attempts: () => Promise<number>; clear: () => Promise<void> }> {
  const name = `conflict_${sqlState.toLowerCase()}`;
  // A sequence counts the attempts: nextval is not rolled back with the transaction.
  await sql
    .raw(
      `CREATE SEQUENCE ${name}_attempts;` +
        `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('${name}_attempts'); RAISE EXCEPTION 'conflict for the test' USING ERRCODE = '${sqlState}'; END $$;` +
        `CREATE TRIGGER ${name} BEFORE INSERT ON customers FOR EACH ROW EXECUTE FUNCTION ${name}();`,
    )
    .execute(t.deps.db);
  return {
    attempts: async () => {
      const { rows } = await sql<{ attempts: string }>`SELECT last_value::text AS attempts FROM ${sql.table(`${name}_attempts`)}`.execute(t.deps.db);
      return Number(rows[0]?.attempts);
    },
    clear: async () => {
      await sql.raw(`DROP TRIGGER ${name} ON customers; DROP FUNCTION ${name}(); DROP SEQUENCE ${name}_attempts;`).execute(t.deps.db);
    },
  };
}

// Until 2026-12-07 a write whose transaction still conflicted after its last attempt answered 500
// INTERNAL_ERROR, the answer kept for bugs (a carried finding of the sandbox restore's review).
describe('a write that conflicts with other writes on every attempt', () => {
  it.each(['40001', '40P01'] as const)('SQLSTATE %s: 503 WRITE_CONFLICT with Retry-After, nothing kept under its key; the same request later succeeds', async (sqlState) => {
    const conflicts = await conflictingInserts(sqlState);
    const idempotencyKey = crypto.randomUUID();
    const body = individualBody();
    try {
      const refused = await t.request({ method: 'POST', url: '/v1/customers/individual', body, idempotencyKey });
      expect(refused.status, JSON.stringify(refused.body)).toBe(503);
      expect(refused.body.code).toBe('WRITE_CONFLICT');
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body.message).toMatch(/retry/i);
      // Run again before it answered, as every transaction is.
      expect(await conflicts.attempts()).toBe(transactionAttemptsMax);
      const customers = await t.request({ url: `/v1/customers?email=${encodeURIComponent(body.email)}` });
      expect(customers.body.data).toEqual([]);
    } finally {
      await conflicts.clear();
    }
    const retried = await t.request({ method: 'POST', url: '/v1/customers/individual', body, idempotencyKey });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });
});

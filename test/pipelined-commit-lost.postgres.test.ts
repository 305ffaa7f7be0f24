import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/database.js';
import { isCommitOutcomeUnknown, TransactionLane, withPipelinedTransaction } from '../src/platform/db/pipelined-transaction.js';
import { withTransaction } from '../src/platform/db/transaction.js';
import { createTestApp, type TestContext } from './harness.js';
import { DatabaseRelay, type RelayedConnection } from './support/database-relay.js';
import { individualBody } from './customers/fixtures.js';
import { availableOf, fundWallet, newWallet } from './ledger/fixtures.js';

// A connection lost after COMMIT was sent leaves the transaction's outcome unknown: PostgreSQL may
// have committed it. A TCP relay in front of the server stops passing the server's answers on as
// soon as it has passed on a write that commits, so the commit happens and its answer never
// arrives. Such a write holds a COMMIT or, for statements sent as transactions of their own
// (each behind its Sync, pipelined-transaction.ts), the plan setting sent ahead of them: the
// statements right behind it commit before the relay cuts.
const commits = (chunk: Buffer) => chunk.includes('COMMIT') || chunk.includes('plan_cache_mode');

const target = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
let cutAfterCommit = false;
/** Bytes that, sent by the app, make the relay reset both sides of that connection at once (TCP RST) instead of passing them on. */
let resetOn: Buffer | undefined;
/** While set, the relay passes nothing on either way and keeps every connection open: a network partition. */
let blackHole = false;
/** The connections that passed on a write that commits: the database's answers on them are dropped. */
const cut = new Set<RelayedConnection>();
const relay = new DatabaseRelay(new URL(target), {
  fromApp: (chunk, connection) => {
    if (blackHole) return 'drop';
    if (resetOn !== undefined && chunk.includes(resetOn)) {
      connection.database.destroy();
      connection.app.resetAndDestroy();
      return 'drop';
    }
    if (cutAfterCommit && !cut.has(connection) && commits(chunk)) {
      cut.add(connection);
      // Long enough for the server to run what it was sent, COMMIT included.
      setTimeout(() => {
        connection.app.destroy();
        connection.database.destroy();
      }, 300);
    }
    return 'pass';
  },
  fromDatabase: (_chunk, connection) => (cut.has(connection) || blackHole ? 'drop' : 'pass'),
});
let database: DatabaseHandle;
let t: TestContext;
const throughRelay = (url: string) => relay.address(url);
const table = `commit_lost_${crypto.randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  await relay.listen();
  database = await openDatabase({ databaseUrl: throughRelay(target), poolMax: 2, connectTimeoutMs: 5_000 });
  t = await createTestApp({ routeDatabaseUrl: throughRelay });
  await sql`CREATE TABLE ${sql.table(table)} (id int PRIMARY KEY)`.execute(database.db);
});

afterAll(async () => {
  cutAfterCommit = false;
  await sql`DROP TABLE IF EXISTS ${sql.table(table)}`.execute(database.db);
  await database.close();
  await t.close();
  await relay.closeAll();
});

const stored = async () => (await sql<{ id: number }>`SELECT id FROM ${sql.table(table)} ORDER BY id`.execute(database.db)).rows.map((row) => row.id);

describe('a pipelined transaction whose connection is lost', () => {
  it('after COMMIT was sent: fails with an error marked as of unknown outcome, and did commit', async () => {
    cutAfterCommit = true;
    let failure: unknown;
    try {
      await withPipelinedTransaction(database.pool, async (tx) => ({ result: undefined, last: sql`INSERT INTO ${sql.table(table)} (id) VALUES (1)`.compile(tx) }));
    } catch (error) {
      failure = error;
    } finally {
      cutAfterCommit = false;
    }
    expect(failure).toBeInstanceOf(Error);
    expect(isCommitOutcomeUnknown(failure)).toBe(true);
    expect(await stored()).toEqual([1]);
  });

  it('on a statement PostgreSQL refused: an error of known outcome, and nothing committed', async () => {
    let failure: unknown;
    try {
      await withPipelinedTransaction(database.pool, async (tx) => ({ result: undefined, last: sql`INSERT INTO ${sql.table(table)} (id) VALUES (1), (2)`.compile(tx) }));
    } catch (error) {
      failure = error;
    }
    expect((failure as { code?: string }).code).toBe('23505');
    expect(isCommitOutcomeUnknown(failure)).toBe(false);
    expect(await stored()).toEqual([1]);
  });
});

describe('a lane whose connection is lost', () => {
  it('fails every transaction in flight with an error of unknown outcome, and the next one goes on a new connection', async () => {
    const lane = new TransactionLane(database.pool);
    const insert = (id: number) => lane.run(async (tx) => ({ result: id, last: sql`INSERT INTO ${sql.table(table)} (id) VALUES (${id})`.compile(tx) }));
    cutAfterCommit = true;
    let outcomes;
    try {
      outcomes = await Promise.allSettled([insert(10), insert(11)]);
    } finally {
      cutAfterCommit = false;
    }
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect(isCommitOutcomeUnknown((outcome as PromiseRejectedResult).reason)).toBe(true);
    }
    // The first committed before the cut; whether the second did depends on the relay's timing.
    expect((await stored()).filter((id) => id >= 10)[0]).toBe(10);
    await expect(insert(12)).resolves.toBe(12);
    expect(await stored()).toContain(12);
  });
});

describe('a batch of internal transfers whose COMMIT answer is lost', () => {
  it('answers 503 to every request and does not run them again one by one: the money moved once', async () => {
    const source = await newWallet(t);
    await fundWallet(t, t.clientA.id, source, 10_000n);
    const destinations = [await newWallet(t), await newWallet(t), await newWallet(t)];
    for (const destination of destinations) await fundWallet(t, t.clientA.id, destination, 1n);
    cutAfterCommit = true;
    let responses;
    try {
      // No Idempotency-Key: a request run again after its batch committed would move money twice.
      responses = await Promise.all(
        destinations.map((destination) =>
          t.request({ method: 'POST', url: '/internal-transfer', body: { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' } }),
        ),
      );
    } finally {
      cutAfterCommit = false;
    }
    expect(responses.map((response) => [response.status, response.body.code])).toEqual(destinations.map(() => [503, 'SERVICE_UNAVAILABLE']));
    expect(await availableOf(t, source)).toBe('97.00');
    for (const destination of destinations) expect(await availableOf(t, destination)).toBe('1.01');
  });
});

describe('a connection reset while a request waits for the database (2026-12-07)', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After, not 500, and the next request is served on a new connection', async () => {
    const wallet = await newWallet(t);
    // The balance read sends the wallet's id as a parameter: the relay resets that connection then.
    // Until 2026-12-07 the reset (ECONNRESET) answered 500 INTERNAL_ERROR (found by an audit).
    resetOn = Buffer.from(wallet);
    let refused;
    try {
      refused = await t.request({ url: `/v1/wallets/${wallet}/balance` });
    } finally {
      resetOn = undefined;
    }
    expect([refused.status, refused.body.code], JSON.stringify(refused.body)).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(refused.headers['retry-after']).toBe('1');
    const again = await t.request({ url: `/v1/wallets/${wallet}/balance` });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });

  it('inside a write\'s transaction too, where the ROLLBACK on the broken connection fails in its place: 503, and the retry with its key runs it once', async () => {
    // The key is a parameter of the write's first statement (its idempotency lookup), sent after
    // BEGIN. Until 2026-12-07 node-postgres's "not queryable" refusal of the ROLLBACK answered 500 (found by a re-audit).
    const key = `reset-${crypto.randomUUID()}`;
    const create = () => t.request({ method: 'POST', url: '/v1/customers/individual', idempotencyKey: key, body: individualBody() });
    resetOn = Buffer.from(key);
    let refused;
    try {
      refused = await create();
    } finally {
      resetOn = undefined;
    }
    expect([refused.status, refused.body.code], JSON.stringify(refused.body)).toEqual([503, 'SERVICE_UNAVAILABLE']);
    // The server's side of the reset connection may still hold the key's lock for a moment (until
    // PostgreSQL sees the connection gone): 409 IDEMPOTENCY_REQUEST_IN_PROGRESS, retried as a client
    // does (seen once in a CI pre-check).
    let retried = await create();
    for (let tries = 0; retried.status === 409 && retried.body.code === 'IDEMPOTENCY_REQUEST_IN_PROGRESS' && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      retried = await create();
    }
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('withTransaction throws the reset itself, not the failed ROLLBACK behind it, so the log names the cause', async () => {
    const marker = `reset-${crypto.randomUUID()}`;
    resetOn = Buffer.from(marker);
    let failure: unknown;
    try {
      await withTransaction(database.db, (tx) => sql`SELECT ${marker}::text AS marker`.execute(tx));
    } catch (error) {
      failure = error;
    } finally {
      resetOn = undefined;
    }
    // Until 2026-12-07 this was node-postgres's "Client has encountered a connection error and is not queryable".
    expect(String(failure)).toMatch(/ECONNRESET|Connection terminated/);
    expect((await withTransaction(database.db, (tx) => sql<{ one: number }>`SELECT 1 AS one`.execute(tx))).rows).toEqual([{ one: 1 }]);
  });
});

describe('the readiness probe while the database stops answering (2026-12-07)', () => {
  it('answers 503 within its 5 s, not when the database answers again', async () => {
    expect((await t.app.inject({ url: '/health/ready' })).statusCode).toBe(200);
    blackHole = true;
    let probe;
    try {
      // Until 2026-12-07 the probe waited with its statement for as long as the partition lasted (found by an audit).
      probe = await t.app.inject({ url: '/health/ready' });
    } finally {
      blackHole = false;
      // What the partition left waiting never gets its answer: those connections are closed.
      relay.destroyAll();
    }
    expect(probe.statusCode).toBe(503);
    expect(probe.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'Not ready: the database did not answer within 5 s' });
    await vi.waitFor(async () => expect((await t.app.inject({ url: '/health/ready' })).statusCode).toBe(200), { timeout: 15_000, interval: 200 });
  }, 60_000);
});

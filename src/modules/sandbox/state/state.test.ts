import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../../test/harness.js';
import { balanceOf, deposit, expectLedgerClean, fund, linkedWallet, settle } from '../../../../test/bank/fixtures.js';
import { createIndividual } from '../../../../test/customers/fixtures.js';
import { issuedCard } from '../../../../test/cards/fixtures.js';
import { withTransaction } from '../../../platform/db/transaction.js';
import { flushRequestLog } from '../../traces/index.js';
import { clientTables, referenceOrder, resetKeptTables } from './client-tables.js';
import { snapshotsPerClientMax } from './state.service.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Sandbox reset and snapshots: what is deleted, kept, saved and put back, and for whom. */
let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/**
 * The request log (api_requests) records this test's own requests as they are answered, and
 * writes them up to 100 ms later: it cannot stay byte for byte while the test reads through the
 * API. The dumps leave it out; the tests check it on its own.
 */
const requestLog = 'api_requests';

/** The paths of the client's request log rows, once the rows still in memory are written. */
async function loggedPaths(clientId: string): Promise<string[]> {
  await flushRequestLog(t.app);
  const result = await sql<{ path: string }>`SELECT path FROM api_requests WHERE client_id = ${clientId} ORDER BY created_at, id`.execute(t.deps.db);
  return result.rows.map((row) => row.path);
}

/**
 * Every row the client owns, table by table, as JSON text ordered by primary key: its clients row
 * and every table of the schema with a client_id column (API keys and snapshots included; the
 * request log left out).
 */
async function dumpClient(clientId: string): Promise<Record<string, string>> {
  return withTransaction(t.deps.db, async (tx) => {
    const tables = await sql<{ name: string; key: string[] | null }>`
      SELECT c.relname AS name,
        (SELECT array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum))
         FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[])
         WHERE i.indrelid = c.oid AND i.indisprimary) AS key
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
        AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'client_id' AND NOT a.attisdropped)
      ORDER BY 1`.execute(tx);
    const dump: Record<string, string> = {};
    const client = await sql<{ row: string }>`SELECT to_jsonb(c)::text AS row FROM clients c WHERE id = ${clientId}`.execute(tx);
    dump.clients = client.rows[0]?.row ?? '';
    for (const table of tables.rows) {
      if (table.name === requestLog) continue;
      const order = table.key ? sql.join(table.key.map((column) => sql.id('t', column))) : sql`to_jsonb(t)::text`;
      const result = await sql<{ rows: string }>`
        SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY ${order})::text, '[]') AS rows FROM ${sql.table(table.name)} t WHERE t.client_id = ${clientId}`.execute(tx);
      dump[table.name] = result.rows[0]?.rows ?? '';
    }
    return dump;
  });
}

async function post(url: string, body: unknown, client: TestClient = t.clientA, idempotencyKey?: string) {
  return t.request({ method: 'POST', url, body, key: client.key, ...(idempotencyKey ? { idempotencyKey } : {}) });
}

async function reset(client: TestClient): Promise<any> {
  const response = await post('/v1/sandbox/reset', { confirm: 'RESET' }, client);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

async function snapshot(client: TestClient, name = 'snapshot'): Promise<any> {
  const response = await post('/v1/sandbox/snapshots', { name }, client);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data;
}

async function restore(client: TestClient, snapshotId: string, body: unknown = {}): Promise<any> {
  const response = await post(`/v1/sandbox/snapshots/${snapshotId}/restore`, body, client);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

async function advance(client: TestClient, seconds: number): Promise<void> {
  const response = await post('/v1/sandbox/clock/advance', { seconds }, client);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

async function createWebhook(client: TestClient, name = 'Main'): Promise<any> {
  const response = await post('/v1/webhooks', { name, url: 'http://127.0.0.1:9/hooks', subscribedEventTypes: ['*'] }, client);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data;
}

async function internalTransfer(client: TestClient, sourceWalletId: string, destinationWalletId: string, amount: string): Promise<void> {
  const response = await post('/v1/internal-transfer', { sourceWalletId, destinationWalletId, amount, asset: 'USD' }, client);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
}

async function rowsOf(table: string, clientId: string): Promise<number> {
  const result = await sql<{ count: string }>`SELECT count(*)::text AS count FROM ${sql.table(table)} WHERE client_id = ${clientId}`.execute(t.deps.db);
  return Number(result.rows[0]?.count);
}

/** A client with some of everything: approved customers with funded wallets, a pending deposit, a webhook with pending deliveries, a moved clock. */
async function populate(client: TestClient) {
  const wallet = await linkedWallet(t, client);
  await fund(t, wallet, '500.00', 'USD', client);
  const other = await linkedWallet(t, client);
  const pending = await deposit(t, other.virtualAccountNumber, '7.25', {}, client);
  const webhook = await createWebhook(client);
  await internalTransfer(client, wallet.walletId, other.walletId, '12.34');
  await createIndividual(t, client);
  const patched = await t.request({ method: 'PATCH', url: '/v1/compliance/settings', key: client.key, body: { onboardingStrategy: 'EXTERNAL' } });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  return { wallet, other, pending, webhook };
}

/** What the integrator sees through the API; trace ids aside. */
async function views(client: TestClient, ids: { customerId: string; walletId: string }) {
  const urls = [
    '/v1/customers?limit=200',
    `/v1/customers/${ids.customerId}`,
    `/v1/wallets/${ids.walletId}/balance`,
    `/v1/transactions?walletId=${ids.walletId}&limit=200`,
    '/v1/events?limit=200',
    '/v1/webhooks?includeDeleted=true',
    '/v1/customers/membership-programs',
    '/v1/compliance/settings',
    '/v1/sandbox/clock',
  ];
  const result: Record<string, unknown> = {};
  for (const url of urls) {
    const response = await t.request({ url, key: client.key });
    expect(response.status, `${url}: ${JSON.stringify(response.body)}`).toBe(200);
    result[url] = { data: response.body.data, pagination: response.body.pagination };
  }
  return result;
}

describe('client tables', () => {
  it('orders every referenced table before the tables referencing it, trigger-checked references included', async () => {
    const tables = await withTransaction(t.deps.db, (tx) => clientTables(tx));
    const names = tables.map((table) => table.name);
    const position = (name: string) => names.indexOf(name);
    for (const excluded of ['clients', 'api_keys', 'schema_migrations', 'sandbox_snapshots', 'sandbox_snapshot_tables']) expect(names).not.toContain(excluded);
    for (const name of ['customers', 'wallets', 'ledger_entries', 'events', 'idempotency_keys', 'timers', 'webhook_deliveries', ...resetKeptTables]) expect(names).toContain(name);
    expect(position('membership_programs')).toBeLessThan(position('customers'));
    expect(position('customers')).toBeLessThan(position('portfolios'));
    expect(position('portfolios')).toBeLessThan(position('wallets'));
    expect(position('wallets')).toBeLessThan(position('ledger_accounts'));
    expect(position('ledger_transfers')).toBeLessThan(position('ledger_entries'));
    expect(position('ledger_accounts')).toBeLessThan(position('ledger_entries'));
    expect(position('ledger_transfers')).toBeLessThan(position('wallet_transactions'));
    expect(position('webhook_subscriptions')).toBeLessThan(position('webhook_deliveries'));
    expect(position('webhook_deliveries')).toBeLessThan(position('webhook_delivery_attempts'));
  });

  it('refuses a cycle, ignores self references and references to unknown tables', () => {
    expect(referenceOrder(['b', 'a', 'c'], [['b', 'c'], ['a', 'a'], ['a', 'zzz']])).toEqual(['a', 'c', 'b']);
    expect(() => referenceOrder(['a', 'b'], [['a', 'b'], ['b', 'a']])).toThrow(/cycle: a, b/);
  });

  it('still refuses to delete ledger rows outside a reset or a restore', async () => {
    await expect(sql`DELETE FROM ledger_transfers WHERE client_id = ${t.clientA.id}`.execute(t.deps.db)).rejects.toMatchObject({ code: '23001' });
    await expect(sql`DELETE FROM ledger_accounts WHERE client_id = ${t.clientA.id}`.execute(t.deps.db)).rejects.toMatchObject({ code: '23001' });
  });
});

describe('POST /v1/sandbox/reset', () => {
  it('deletes all of the client\'s data, keeps its keys, configuration, snapshots and clock, and leaves other clients byte for byte', async () => {
    const a = await t.newClient('reset A');
    const b = await t.newClient('reset B');
    await advance(a, 90);
    await populate(a);
    await populate(b);
    const kept = await snapshot(a, 'kept across the reset');
    const programsBefore = (await t.request({ url: '/v1/customers/membership-programs', key: a.key })).body.data;
    const keptBefore = await dumpClient(a.id);
    const before = await dumpClient(b.id);

    const result = await reset(a);
    expect(result.kept).toEqual([...resetKeptTables].sort());
    expect(result.deleted.customers).toBe(3);
    expect(result.deleted.wallets).toBe(3);
    expect(result.deleted.events).toBeGreaterThan(10);
    expect(result.deleted.ledger_transfers).toBeGreaterThan(0);
    expect(result.deleted.webhook_subscriptions).toBe(1);
    expect(result.deleted.timers).toBe(1);
    expect(result.deleted).not.toHaveProperty('membership_programs');
    expect(result.deleted).not.toHaveProperty('api_keys');

    expect(await dumpClient(b.id)).toEqual(before);

    // Client A: nothing left but its configuration, keys, snapshots and clock.
    const tables = await withTransaction(t.deps.db, (tx) => clientTables(tx));
    for (const table of tables) {
      if (resetKeptTables.includes(table.name) || table.name === requestLog) continue;
      expect(await rowsOf(table.name, a.id), table.name).toBe(0);
    }
    // The request log is emptied too: what is left is the reset request itself, logged once answered.
    expect(result.deleted[requestLog]).toBeGreaterThan(10);
    expect(await loggedPaths(a.id)).toEqual(['/v1/sandbox/reset']);
    const after = await dumpClient(a.id);
    for (const name of [...resetKeptTables, 'clients', 'api_keys', 'sandbox_snapshots', 'sandbox_snapshot_tables']) expect(after[name], name).toBe(keptBefore[name]);
    expect((await t.request({ url: '/v1/customers/membership-programs', key: a.key })).body.data).toEqual(programsBefore);
    expect((await t.request({ url: '/v1/compliance/settings', key: a.key })).body.data.onboardingStrategy).toBe('EXTERNAL');
    expect((await t.request({ url: '/v1/customers', key: a.key })).body.data).toEqual([]);
    expect((await t.request({ url: '/v1/events', key: a.key })).body.data).toEqual([]);
    expect((await t.request({ url: '/v1/webhooks?includeDeleted=true', key: a.key })).body.data).toEqual([]);
    expect((await t.request({ url: '/v1/sandbox/clock', key: a.key })).body.data).toMatchObject({ offsetSeconds: 90, pendingTimers: 0 });
    expect((await t.request({ url: `/v1/sandbox/snapshots/${kept.id}`, key: a.key })).status).toBe(200);

    // The API keeps working: new customers, money, events; the ledger is clean.
    await t.request({ method: 'PATCH', url: '/v1/compliance/settings', key: a.key, body: { onboardingStrategy: 'STANDARD' } });
    const wallet = await linkedWallet(t, a);
    await fund(t, wallet, '20.00', 'USD', a);
    expect(await balanceOf(t, wallet.walletId, 'USD', a)).toEqual({ AVAILABLE: '20.00', RESERVED: '0.00', PENDING: '0.00' });
    await expectLedgerClean(t);
    expect(await dumpClient(b.id)).toEqual(before);

    // The snapshot taken before the reset brings everything back.
    await restore(a, kept.id, { resendPendingDeliveries: true });
    const restored = await dumpClient(a.id);
    for (const [name, rows] of Object.entries(keptBefore)) {
      if (name === 'sandbox_snapshots' || name === 'sandbox_snapshot_tables') continue;
      expect(restored[name], name).toBe(rows);
    }
    await expectLedgerClean(t);
  });

  it('succeeds again on an empty client, and replays with its Idempotency-Key', async () => {
    const client = await t.newClient('reset twice');
    await reset(client);
    const key = `reset-${crypto.randomUUID()}`;
    const first = await post('/v1/sandbox/reset', { confirm: 'RESET' }, client, key);
    expect(first.status).toBe(200);
    // Nothing left to delete but the request log's row of the first reset.
    const { [requestLog]: loggedRequests, ...others } = first.body.data.deleted as Record<string, number>;
    expect(Object.values(others).every((count) => count === 0)).toBe(true);
    expect(loggedRequests).toBe(1);
    const again = await post('/v1/sandbox/reset', { confirm: 'RESET' }, client, key);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    // The reset's own key is recorded after the reset's deletes.
    expect(await rowsOf('idempotency_keys', client.id)).toBe(1);
  });

  it.each([
    ['a wrong confirmation', { confirm: 'reset' }, 'SANDBOX_RESET_NOT_CONFIRMED'],
    ['an empty confirmation', { confirm: '' }, 'SANDBOX_RESET_NOT_CONFIRMED'],
    ['no confirmation', {}, 'VALIDATION_ERROR'],
    ['a number', { confirm: 1 }, 'VALIDATION_ERROR'],
    ['an unknown field', { confirm: 'RESET', everything: true }, 'VALIDATION_ERROR'],
  ])('400 with %s, and nothing is deleted', async (_name, body, code) => {
    const client = await t.newClient('no reset');
    await createIndividual(t, client);
    const response = await post('/v1/sandbox/reset', body, client);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(code);
    expect(JSON.stringify(response.body.details)).toContain(code === 'VALIDATION_ERROR' && 'everything' in body ? 'everything' : 'confirm');
    expect(await rowsOf('customers', client.id)).toBe(1);
  });

  it('409 SANDBOX_STATE_BUSY while an advance of the client\'s clock runs its timers', async () => {
    const client = await t.newClient('busy');
    await sql`UPDATE clients SET clock_advance_lease_until = ${new Date(t.clock.now().getTime() + 60_000)} WHERE id = ${client.id}`.execute(t.deps.db);
    const response = await post('/v1/sandbox/reset', { confirm: 'RESET' }, client, 'reset-while-busy');
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('SANDBOX_STATE_BUSY');
    await sql`UPDATE clients SET clock_advance_lease_until = NULL WHERE id = ${client.id}`.execute(t.deps.db);
    // "Retry when it has answered": the same key then runs (the 409 was not stored under it).
    const retried = await post('/v1/sandbox/reset', { confirm: 'RESET' }, client, 'reset-while-busy');
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('snapshots and restore', () => {
  it('puts every row back as it was, ids and clock included; every read answers as at snapshot time; other clients untouched', async () => {
    const client = await t.newClient('restore');
    const { wallet, other } = await populate(client);
    await advance(client, 30);
    // An idempotency record whose response is sealed (bytea hash, encrypted JSON string body).
    const sealed = await post('/v1/webhooks', { name: 'Sealed', url: 'http://127.0.0.1:9/sealed', subscribedEventTypes: ['CUSTOMER_CREATED'] }, client, `hook-${crypto.randomUUID()}`);
    expect(sealed.status).toBe(201);
    const bystander = await t.newClient('bystander');
    await populate(bystander);

    const seen = await views(client, { customerId: wallet.customerId, walletId: wallet.walletId });
    const dump = await dumpClient(client.id);
    const saved = await snapshot(client, 'before changes');
    expect(saved).toMatchObject({ name: 'before changes', clockOffsetSeconds: 30 });
    expect(saved.rowCounts.customers).toBe(3);
    expect(saved.rowCounts.membership_programs).toBeGreaterThan(0);
    // The request log of every request answered before the snapshot is saved with it.
    const logged = await loggedPaths(client.id);
    expect(logged.at(-1)).toBe('/v1/sandbox/snapshots');
    expect(saved.rowCounts[requestLog]).toBe(logged.length - 1);
    expect(saved.rowCounts).not.toHaveProperty('api_keys');
    expect(saved.sizeBytes).toBeGreaterThan(0);
    const bystanderBefore = await dumpClient(bystander.id);

    // Changes: a customer, a settled deposit, an internal transfer, a webhook, time.
    await createIndividual(t, client);
    await fund(t, wallet, '40.00', 'USD', client);
    await internalTransfer(client, wallet.walletId, other.walletId, '1.01');
    await createWebhook(client, 'Later');
    await advance(client, 3600);
    await reset(client);
    await createIndividual(t, client);

    const result = await restore(client, saved.id, { resendPendingDeliveries: true });
    expect(result).toMatchObject({ cancelledDeliveries: 0, clockOffsetSeconds: 30 });
    expect(result.restored).toEqual(saved.rowCounts);
    const restored = await dumpClient(client.id);
    for (const [name, rows] of Object.entries(dump)) {
      if (name === 'sandbox_snapshots' || name === 'sandbox_snapshot_tables') continue;
      expect(restored[name], name).toBe(rows);
    }
    expect(await views(client, { customerId: wallet.customerId, walletId: wallet.walletId })).toEqual(seen);
    expect(await dumpClient(bystander.id)).toEqual(bystanderBefore);
    await expectLedgerClean(t);

    // The restored state works: its money moves, its pending deposit settles.
    await internalTransfer(client, wallet.walletId, other.walletId, '2.00');
    await expectLedgerClean(t);

    // Restoring once more, without asking: the pending deliveries are cancelled, not sent twice.
    const again = await restore(client, saved.id);
    expect(again.cancelledDeliveries).toBeGreaterThan(0);
    const statuses = await sql<{ status: string }>`SELECT DISTINCT status FROM webhook_deliveries WHERE client_id = ${client.id}`.execute(t.deps.db);
    expect(statuses.rows.map((row) => row.status)).toEqual(['CANCELLED']);
    const hooks = (seen['/v1/webhooks?includeDeleted=true'] as any).data as any[];
    const main = hooks.find((hook) => hook.name === 'Main');
    const deliveries = await t.request({ url: `/v1/webhooks/${main.id as string}/deliveries`, key: client.key });
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data.length).toBeGreaterThan(0);
    expect(deliveries.body.data.every((delivery: any) => delivery.status === 'CANCELLED' && delivery.completedAt !== null)).toBe(true);
    await expectLedgerClean(t);
  });

  it('the restored clock is the one this process answers with at once, and pending timers are back', async () => {
    const client = await t.newClient('clock restore');
    const wallet = await linkedWallet(t, client);
    const pending = await deposit(t, wallet.virtualAccountNumber, '3.00', {}, client);
    const saved = await snapshot(client);
    await advance(client, 600);
    const settledStatus = await t.request({ url: `/v1/baas/transactions/${pending.parentBankTransactionId as string}`, key: client.key });
    expect(settledStatus.body.data.status).toBe('COMPLETED');
    await restore(client, saved.id);
    const clock = (await t.request({ url: '/v1/sandbox/clock', key: client.key })).body.data;
    expect(clock).toMatchObject({ offsetSeconds: 0, pendingTimers: 1, now: t.clock.now().toISOString() });
    const customer = await createIndividual(t, client);
    expect(customer.createdAt).toBe(t.clock.now().toISOString());
    const status = await t.request({ url: `/v1/baas/transactions/${pending.parentBankTransactionId as string}`, key: client.key });
    expect(status.body.data.status).toBe('PENDING');
    await settle(t, pending.id, client);
    await expectLedgerClean(t);
  });

  it('the clock gets the snapshot\'s offset back, not its time: timers that came due in the wall-clock time since run at once', async () => {
    const client = await t.newClient('clock offset restore');
    const wallet = await linkedWallet(t, client);
    await advance(client, 45);
    const pending = await deposit(t, wallet.virtualAccountNumber, '3.00', {}, client);
    const saved = await snapshot(client);
    expect(saved.clockOffsetSeconds).toBe(45);
    // The wall clock moves on past the deposit's settlement (60 s) before the restore.
    t.clock.advance(70_000);
    const result = await restore(client, saved.id);
    expect(result.clockOffsetSeconds).toBe(45);
    const clock = (await t.request({ url: '/v1/sandbox/clock', key: client.key })).body.data;
    expect(clock).toMatchObject({ now: new Date(Date.parse(saved.createdAt) + 70_000).toISOString(), offsetSeconds: 45, pendingTimers: 1 });
    expect(Date.parse(clock.nextTimerDueAt)).toBeLessThan(Date.parse(clock.now));
    // The next run of the timers (here an advance of one second) settles it.
    const next = await post('/v1/sandbox/clock/advance', { seconds: 1 }, client);
    expect(next.body.data.ran.map((timer: any) => timer.kind)).toEqual(['bank-transfer.settle']);
    const status = await t.request({ url: `/v1/baas/transactions/${pending.parentBankTransactionId as string}`, key: client.key });
    expect(status.body.data.status).toBe('COMPLETED');
    await expectLedgerClean(t);
  });

  it('a restore sent with an Idempotency-Key the snapshot had recorded (then wiped by a reset) restores, and replays after', async () => {
    const client = await t.newClient('restore key');
    const key = `reused-${crypto.randomUUID()}`;
    const created = await post('/v1/webhooks', { name: 'Keyed', url: 'http://127.0.0.1:9/keyed', subscribedEventTypes: ['CUSTOMER_CREATED'] }, client, key);
    expect(created.status).toBe(201);
    const saved = await snapshot(client);
    await reset(client);
    const first = await post(`/v1/sandbox/snapshots/${saved.id as string}/restore`, {}, client, key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.body.data.restored.webhook_subscriptions).toBe(1);
    const again = await post(`/v1/sandbox/snapshots/${saved.id as string}/restore`, {}, client, key);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('the keys of snapshot create, delete and restore outlive a restore and a reset: a retry replays, makes no second snapshot and restores nothing', async () => {
    const client = await t.newClient('snapshot keys');
    await createIndividual(t, client);
    const base = await snapshot(client, 'base');
    const [createKey, deleteKey, restoreKey, otherKey] = ['create', 'delete', 'restore', 'other'].map((name) => `${name}-${crypto.randomUUID()}`);
    const created = await post('/v1/sandbox/snapshots', { name: 'keyed' }, client, createKey);
    expect(created.status).toBe(201);
    const doomed = await snapshot(client, 'doomed');
    const deleted = await t.request({ method: 'DELETE', url: `/v1/sandbox/snapshots/${doomed.id as string}`, key: client.key, idempotencyKey: deleteKey });
    expect(deleted.status).toBe(200);
    const restored = await post(`/v1/sandbox/snapshots/${base.id as string}/restore`, {}, client, restoreKey);
    expect(restored.status).toBe(200);
    // A key of any other route used after the snapshot is forgotten, as before.
    const webhook = { name: 'After', url: 'http://127.0.0.1:9/after', subscribedEventTypes: ['CUSTOMER_CREATED'] };
    expect((await post('/v1/webhooks', webhook, client, otherKey)).status).toBe(201);

    const retryAll = async () => {
      const create = await post('/v1/sandbox/snapshots', { name: 'keyed' }, client, createKey);
      expect(create.status).toBe(201);
      expect(create.headers['idempotent-replayed']).toBe('true');
      expect(create.body).toEqual(created.body);
      const remove = await t.request({ method: 'DELETE', url: `/v1/sandbox/snapshots/${doomed.id as string}`, key: client.key, idempotencyKey: deleteKey });
      expect(remove.status).toBe(200);
      expect(remove.headers['idempotent-replayed']).toBe('true');
      expect(remove.body).toEqual(deleted.body);
      const again = await post(`/v1/sandbox/snapshots/${base.id as string}/restore`, {}, client, restoreKey);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(restored.body);
      const list = await t.request({ url: '/v1/sandbox/snapshots', key: client.key });
      expect(list.body.data.map((row: any) => row.name)).toEqual(['keyed', 'base']);
    };
    await retryAll();
    // The webhook made after the restore is still there: the replayed restore restored nothing.
    expect((await t.request({ url: '/v1/webhooks', key: client.key })).body.data.map((row: any) => row.name)).toEqual(['After']);

    await reset(client);
    await retryAll();
    expect((await t.request({ url: '/v1/customers', key: client.key })).body.data).toEqual([]);
    // The other key went with the reset, so it creates again.
    const afterReset = await post('/v1/webhooks', webhook, client, otherKey);
    expect(afterReset.status).toBe(201);
    expect(afterReset.headers['idempotent-replayed']).toBeUndefined();

    // Restoring a snapshot taken before the keys were used keeps them too.
    const second = await post(`/v1/sandbox/snapshots/${base.id as string}/restore`, {}, client);
    expect(second.status).toBe(200);
    await retryAll();
  });

  it('a snapshot create sent on a percent-encoded path keeps its key through a restore as on the plain path: the retry on either spelling replays', async () => {
    const client = await t.newClient('encoded snapshot keys');
    const base = await snapshot(client, 'base');
    const createKey = `create-${crypto.randomUUID()}`;
    const created = await post('/v1/sandbox/%73napshots', { name: 'encoded' }, client, createKey);
    expect(created.status).toBe(201);
    expect((await post(`/v1/sandbox/snapshots/${base.id as string}/restore`, {}, client)).status).toBe(200);
    for (const path of ['/v1/sandbox/%73napshots', '/v1/sandbox/snapshots/']) {
      const retry = await post(path, { name: 'encoded' }, client, createKey);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(created.body);
    }
    const list = await t.request({ url: '/v1/sandbox/snapshots', key: client.key });
    expect(list.body.data.map((row: any) => row.name)).toEqual(['encoded', 'base']);
  });

  it('lists newest first, reads, deletes; a deleted snapshot is gone', async () => {
    const client = await t.newClient('list');
    const first = await snapshot(client, 'first');
    const second = await snapshot(client, 'second');
    const list = await t.request({ url: '/v1/sandbox/snapshots?limit=1', key: client.key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((row: any) => row.id)).toEqual([second.id]);
    expect(list.body.pagination).toEqual({ totalResults: 2, totalResultsExact: true, hasMoreResults: true, nextStartAfterId: second.id });
    const next = await t.request({ url: `/v1/sandbox/snapshots?startAfterId=${second.id as string}`, key: client.key });
    expect(next.body.data).toEqual([first]);
    expect((await t.request({ url: `/v1/sandbox/snapshots/${first.id as string}`, key: client.key })).body.data).toEqual(first);

    const deleted = await t.request({ method: 'DELETE', url: `/v1/sandbox/snapshots/${first.id as string}`, key: client.key });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual(first);
    expect((await t.request({ url: `/v1/sandbox/snapshots/${first.id as string}`, key: client.key })).status).toBe(404);
    expect(await rowsOf('sandbox_snapshot_tables', client.id)).toBe(await sql<{ count: string }>`
      SELECT count(*)::text AS count FROM sandbox_snapshot_tables WHERE client_id = ${client.id} AND snapshot_id = ${second.id}`
      .execute(t.deps.db)
      .then((result) => Number(result.rows[0]?.count)));
  });

  it('newest first is the order they were taken in, also after a restore moved the clock back', async () => {
    const client = await t.newClient('list after a rewind');
    const early = await snapshot(client, 'early');
    await advance(client, 8 * 86_400);
    const ahead = await snapshot(client, 'taken with the clock ahead');
    await restore(client, early.id);
    const latest = await snapshot(client, 'taken after the rewind');
    // Each shows the client's time it was taken at; the latest was taken at the rewound time.
    expect(new Date(latest.createdAt).getTime()).toBeLessThan(new Date(ahead.createdAt).getTime());
    const list = await t.request({ url: '/v1/sandbox/snapshots', key: client.key });
    expect(list.body.data.map((row: any) => row.name)).toEqual(['taken after the rewind', 'taken with the clock ahead', 'early']);
    expect((await t.request({ url: '/v1/sandbox/snapshots?limit=1', key: client.key })).body.data[0].id).toBe(latest.id);
  });

  it(`keeps at most ${snapshotsPerClientMax} snapshots per client: 422 SANDBOX_SNAPSHOT_LIMIT_REACHED beyond`, async () => {
    const client = await t.newClient('limit');
    for (let index = 0; index < snapshotsPerClientMax; index++) await snapshot(client, `snapshot ${index}`);
    const refused = await post('/v1/sandbox/snapshots', { name: 'one too many' }, client);
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('SANDBOX_SNAPSHOT_LIMIT_REACHED');
    expect((await t.request({ url: '/v1/sandbox/snapshots', key: client.key })).body.pagination.totalResults).toBe(snapshotsPerClientMax);
  });

  it('404 NOT_FOUND for another client\'s snapshot, the same as for a missing one', async () => {
    const owner = await t.newClient('owner');
    await createIndividual(t, owner);
    const saved = await snapshot(owner);
    const stranger = await t.newClient('stranger');
    const missing = crypto.randomUUID();
    for (const id of [saved.id, missing, 'not-a-uuid']) {
      for (const request of [
        { method: 'GET' as const, url: `/v1/sandbox/snapshots/${id as string}` },
        { method: 'POST' as const, url: `/v1/sandbox/snapshots/${id as string}/restore`, body: {} },
        { method: 'DELETE' as const, url: `/v1/sandbox/snapshots/${id as string}` },
      ]) {
        const response = await t.request({ ...request, key: stranger.key });
        expect(response.status, `${request.method} ${request.url}`).toBe(404);
        expect(response.body.code).toBe('NOT_FOUND');
        expect(response.body.message).toBe('Snapshot not found');
      }
    }
    expect((await t.request({ url: '/v1/sandbox/snapshots', key: stranger.key })).body.data).toEqual([]);
    expect((await t.request({ url: `/v1/sandbox/snapshots/${saved.id as string}`, key: owner.key })).status).toBe(200);
    expect(await rowsOf('customers', owner.id)).toBe(1);
  });

  /** Makes a snapshot look taken with an older schema: `version`, and `column` missing from the saved rows of `table`. */
  async function ageSnapshot(snapshotId: string, version: string | null, table: string, column: string): Promise<void> {
    await sql`UPDATE sandbox_snapshots SET schema_version = ${version} WHERE id = ${snapshotId}`.execute(t.deps.db);
    const result = await sql`
      UPDATE sandbox_snapshot_tables SET rows = (SELECT jsonb_agg(e - ${column}::text ORDER BY n) FROM jsonb_array_elements(rows) WITH ORDINALITY AS x (e, n))
      WHERE snapshot_id = ${snapshotId} AND table_name = ${table}`.execute(t.deps.db);
    expect(Number(result.numAffectedRows)).toBeGreaterThan(0);
  }

  it('a snapshot taken with an older schema restores; a column added since takes its default', async () => {
    const client = await t.newClient('older snapshot');
    const key = `older-${crypto.randomUUID()}`;
    // A response that is not sealed (sealed ones hold personal data or secrets).
    const body = { seconds: 60 };
    const created = await post('/v1/sandbox/clock/advance', body, client, key);
    expect(created.status).toBe(200);
    await createIndividual(t, client);
    const saved = await snapshot(client);
    const current = await sql<{ version: string }>`SELECT schema_version AS version FROM sandbox_snapshots WHERE id = ${saved.id}`.execute(t.deps.db);
    expect(current.rows[0]?.version).toMatch(/^\d{4}$/);
    // As if idempotency_keys.response_sealed (NOT NULL DEFAULT false) had come after the snapshot,
    // taken after the last migration that changed records (0045).
    await ageSnapshot(saved.id, '0045', 'idempotency_keys', 'response_sealed');
    await reset(client);
    const restored = await restore(client, saved.id);
    expect(restored.restored.idempotency_keys).toBe(1);
    expect(restored.restored.customers).toBe(1);
    const replay = await post('/v1/sandbox/clock/advance', body, client, key);
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(created.body);
    await expectLedgerClean(t);
  });

  it('422 SANDBOX_SNAPSHOT_INCOMPATIBLE when an older snapshot\'s records do not fit the current tables; nothing changes', async () => {
    const client = await t.newClient('incompatible snapshot');
    await createIndividual(t, client);
    const saved = await snapshot(client);
    // customers.email is NOT NULL without a default: rows without it cannot go back.
    await ageSnapshot(saved.id, '0045', 'customers', 'email');
    const later = await createIndividual(t, client);
    const before = await dumpClient(client.id);
    const refused = await post(`/v1/sandbox/snapshots/${saved.id as string}/restore`, {}, client);
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.code).toBe('SANDBOX_SNAPSHOT_INCOMPATIBLE');
    expect(refused.body.message).toContain('(0045; now ');
    expect(refused.body.message).toContain('customers (column email)');
    expect(await dumpClient(client.id)).toEqual(before);
    expect((await t.request({ url: `/v1/customers/${later.id as string}`, key: client.key })).status).toBe(200);
  });

  it('422 SANDBOX_SNAPSHOT_INCOMPATIBLE for a snapshot holding ledger entries without their transfer; nothing changes', async () => {
    // Such entries were left by a reset or a restore run while the client's transfers committed
    // (until 2026-12-07), and a snapshot taken then answered 500 to every restore (found by an audit).
    const client = await t.newClient('snapshot with orphan entries');
    const wallet = await linkedWallet(t, client);
    await fund(t, wallet, '10.00', 'USD', client);
    await withTransaction(t.deps.db, async (tx) => {
      await sql`SELECT set_config('openbaas.sandbox_rewrite', 'on', true)`.execute(tx);
      await sql`DELETE FROM wallet_transactions WHERE client_id = ${client.id}`.execute(tx);
      await sql`DELETE FROM ledger_transfers WHERE client_id = ${client.id}`.execute(tx);
    });
    const saved = await snapshot(client);
    await reset(client);
    const before = await dumpClient(client.id);
    const refused = await post(`/v1/sandbox/snapshots/${saved.id as string}/restore`, {}, client);
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.code).toBe('SANDBOX_SNAPSHOT_INCOMPATIBLE');
    expect(refused.body.message).toContain('ledger_entries');
    expect(await dumpClient(client.id)).toEqual(before);
    await expectLedgerClean(t);
  });

  it('422 SANDBOX_SNAPSHOT_INCOMPATIBLE for a snapshot taken before a migration that changed records, naming the newest; nothing changes', async () => {
    // Until 2026-12-05 it restored: a card reversal saved before migration 0044 came back without the
    // link 0044 gave the others, and a second reversal of the purchase credited it again (found by an audit).
    const client = await t.newClient('snapshot before a data migration');
    await createIndividual(t, client);
    const saved = await snapshot(client);
    for (const version of ['0043', '0044', null]) {
      await sql`UPDATE sandbox_snapshots SET schema_version = ${version} WHERE id = ${saved.id}`.execute(t.deps.db);
      const before = await dumpClient(client.id);
      const refused = await post(`/v1/sandbox/snapshots/${saved.id as string}/restore`, {}, client);
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body.code).toBe('SANDBOX_SNAPSHOT_INCOMPATIBLE');
      expect(refused.body.message).toContain(`(${version ?? '0031 or older'}; now `);
      expect(refused.body.message).toContain('before migration 0045_credit_line_excess_paid_out');
      expect(await dumpClient(client.id)).toEqual(before);
    }
    await sql`UPDATE sandbox_snapshots SET schema_version = '0045' WHERE id = ${saved.id}`.execute(t.deps.db);
    expect((await post(`/v1/sandbox/snapshots/${saved.id as string}/restore`, {}, client)).status).toBe(200);
  });

  it('restores without a body, and 400 for bad bodies', async () => {
    const client = await t.newClient('bodies');
    const saved = await snapshot(client);
    const bare = await t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${saved.id as string}/restore`, key: client.key });
    expect(bare.status, JSON.stringify(bare.body)).toBe(200);
    for (const [url, body] of [
      [`/v1/sandbox/snapshots/${saved.id as string}/restore`, { resendPendingDeliveries: 'yes' }],
      [`/v1/sandbox/snapshots/${saved.id as string}/restore`, { other: true }],
      ['/v1/sandbox/snapshots', { name: '' }],
      ['/v1/sandbox/snapshots', { name: '   ' }],
      ['/v1/sandbox/snapshots', { name: 'x'.repeat(101) }],
      ['/v1/sandbox/snapshots', {}],
      ['/v1/sandbox/snapshots', { name: 'ok', extra: 1 }],
    ] as const) {
      const response = await post(url, body, client);
      expect(response.status, `${url} ${JSON.stringify(body)}`).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('what neither a reset nor a restore changes', () => {
  it('the vault keeps its ids, its current secret and its audit log; the credit settings survive a reset', async () => {
    const client = await t.newClient('vault kept');
    const { wallet, cardId } = await issuedCard(t, client);
    const config = (await t.request({ url: '/v1/vault/config', key: client.key })).body.data;
    expect((await t.request({ method: 'PATCH', url: '/v1/sandbox/credit-settings', key: client.key, body: { liquidationPenaltyRate: '0.0300' } })).status).toBe(200);
    const saved = await snapshot(client, 'before the rotations');
    const token = async () => {
      const response = await post('/v1/vault/token', { userId: wallet.customerId, cardId }, client);
      expect(response.status).toBe(200);
      return response.body.data.token as string;
    };
    const reveal = (bearer: string) => t.request({ method: 'POST', url: '/v1/vault/reveal', key: null, body: { cardId, fields: ['cvv'] }, headers: { authorization: `Bearer ${bearer}` } });
    const old = await token();
    expect((await reveal(old)).status).toBe(200);
    for (let rotation = 0; rotation < 2; rotation++) expect((await post('/v1/vault/secret/rotate', undefined, client)).status).toBe(200);
    expect((await reveal(old)).status).toBe(401);
    const auditTotal = async () => (await t.request({ url: '/v1/vault/audit', key: client.key })).body.pagination.totalResults as number;
    const audited = await auditTotal();
    expect(audited).toBeGreaterThanOrEqual(2);

    await restore(client, saved.id as string);
    expect((await reveal(old)).status).toBe(401);
    expect((await t.request({ url: '/v1/vault/config', key: client.key })).body.data).toEqual(config);
    expect(await auditTotal()).toBe(audited);

    await reset(client);
    expect((await reveal(old)).status).toBe(401);
    expect((await t.request({ url: '/v1/vault/config', key: client.key })).body.data).toEqual(config);
    expect(await auditTotal()).toBe(audited);
    expect((await t.request({ url: '/v1/credit-settings', key: client.key })).body.data.liquidationPenaltyRate).toBe('0.0300');
  });
});

describe('production mode', () => {
  it('has no reset or snapshot routes (404)', async () => {
    const production = await createTestApp({ env: { OPENBAAS_MODE: 'production' } });
    try {
      const id = '019ca945-0a00-74c1-8797-3bfde107f365';
      for (const [method, url] of [
        ['POST', '/v1/sandbox/reset'],
        ['POST', '/v1/sandbox/snapshots'],
        ['GET', '/v1/sandbox/snapshots'],
        ['GET', `/v1/sandbox/snapshots/${id}`],
        ['POST', `/v1/sandbox/snapshots/${id}/restore`],
        ['DELETE', `/v1/sandbox/snapshots/${id}`],
      ] as const) {
        const response = await production.request({ method, url, ...(method === 'POST' ? { body: { confirm: 'RESET', name: 'x' } } : {}) });
        expect(response.status, `${method} ${url}`).toBe(404);
        expect(response.body.code).toBe('ROUTE_NOT_FOUND');
      }
    } finally {
      await production.close();
    }
  });
});

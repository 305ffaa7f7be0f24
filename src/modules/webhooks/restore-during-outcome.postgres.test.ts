import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { individualBody } from '../../../test/customers/fixtures.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { DeliveryWorker } from './delivery-worker.js';

/**
 * A sandbox restore that deletes a delivery and commits while the worker's statement recording
 * that delivery's outcome runs (PostgreSQL only: on the embedded database the two cannot overlap).
 * Until 2026-12-08 the statement's attempt, checked against the delivery as it was when the
 * statement began, failed on its foreign key once the restore committed, and with it the outcomes
 * of every other delivery in the batch, of every client (they were then sent again when their
 * claims expired). The worker now takes the fence of the batch's clients first (client-fence.ts).
 */

let t: TestContext;
let receiver: WebhookReceiver;
const errors: Array<{ message: string; err: unknown }> = [];

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s', WEBHOOK_TIMEOUT_MS: '10000' } });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

/** Waits until a session of this database (pg_stat_activity covers the server: other test files sleep too) sleeps in pg_sleep (the restore, paused by the test's trigger). */
async function untilSomeoneSleeps(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const result = await sql<{ sleeping: number }>`SELECT count(*)::int AS sleeping FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()`.execute(t.deps.db);
    if ((result.rows[0]?.sleeping ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error('the restore never reached the pause');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a restore that commits while the worker records the outcome of a delivery it deletes', () => {
  it('the outcome is dropped with its delivery; the worker reports no failure', async () => {
    const client = await t.newClient('restore during an outcome');
    const saved = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'no webhooks yet' } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const hook = await t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: { name: 'outcome', url: receiver.url('/outcome'), subscribedEventTypes: ['CUSTOMER_CREATED'] } });
    expect(hook.status).toBe(201);
    const created = await t.request({ method: 'POST', url: '/v1/customers/individual', key: client.key, body: individualBody() });
    expect(created.status).toBe(201);

    receiver.mode = 'hold';
    const worker = new DeliveryWorker(t.deps, { logger: { error: (object, message) => errors.push({ message, err: (object as { err?: unknown }).err }) } });
    const sending = worker.deliverDue();
    for (let waited = 0; receiver.requests.filter((request) => request.path === '/outcome').length === 0 && waited < 250; waited++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(receiver.requests.filter((request) => request.path === '/outcome')).toHaveLength(1);

    // The restore pauses once it has deleted the client's deliveries (their events are deleted
    // after them), uncommitted; the endpoint answers meanwhile, and the worker records the outcome.
    await sql`CREATE FUNCTION pause_restore() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1.5); RETURN OLD; END $$`.execute(t.deps.db);
    await sql.raw(`CREATE TRIGGER pause_restore BEFORE DELETE ON events FOR EACH ROW WHEN (OLD.client_id = '${client.id}') EXECUTE FUNCTION pause_restore()`).execute(t.deps.db);
    try {
      const restored = t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${saved.body.data.id as string}/restore`, key: client.key, body: {} });
      await untilSomeoneSleeps();
      receiver.mode = 'ok';
      receiver.release();
      await sending;
      const answer = await restored;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    } finally {
      await sql`DROP TRIGGER pause_restore ON events`.execute(t.deps.db);
      await sql`DROP FUNCTION pause_restore()`.execute(t.deps.db);
    }
    expect(errors.map((error) => `${error.message}: ${String((error.err as Error | undefined)?.message)}`)).toEqual([]);
    const attempts = await t.deps.db.selectFrom('webhook_delivery_attempts').select('delivery_id').where('client_id', '=', client.id).execute();
    expect(attempts).toEqual([]);
  });
});

import crypto from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { programProcessesSuite } from './support/processes.js';
import { deposit, expectLedgerClean, linkedWallet } from './bank/fixtures.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The sandbox clock across processes: two `serve` processes (each with its own workers) and a
 * separate `worker` process on one PostgreSQL schema; the same client advances its clock through
 * both servers at once while the workers run. Every due timer must run exactly once. PostgreSQL
 * only: on the embedded PGlite database a second process cannot open the database.
 */
const suite = programProcessesSuite();

describe('the sandbox clock in several processes (PostgreSQL only)', () => {
  it('two servers advancing one client\'s clock at once, with three timer workers running: every due timer runs exactly once', async () => {
    const { t, processes } = suite;
    const wallet = await linkedWallet(t);
    const deposits: string[] = [];
    for (let index = 0; index < 30; index++) {
      deposits.push((await deposit(t, wallet.virtualAccountNumber, '1.00')).parentBankTransactionId as string);
      t.clock.advance(500);
    }
    const [first, second] = await Promise.all([processes.startServer(), processes.startServer()]);
    processes.start(['worker']);

    const advance = (base: string) =>
      fetch(`${base}/v1/sandbox/clock/advance`, {
        method: 'POST',
        headers: { authorization: t.clientA.key, 'content-type': 'application/json' },
        body: JSON.stringify({ seconds: 300 }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
    const answers = await Promise.all([advance(first), advance(second), advance(first), advance(second)]);
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);

    // Every deposit settled (by an advance, or by a worker before the first advance took the lease: never twice).
    const ranByAdvances = answers.flatMap((answer) => (answer.body.data.ran as any[]).map((timer) => timer.id as string));
    expect(new Set(ranByAdvances).size).toBe(ranByAdvances.length);
    const clock = await fetch(`${first}/v1/sandbox/clock`, { headers: { authorization: t.clientA.key } }).then((response) => response.json() as Promise<any>);
    expect(clock.data.offsetSeconds).toBe(1200);
    expect(clock.data.pendingTimers).toBe(0);

    const completed = await t.deps.db
      .selectFrom('events')
      .select((builder) => [sql<string>`data->>'parentBankTransactionId'`.as('id'), builder.fn.countAll<string>().as('count')])
      .where('client_id', '=', t.clientA.id)
      .where('type', '=', 'BANK_DEPOSIT_TRANSACTION_COMPLETED')
      .groupBy(sql`data->>'parentBankTransactionId'`)
      .execute();
    const counts = new Map(completed.map((row) => [row.id, Number(row.count)]));
    for (const id of deposits) expect(counts.get(id), id).toBe(1);
    await expectLedgerClean(t);
  }, 180_000);

  it('one advance sent with the same Idempotency-Key to both servers at once moves the clock once, gives the lease back, and its retry replays (2026-12-07)', async () => {
    const { t, processes } = suite;
    const [first, second] = await Promise.all([processes.startServer(), processes.startServer()]);
    const client = t.clientB;
    const advance = (base: string, key: string) =>
      fetch(`${base}/v1/sandbox/clock/advance`, {
        method: 'POST',
        headers: { authorization: client.key, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ seconds: 60 }),
      }).then(async (response) => ({ status: response.status, replayed: response.headers.get('idempotent-replayed'), body: (await response.json()) as any }));
    const clockRow = async () =>
      (
        await sql<{ offset: string; lease: Date | null }>`SELECT clock_offset_ms::text AS offset, clock_advance_lease_until AS lease FROM clients WHERE id = ${client.id}`.execute(t.deps.db)
      ).rows[0];
    const start = Number((await clockRow())?.offset);
    // Until 2026-12-07 about one pair in ten moved the clock twice: the second looked for the key's
    // answer before the first had stored it, then found the lease free; its own answer replayed the
    // first one and kept the lease, so the advances after it waited 30 s for 409 SANDBOX_CLOCK_BUSY
    // (found by an audit). Each pair is checked at once: the first double move fails the test.
    for (let pair = 1; pair <= 25; pair++) {
      const key = crypto.randomUUID();
      const answers = await Promise.all([advance(first, key), advance(second, key)]);
      for (const answer of answers) {
        if (answer.status !== 200) expect(answer.body.code, JSON.stringify(answer.body)).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
      }
      expect(answers.some((answer) => answer.status === 200 && answer.replayed === null), JSON.stringify(answers)).toBe(true);
      const row = await clockRow();
      expect(Number(row?.offset), `pair ${pair}`).toBe(start + pair * 60_000);
      expect(row?.lease, `pair ${pair}`).toBeNull();
      const retry = await advance(pair % 2 === 0 ? first : second, key);
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(retry.replayed).toBe('true');
    }
  }, 180_000);
});

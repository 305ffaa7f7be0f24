import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { withTransaction, type Tx } from '../db/transaction.js';
import type { RequestContext } from './context.js';
import { AppError } from './errors.js';
import { errorBody } from './error-handler.js';
import {
  advisoryLockId,
  envelopeOf,
  idempotencyKeyOf,
  requestContext,
  requestHash,
  type StoredResponse,
  type WriteResult,
} from './idempotency.js';

/** One request of a batch, as the route's `process` function sees it. */
export interface BatchItem<I> {
  context: RequestContext;
  input: I;
}

/** What `process` answers for one item: its result, or the expected refusal (a 4xx AppError). */
export type BatchOutcome<O> = { ok: true; result: WriteResult<O> } | { ok: false; error: AppError };

export interface WriteBatcherOptions<I, O> {
  /** Most requests written in one database transaction. */
  sizeMax: number;
  /** Most batches in flight at once (PGlite has one connection: use 1 there). */
  concurrency: number;
  /**
   * Does the work of every item in the batch's transaction and answers one outcome per item, in
   * order. An item it refuses must leave no effect behind (the others still commit). Throwing
   * fails the whole batch; the batcher then runs each item alone, so one bad request cannot fail
   * its neighbours.
   */
  process(tx: Tx, items: BatchItem<I>[]): Promise<BatchOutcome<O>[]>;
}

type Settlement = { kind: 'response'; response: StoredResponse; replay: boolean } | { kind: 'error'; error: unknown };

interface Pending<I> {
  context: RequestContext;
  input: I;
  key: string | undefined;
  hash: Buffer | undefined;
  lockId: string | undefined;
  method: string;
  path: string;
  settle(settlement: Settlement): void;
}

const keyOf = (item: { context: RequestContext; key: string | undefined }) =>
  item.key === undefined ? undefined : `${item.context.clientId}\n${item.key}`;

/**
 * Writes concurrent requests of one route together: requests that arrive while earlier batches are
 * being written wait and go into the next batch, which is written in one database transaction.
 * Under light load every request runs alone (no added delay); under heavy load one commit
 * carries many requests. Idempotency stays per request, exactly as `runWrite` does it: each key
 * is locked, looked up and recorded in the transaction that carries its effect, replays and key
 * reuse answer as usual, and two requests with one key never share a batch (the second waits and
 * then replays the first).
 */
export class WriteBatcher<I, O> {
  private readonly queue: Pending<I>[] = [];
  private readonly keysInFlight = new Set<string>();
  private running = 0;

  constructor(
    private readonly deps: Deps,
    private readonly options: WriteBatcherOptions<I, O>,
  ) {}

  /** Queues the request, waits for its batch, and sends its response (or throws its error). */
  async submit(request: FastifyRequest, reply: FastifyReply, input: I): Promise<unknown> {
    const context = requestContext(request, this.deps);
    const key = idempotencyKeyOf(request);
    const settlement = await new Promise<Settlement>((settle) => {
      this.queue.push({
        context,
        input,
        key,
        hash: key === undefined ? undefined : requestHash(request),
        lockId: key === undefined ? undefined : advisoryLockId(context.clientId, key),
        method: request.method,
        path: (request.url.split('?')[0] ?? '').slice(0, 2000),
        settle,
      });
      this.startBatches();
    });
    if (settlement.kind === 'error') throw settlement.error;
    if (settlement.replay) reply.header('Idempotent-Replayed', 'true');
    return reply.code(settlement.response.statusCode).send(settlement.response.body);
  }

  private startBatches(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const batch: Pending<I>[] = [];
      const batchKeys = new Set<string>();
      for (let index = 0; index < this.queue.length && batch.length < this.options.sizeMax; ) {
        const item = this.queue[index];
        const itemKey = item ? keyOf(item) : undefined;
        if (item && (itemKey === undefined || (!this.keysInFlight.has(itemKey) && !batchKeys.has(itemKey)))) {
          if (itemKey !== undefined) batchKeys.add(itemKey);
          batch.push(item);
          this.queue.splice(index, 1);
        } else {
          index++;
        }
      }
      if (batch.length === 0) return;
      for (const itemKey of batchKeys) this.keysInFlight.add(itemKey);
      this.running++;
      void this.runIsolated(batch).finally(() => {
        for (const itemKey of batchKeys) this.keysInFlight.delete(itemKey);
        this.running--;
        this.startBatches();
      });
    }
  }

  /** Runs a batch; if it fails as a whole, runs each of its items alone. Never rejects. */
  private async runIsolated(batch: Pending<I>[]): Promise<void> {
    let settlements: Settlement[];
    try {
      settlements = await this.runBatch(batch);
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.settle({ kind: 'error', error });
        return;
      }
      for (const item of batch) await this.runIsolated([item]);
      return;
    }
    batch.forEach((item, index) => item.settle(settlements[index] ?? { kind: 'error', error: new Error('batch lost an item') }));
  }

  private async runBatch(batch: Pending<I>[]): Promise<Settlement[]> {
    return withTransaction(this.deps.db, async (tx) => {
      const settlements: (Settlement | undefined)[] = batch.map(() => undefined);
      const keyed = batch.map((item, index) => ({ item, index })).filter(({ item }) => item.key !== undefined);

      if (keyed.length > 0) {
        const lockIds = keyed.map(({ item }) => item.lockId ?? '0');
        const locks = await sql<{ lock_id: string; locked: boolean }>`
          SELECT lock_id::text, pg_try_advisory_xact_lock(lock_id) AS locked FROM unnest(${lockIds}::bigint[]) AS l (lock_id)`.execute(tx);
        const lockedIds = new Set(locks.rows.filter((row) => row.locked).map((row) => row.lock_id));
        const stored = await sql<{ client_id: string; key: string; request_hash: Buffer; status_code: number; response_body: unknown }>`
          SELECT client_id, key, request_hash, status_code, response_body FROM idempotency_keys
          WHERE (client_id, key) IN (SELECT * FROM unnest(${keyed.map(({ item }) => item.context.clientId)}::uuid[], ${keyed.map(({ item }) => item.key ?? '')}::text[]))`.execute(tx);
        const storedByKey = new Map(stored.rows.map((row) => [`${row.client_id}\n${row.key}`, row]));
        for (const { item, index } of keyed) {
          if (!lockedIds.has(item.lockId ?? '')) {
            settlements[index] = {
              kind: 'error',
              error: new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry shortly.'),
            };
            continue;
          }
          const previous = storedByKey.get(keyOf(item) ?? '');
          if (!previous) continue;
          if (!item.hash || !previous.request_hash.equals(item.hash)) {
            settlements[index] = { kind: 'error', error: new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request.') };
          } else {
            settlements[index] = { kind: 'response', replay: true, response: { statusCode: previous.status_code, body: previous.response_body } };
          }
        }
      }

      const fresh = batch.map((item, index) => ({ item, index })).filter(({ index }) => settlements[index] === undefined);
      const outcomes = fresh.length === 0 ? [] : await this.options.process(tx, fresh.map(({ item }) => ({ context: item.context, input: item.input })));
      if (outcomes.length !== fresh.length) throw new Error(`process answered ${outcomes.length} outcomes for ${fresh.length} items`);

      const records: { item: Pending<I>; response: StoredResponse }[] = [];
      fresh.forEach(({ item, index }, position) => {
        const outcome = outcomes[position];
        if (!outcome) return;
        if (outcome.ok) {
          const response = { statusCode: outcome.result.statusCode ?? 200, body: envelopeOf(outcome.result, item.context) };
          settlements[index] = { kind: 'response', replay: false, response };
          if (item.key !== undefined) records.push({ item, response });
        } else {
          if (outcome.error.statusCode >= 500) throw outcome.error;
          settlements[index] = { kind: 'error', error: outcome.error };
          if (item.key !== undefined) records.push({ item, response: { statusCode: outcome.error.statusCode, body: errorBody(outcome.error, item.context.traceId) } });
        }
      });
      if (records.length > 0) await recordKeys(tx, records);
      return settlements.map((settlement) => settlement ?? { kind: 'error', error: new Error('batch item left unsettled') });
    });
  }
}

async function recordKeys(tx: Tx, records: { item: Pending<unknown>; response: StoredResponse }[]): Promise<void> {
  const column = <T>(pick: (record: { item: Pending<unknown>; response: StoredResponse }) => T) => records.map(pick);
  await sql`
    INSERT INTO idempotency_keys (client_id, key, request_hash, method, path, status_code, response_body, created_at)
    SELECT client_id, key, decode(request_hash, 'hex'), method, path, status_code, response_body, created_at FROM unnest(
      ${column((record) => record.item.context.clientId)}::uuid[],
      ${column((record) => record.item.key ?? '')}::text[],
      ${column((record) => record.item.hash?.toString('hex') ?? '')}::text[],
      ${column((record) => record.item.method)}::text[],
      ${column((record) => record.item.path)}::text[],
      ${column((record) => record.response.statusCode)}::int[],
      ${column((record) => JSON.stringify(record.response.body))}::jsonb[],
      ${column((record) => record.item.context.now)}::timestamptz[]
    ) AS r (client_id, key, request_hash, method, path, status_code, response_body, created_at)`.execute(tx);
}

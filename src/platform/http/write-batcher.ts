import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { onceOnNextTurn } from '../next-turn.js';
import { isDatabaseAnswer, type Tx } from '../db/transaction.js';
import { isCommitOutcomeUnknown, TransactionLane, withPipelinedTransaction, type PipelinedOutcome } from '../db/pipelined-transaction.js';
import { WriteStatement } from '../db/write-statement.js';
import { jsonArray } from '../db/parameters.js';
import { prepared } from '../db/prepared-statements.js';
import type { RequestContext } from './context.js';
import { AppError } from './errors.js';
import { errorBody } from './error-handler.js';
import {
  advisoryLockId,
  envelopeOf,
  idempotencyKeyOf,
  isStoredUnderKey,
  keyReusedError,
  markReplayed,
  requestContext,
  requestIdentity,
  type RequestIdentity,
  storedBody,
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

export interface WriteBatcherOptions<I, O, L> {
  /** Most requests written in one database transaction. */
  sizeMax: number;
  /**
   * Most batches in flight at once (PGlite has one connection: use 1 there). On PostgreSQL, with
   * `assume`, the batches written without reading go one behind the other on one connection (a
   * TransactionLane): with 2, the database has the next batch as soon as it has committed one.
   */
  concurrency: number;
  /**
   * Locks and reads what the batch's items need, before anyone knows which items are replays:
   * its statements leave together with the idempotency lookup, in one round trip. It must not
   * write; an item found to be a replay is then simply not processed.
   */
  load(tx: Tx, items: BatchItem<I>[]): Promise<L>;
  /**
   * Does the work of the fresh items (`fresh` holds their positions in the batch given to
   * `load`) and answers one outcome per fresh item, in that order. An item it refuses must leave
   * no effect behind (the others still commit). Its writes go into `write`, which the batcher
   * sends once, together with the idempotency records, with COMMIT right behind it. Throwing
   * fails the whole batch; the batcher then runs each item alone, so one bad request cannot fail
   * its neighbours.
   */
  process(tx: Tx, loaded: L, fresh: readonly number[], write: WriteStatement): Promise<BatchOutcome<O>[]>;
  /**
   * Optional first attempt that reads nothing (no `load`, no idempotency lookup): answers what
   * `process` needs for a batch of fresh items whose checks the write itself makes, failing as a
   * whole when any does not hold. The batch then costs one round trip (BEGIN, the write, the
   * idempotency records and COMMIT leave together). When that write fails with a database error
   * (a check, an idempotency key already stored, a deadlock), nothing has committed and the batch
   * runs again the usual way.
   */
  assume?: (tx: Tx, items: BatchItem<I>[]) => L;
  /**
   * Whether `assume` can answer for this batch; when it answers false the batch goes the checked
   * way at once (for example when the write could not check something the assumed path skips).
   * Without it, every batch is first tried with `assume`.
   */
  assumable?: (items: BatchItem<I>[]) => boolean;
  /** Told of every batch written: which way (`unchecked` is `assume`'s) and whether it committed. */
  observe?: (path: 'unchecked' | 'checked', committed: boolean) => void;
}

type Settlement = { kind: 'response'; response: StoredResponse; replay: boolean } | { kind: 'error'; error: unknown };

/** What a request with an Idempotency-Key brings to its record: the key, and the request's identity. */
interface Keyed extends RequestIdentity {
  key: string;
  method: string;
}

interface Pending<I> {
  context: RequestContext;
  input: I;
  /** Set for a request with an Idempotency-Key (only such a request keeps a record). */
  keyed: Keyed | undefined;
  settle(settlement: Settlement): void;
}

const debugBatches = process.env.OPENBAAS_DEBUG_BATCHES === '1';
const debugStats = { batches: 0, items: 0 };
if (debugBatches) {
  setInterval(() => {
    if (debugStats.batches > 0) process.stderr.write(`batches=${debugStats.batches} items=${debugStats.items} avg=${(debugStats.items / debugStats.batches).toFixed(1)}\n`);
    debugStats.batches = 0;
    debugStats.items = 0;
  }, 2000).unref();
}

/**
 * Waits until the statements issued in this turn of the event loop have been written. On the lane
 * a batch's responses are sent only after the batch that `end` started has gone to the database:
 * otherwise the database could wait, idle, while this process writes a socket per response (each
 * write hands the processor to the waiting client), and only then receive its next batch. The
 * writes of the turn leave on a tick after its promise continuations (prepared-statements.ts),
 * and a new batch takes its connection from the pool on a tick too; setImmediate runs after both.
 */
const settleAfterNextWrite = () => new Promise<void>((resolve) => setImmediate(resolve));

const keyOf = (item: { context: RequestContext; keyed: Keyed | undefined }) =>
  item.keyed === undefined ? undefined : `${item.context.clientId}\n${item.keyed.key}`;

/**
 * Writes concurrent requests of one route together: requests that arrive while earlier batches are
 * being written wait and go into the next batch, which is written in one database transaction.
 * Under light load every request runs alone (no added delay); under heavy load one commit
 * carries many requests. Idempotency stays per request, as `runWrite` does it: each key is
 * recorded in the transaction that carries its effect, replays and key reuse answer as usual, and
 * two requests with one key never share a batch (the second waits and then replays the first).
 *
 * A batch is written one of two ways. With `assume`, it is first written without reading
 * anything: one round trip whose statement checks what the batch assumed (balances, accounts) and
 * whose idempotency records fail on the primary key if a key was already used. That covers the
 * common case of fresh requests that succeed. If PostgreSQL refuses it, nothing has committed and
 * the batch is written the checked way: two round trips, the first taking each key's advisory
 * lock, reading what is stored under it and locking what `load` needs, so that replays, reused
 * keys and refusals get their own answers (docs/ARCHITECTURE.md, "Batched writes").
 */
export class WriteBatcher<I, O, L> {
  private readonly queue: Pending<I>[] = [];
  private readonly keysInFlight = new Set<string>();
  private running = 0;
  /**
   * Starts batches once the requests of this turn of the event loop have queued (onceOnNextTurn).
   * Started at once, the first request would always leave alone, and on the embedded database,
   * whose queries run on this very thread, the others could not even be read before it finished.
   */
  private readonly scheduleStart = onceOnNextTurn(() => this.startBatches());
  /** Where the batches written without reading go, on PostgreSQL (see startBatches). */
  private readonly lane: TransactionLane | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly options: WriteBatcherOptions<I, O, L>,
  ) {
    // The lane keeps a connection for as long as batches keep coming: with a pool of one, nothing
    // else (the checked way included) would get a connection under load.
    const lanePossible = deps.database.kind === 'postgres' && deps.config.databasePoolMax >= 2;
    this.lane = options.assume && lanePossible ? new TransactionLane(deps.database.pool) : undefined;
  }

  /**
   * Queues the request, waits for its batch, and sends its response (or throws its error). A route
   * that already made the request's context (to read something before the write) passes it, so the
   * write runs at the same client time.
   */
  async submit(request: FastifyRequest, reply: FastifyReply, input: I, context: RequestContext = requestContext(request, this.deps)): Promise<unknown> {
    const key = idempotencyKeyOf(request);
    const keyed = key === undefined ? undefined : { key, method: request.method, ...requestIdentity(request) };
    const settlement = await new Promise<Settlement>((settle) => {
      this.queue.push({ context, input, keyed, settle });
      this.scheduleStart();
    });
    if (settlement.kind === 'error') throw settlement.error;
    if (settlement.replay) markReplayed(reply, settlement.response);
    return reply.code(settlement.response.statusCode).send(settlement.response.body);
  }

  private startBatches(): void {
    // On the lane (PostgreSQL), a batch starts whenever fewer than `concurrency` are in flight on
    // it: they run one after the other in one database process, so the one waiting behind keeps
    // the database busy while this process answers the one before, and the requests arriving
    // meanwhile gather into the next. In two full runs of the transfers benchmark, 0.99 of its
    // anchor with two in flight, against 0.76 before the lane (docs/benchmarks.md; three in
    // flight made smaller batches: 0.82). Batches refused on the lane run the checked way on
    // connections of their own; all batches together, lane and checked, stay within twice
    // `concurrency`.
    //
    // Otherwise a batch starts at once when none is running, and another one joins it in flight
    // only when enough requests wait to fill a quarter of it: the waiting requests are better off
    // riding together in the next batch (fewer commits and round trips per request). Measured
    // with the transfers benchmark: a quarter beat an eighth (which beat a sixteenth).
    const fillToOverlap = Math.max(1, Math.ceil(this.options.sizeMax / 4));
    const lane = this.lane;
    const mayStart = lane
      ? () => lane.inFlight < this.options.concurrency && this.running < 2 * this.options.concurrency
      : () => this.running < this.options.concurrency && (this.running === 0 || this.queue.length >= fillToOverlap);
    while (this.queue.length > 0 && mayStart()) {
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
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        for (const itemKey of batchKeys) this.keysInFlight.delete(itemKey);
        this.running--;
        this.startBatches();
      };
      void this.runIsolated(batch, end).finally(end);
    }
  }

  /**
   * Runs a batch; if it fails as a whole, runs each of its items alone. Never rejects. Once the
   * batch has committed, `end` lets the next batch start before this one's responses are sent:
   * see `settleAfterNextWrite`.
   */
  private async runIsolated(batch: Pending<I>[], end: () => void = () => {}, rerunAfterKeyClash = true): Promise<void> {
    let settlements: Settlement[];
    try {
      settlements = await this.runBatch(batch);
    } catch (error) {
      // A request alone whose key another process recorded between this transaction's lookup and
      // its own record of the key: nothing committed; run once more, it finds the key and replays
      // (or answers 409 in progress). Until 2026-12-05 it answered 500 (found by an audit: one trade
      // execution sent to two servers at once with one key).
      if (batch.length === 1 && rerunAfterKeyClash && isIdempotencyKeyClash(error)) return this.runIsolated(batch, () => {}, false);
      // Run alone, one bad request cannot fail its neighbours; but a batch whose COMMIT may have
      // landed (a lost connection) is not run again: that could move the money twice.
      if (batch.length === 1 || isCommitOutcomeUnknown(error)) {
        for (const item of batch) item.settle({ kind: 'error', error });
        return;
      }
      for (const item of batch) await this.runIsolated([item]);
      return;
    }
    end();
    // On PGlite, whose work runs on this thread, the next batch would only delay the responses.
    if (this.lane) await settleAfterNextWrite();
    batch.forEach((item, index) => item.settle(settlements[index] ?? { kind: 'error', error: new Error('batch lost an item') }));
  }

  private async runBatch(batch: Pending<I>[]): Promise<Settlement[]> {
    if (debugBatches) {
      debugStats.batches++;
      debugStats.items += batch.length;
    }
    const assume = this.options.assume;
    if (assume && (this.options.assumable?.(this.itemsOf(batch)) ?? true)) {
      // One round trip: the write with its checks and the idempotency records, as one transaction.
      const unchecked = (tx: Tx) => this.finish(tx, batch, batch.map(() => undefined), assume(tx, this.itemsOf(batch)));
      try {
        const settlements = await (this.lane ? this.lane.run(unchecked) : withPipelinedTransaction(this.deps.database.pool, unchecked));
        this.options.observe?.('unchecked', true);
        return settlements;
      } catch (error) {
        // The lane has room again while this batch runs the checked way.
        if (this.lane) this.startBatches();
        // PostgreSQL refused a statement, so nothing committed: the batch runs again the checked
        // way. Any other error (a bug, or a lost connection whose commit may have landed) fails
        // the batch.
        if (!isDatabaseAnswer(error)) throw error;
        this.options.observe?.('unchecked', false);
      }
    }
    // Two round trips: BEGIN, the idempotency lookup and `load`'s locks leave together; then the
    // write and COMMIT (pipelined-transaction.ts).
    return withPipelinedTransaction(this.deps.database.pool, async (tx) => {
      const settlements: (Settlement | undefined)[] = batch.map(() => undefined);
      const keyed = batch.flatMap((item, index) => (item.keyed === undefined ? [] : [{ item, keyed: item.keyed, index }]));

      // Try each key's advisory lock and read what is stored under it. A request that commits the
      // same key between this statement's snapshot and its lock attempt is caught by the primary
      // key when this batch records the key; the batch then fails, and the items rerun alone and
      // replay the stored response.
      const lookup =
        keyed.length === 0
          ? undefined
          : lockAndLookupKeysStatement(
              keyed.map(({ item, keyed: { key } }) => ({ lockId: advisoryLockId(item.context.clientId, key), clientId: item.context.clientId, key })),
            ).execute(tx);
      lookup?.catch(() => {});
      const loaded = await this.options.load(tx, this.itemsOf(batch));
      for (const row of lookup ? (await lookup).rows : []) {
        const entry = keyed[row.position - 1];
        if (!entry) continue;
        const { item, keyed: request, index } = entry;
        if (!row.locked) {
          settlements[index] = {
            kind: 'error',
            error: new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry shortly.'),
          };
        } else if (row.request_hash !== null) {
          if (!row.request_hash.equals(request.hash)) {
            settlements[index] = { kind: 'error', error: keyReusedError() };
          } else {
            const body = storedBody(this.deps, item.context.clientId, request.key, { response_body: row.response_body, response_sealed: row.response_sealed ?? false });
            settlements[index] = { kind: 'response', replay: true, response: { statusCode: row.status_code ?? 200, body } };
          }
        }
      }

      return this.finish(tx, batch, settlements, loaded);
    }).then((settlements) => {
      this.options.observe?.('checked', true);
      return settlements;
    });
  }

  private itemsOf(batch: Pending<I>[]): BatchItem<I>[] {
    return batch.map((item) => ({ context: item.context, input: item.input }));
  }

  /**
   * Processes the items not settled yet (the fresh ones) and builds the batch's write with their
   * idempotency records, for the pipelined transaction to send with COMMIT.
   */
  private async finish(tx: Tx, batch: Pending<I>[], settlements: (Settlement | undefined)[], loaded: L): Promise<PipelinedOutcome<Settlement[]>> {
    const fresh = batch.map((_, index) => index).filter((index) => settlements[index] === undefined);
    const write = new WriteStatement();
    const outcomes = fresh.length === 0 ? [] : await this.options.process(tx, loaded, fresh, write);
    if (outcomes.length !== fresh.length) throw new Error(`process answered ${outcomes.length} outcomes for ${fresh.length} items`);

    const records: { item: Pending<I>; keyed: Keyed; response: StoredResponse }[] = [];
    fresh.forEach((index, position) => {
      const item = batch[index];
      const outcome = outcomes[position];
      if (!item || !outcome) return;
      if (outcome.ok) {
        const response = { statusCode: outcome.result.statusCode ?? 200, body: envelopeOf(outcome.result, item.context) };
        settlements[index] = { kind: 'response', replay: false, response };
        if (item.keyed !== undefined) records.push({ item, keyed: item.keyed, response });
      } else {
        settlements[index] = { kind: 'error', error: outcome.error };
        // A 5xx (a price feed that is down, say) is this item's answer only: it is not stored under
        // its Idempotency-Key, which stays free for a retry (as runWrite does), and the batch's other
        // items keep theirs (it used to fail the whole batch).
        if (item.keyed !== undefined && isStoredUnderKey(outcome.error)) {
          records.push({ item, keyed: item.keyed, response: { statusCode: outcome.error.statusCode, body: errorBody(outcome.error, item.context.traceId) } });
        }
      }
    });
    if (records.length > 0) {
      write.add(
        'idempotency_keys',
        idempotencyRecordsStatement(
          records.map(({ item, keyed: { key, hash, method, path }, response }) => ({
            clientId: item.context.clientId,
            key,
            hash,
            method,
            path,
            response,
            createdAt: item.context.now,
          })),
        ),
      );
    }
    return {
      result: settlements.map((settlement): Settlement => settlement ?? { kind: 'error', error: new Error('batch item left unsettled') }),
      last: write.compile(tx),
    };
  }
}

/**
 * Tries each key's advisory lock and reads what is stored under it, in one statement; one row per
 * key, in the order given (`position` counts from 1).
 */
export function lockAndLookupKeysStatement(keys: readonly { lockId: string; clientId: string; key: string }[]) {
  return prepared(sql<{
    position: number;
    locked: boolean;
    request_hash: Buffer | null;
    status_code: number | null;
    response_body: unknown;
    response_sealed: boolean | null;
  }>`
    SELECT k.position::int AS position, pg_try_advisory_xact_lock(k.lock_id) AS locked, i.request_hash, i.status_code, i.response_body,
      i.response_sealed
    FROM unnest(${keys.map((key) => key.lockId)}::bigint[], ${keys.map((key) => key.clientId)}::uuid[], ${keys.map((key) => key.key)}::text[])
      WITH ORDINALITY AS k (lock_id, client_id, key, position)
    LEFT JOIN idempotency_keys i ON i.client_id = k.client_id AND i.key = k.key
    ORDER BY k.position`);
}

export interface IdempotencyRecord {
  clientId: string;
  key: string;
  hash: Buffer;
  method: string;
  path: string;
  response: StoredResponse;
  createdAt: Date;
}

/** Records idempotency keys with their responses, many in one statement. */
export function idempotencyRecordsStatement(records: readonly IdempotencyRecord[]) {
  const column = <T>(pick: (record: IdempotencyRecord) => T) => records.map(pick);
  return sql`
    INSERT INTO idempotency_keys (client_id, key, request_hash, method, path, status_code, response_body, created_at)
    SELECT client_id, key, decode(request_hash, 'hex'), method, path, status_code, response_body, created_at FROM unnest(
      ${column((record) => record.clientId)}::uuid[],
      ${column((record) => record.key)}::text[],
      ${column((record) => record.hash.toString('hex'))}::text[],
      ${column((record) => record.method)}::text[],
      ${column((record) => record.path)}::text[],
      ${column((record) => record.response.statusCode)}::int[],
      ${jsonArray(column((record) => record.response.body))},
      ${column((record) => record.createdAt)}::timestamptz[]
    ) AS r (client_id, key, request_hash, method, path, status_code, response_body, created_at)`;
}

/** PostgreSQL refused a second record of one Idempotency-Key (its primary key): nothing of the transaction committed. */
function isIdempotencyKeyClash(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'idempotency_keys_pkey';
}

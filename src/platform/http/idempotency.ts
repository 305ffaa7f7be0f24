import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { withTransaction, sqlStateOf, type Tx } from '../db/transaction.js';
import type { TransactionGroups } from '../db/transaction-groups.js';
import { clientFenceSql, withClientTransaction, type ClientFenceMode } from '../db/client-fence.js';
import { fieldCipherOf } from '../crypto/field-cipher.js';
import { authOf, isTraceId, type RequestContext } from './context.js';
import { clientNow, requestClockOffset } from '../client-clock.js';
import { AppError } from './errors.js';
import { errorBody } from './error-handler.js';

/** Visible ASCII only (0x21–0x7E), 1 to 255 characters. */
const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

export interface WriteResult<T> {
  statusCode?: number;
  message: string;
  data: T;
  /**
   * The response shows a secret once (a webhook signing secret, a person's document numbers):
   * its idempotency record, replayed for the retention period, is stored encrypted.
   */
  sealResponse?: boolean;
}

export interface StoredResponse {
  statusCode: number;
  body: unknown;
}

declare module '../db/schema.js' {
  interface Database {
    idempotency_keys: {
      client_id: string;
      key: string;
      request_hash: Buffer;
      method: string;
      path: string;
      status_code: number;
      response_body: import('kysely').ColumnType<unknown, string, string>;
      response_sealed: import('kysely').ColumnType<boolean, boolean | undefined, boolean>;
      created_at: Date;
    };
  }
}

/**
 * The writes that take no Idempotency-Key, so the document does not offer one: the admin routes
 * belong to no client, and idempotency keys are a client's (docs/api-design.md); a vault reveal is
 * authorised by a cardholder's token, not a client's key, and its answer (card numbers in clear)
 * must never be stored to be replayed.
 */
export function withoutIdempotency(path: string): boolean {
  return path.startsWith('/v1/admin/') || path === '/v1/vault/reveal';
}

/**
 * Refuses a malformed Idempotency-Key on a write that takes one, before its body is read or
 * checked, so a client fixing its request meets it first (until 2026-12-07 a body the schema
 * refused was answered first, then the key; found by an audit), on every route that takes one,
 * the old unversioned paths too (`POST /internal-transfer`). A route that does not exist, a public
 * one and the writes that take no key are left alone.
 */
export function refuseMalformedIdempotencyKey(request: FastifyRequest): void {
  const route = request.routeOptions.url;
  if (!writeMethods.has(request.method) || route === undefined || withoutIdempotency(route)) return;
  if (request.routeOptions.config.public === true) return;
  idempotencyKeyOf(request);
}

/** Reads and checks the Idempotency-Key header; undefined when absent. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!idempotencyKeyPattern.test(value)) {
    throw new AppError('INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 visible ASCII characters.', {
      details: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }],
    });
  }
  return value;
}

/**
 * The request's path as the router reads it, the form that is hashed and kept with the key: ids
 * compared as ids (a UUID's letters in either case name the same resource), percent-encoding
 * undone as the router undoes it (`/v1/%69nternal-transfer` is the transfer route; until
 * 2026-12-02 it hashed as another path, found by an audit), and no trailing slash (the router
 * ignores one). Kept in this form, the rules that read the stored path (a restore keeps the keys
 * of the snapshot routes) see `/v1/sandbox/%73napshots` as the snapshots route it is; until
 * 2026-12-04 the path was kept as written, found by an audit.
 */
function requestPath(request: FastifyRequest): string {
  const path = decodedPath(request.url.split('?')[0] ?? '').replace(uuidAnyCase, (id) => id.toLowerCase());
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** What a key's record keeps of its request: the hash a retry is compared by, and the path (its first 2,000 characters). */
export interface RequestIdentity {
  hash: Buffer;
  path: string;
}

/** The request's identity, its path worked out once for both. */
export function requestIdentity(request: FastifyRequest): RequestIdentity {
  const path = requestPath(request);
  // Bodies are compared as their fields, whatever their order: a retry that spells the same
  // request differently replays. No body, null and {} are one request: a write without a body
  // counts as {} (docs/api-design.md).
  const hash = crypto.createHash('sha256').update(`${request.method} ${path}\n${canonicalJson(request.body ?? {})}`).digest();
  return { hash, path: path.slice(0, 2000) };
}

const uuidAnyCase = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** The path with its percent-escapes decoded (reserved characters such as %2F kept), or as written when it does not decode. */
function decodedPath(path: string): string {
  if (!path.includes('%')) return path;
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

/** JSON with each object's keys in sorted order, so two bodies with the same fields read alike. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const fields = value as Record<string, unknown>;
    return `{${Object.keys(fields)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(fields[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

const writeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * For a write refused as malformed before its handler ran (the body or parameters failed
 * validation, the body carries a removed field, any other 400): when its Idempotency-Key is already recorded for a different
 * request, the answer is 422 IDEMPOTENCY_KEY_REUSED, the same as for a valid body, instead of the
 * 400. Otherwise undefined, and the original error stands. The lookup happens only on that error
 * path, so valid requests and requests without the header cost nothing more. The hash compared is
 * the one `runWrite` stores: body validation neither coerces, removes nor fills in anything, so
 * the body seen here is the body a valid request would be hashed with.
 */
export async function reusedIdempotencyKeyError(
  deps: Pick<Deps, 'db'>,
  request: FastifyRequest,
  error: unknown,
): Promise<AppError | undefined> {
  const header = request.headers['idempotency-key'];
  if (header === undefined || !writeMethods.has(request.method)) return undefined;
  // A request refused as malformed (400: schema validation, a removed or unknown field, fields
  // sent to a route without a body, an unknown event type, invalid JSON) before its handler looked
  // the key up. A 400 the handler stored under the key hashes the same, so it stands.
  const refusedBeforeHandler =
    (typeof error === 'object' && error !== null && 'validation' in error && Boolean(error.validation)) ||
    (error instanceof AppError && error.statusCode === 400);
  if (!refusedBeforeHandler) return undefined;
  const clientId = request.auth?.clientId;
  const key = Array.isArray(header) ? header.join(',') : header;
  if (clientId === undefined || !idempotencyKeyPattern.test(key)) return undefined;
  let row: { request_hash: Buffer } | undefined;
  try {
    row = await deps.db
      .selectFrom('idempotency_keys')
      .select('request_hash')
      .where('client_id', '=', clientId)
      .where('key', '=', key)
      .executeTakeFirst();
  } catch {
    return undefined; // the database is unreachable: the validation error is still a true answer
  }
  if (row === undefined || row.request_hash.equals(requestIdentity(request).hash)) return undefined;
  return keyReusedError();
}

/**
 * 422 IDEMPOTENCY_KEY_REUSED, naming the header in `details` as INVALID_IDEMPOTENCY_KEY does (until
 * 2026-12-07 it named nothing; found by an audit).
 */
export function keyReusedError(): AppError {
  return new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request.', {
    details: [{ field: 'Idempotency-Key', message: 'was already used with a different request' }],
  });
}

/** A 64-bit advisory lock id for (client, key), so two requests with one key never run at once. */
export function advisoryLockId(clientId: string, key: string): string {
  return crypto.createHash('sha256').update(`${clientId}\n${key}`).digest().readBigInt64BE(0).toString();
}

/** The request's context; `clockOffsetMs` when the request itself moved its client's clock (the sandbox clock advance). */
export function requestContext(request: FastifyRequest, deps: Deps, clockOffsetMs?: number): RequestContext {
  const auth = authOf(request);
  const offsetMs = clockOffsetMs ?? requestClockOffset(deps, auth.clientId, auth.clockOffsetMs);
  return { clientId: auth.clientId, traceId: String(request.id), now: clientNow(deps.clock, offsetMs) };
}

/**
 * Runs a write in one database transaction and sends its envelope. With an Idempotency-Key the
 * key is recorded in that same transaction together with the response, so the effect and the
 * record commit or vanish together; a replay returns the stored status and body. A 4xx outcome
 * is stored as well (in a second transaction, since the first rolled back); a 5xx never is.
 */
export async function runWrite<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
  work: (tx: Tx, context: RequestContext) => Promise<WriteResult<T>>,
  options: Pick<PausableWrite<T, never>, 'clockOffsetMs' | 'clientFence'> = {},
): Promise<FastifyReply> {
  return runPausableWrite<T, never>(request, reply, deps, { work, ...options });
}

/**
 * Answers a refusal found before the write's transaction (a check that must not run inside one,
 * such as a DNS lookup, or one made while taking a lease) as runWrite answers one found inside
 * it: a 4xx is stored under the Idempotency-Key (or the key's earlier answer replayed), so a
 * retry replays it and the key cannot then be taken for another request. Anything else is
 * thrown as it is.
 */
export async function answerRefusal(request: FastifyRequest, reply: FastifyReply, deps: Deps, error: unknown): Promise<FastifyReply> {
  if (!(error instanceof AppError) || error.statusCode >= 500) throw error;
  return runWrite(request, reply, deps, async () => {
    throw error;
  });
}

/** A write that must wait for something outside any transaction (a call to the client) before it can finish. */
export interface Paused<P> {
  paused: P;
}

export interface PausableWrite<T, P> {
  /** The first transaction: the whole write, or its first half ending in `{ paused }`. */
  work: (tx: Tx, context: RequestContext) => Promise<WriteResult<T> | Paused<P>>;
  /** Between the two transactions, holding no connection: returns what `finish` needs. */
  wait?: (paused: P, context: RequestContext) => Promise<unknown>;
  /** The second transaction: the rest of the write, with what `wait` returned. */
  finish?: (tx: Tx, context: RequestContext, paused: P, waited: unknown) => Promise<WriteResult<T>>;
  /**
   * Where the write's transactions run: shared with the concurrent writes of its group (group
   * commit, transaction-groups.ts) instead of one of their own. Its work must claim what it works
   * on (claimInGroup) before writing.
   */
  group?: TransactionGroups;
  /**
   * Where `finish` runs, when the second transactions must not queue behind the first ones of new
   * writes (a lane of their own, sharing `group`'s GroupsInFlight); absent: in `group`.
   */
  finishGroup?: TransactionGroups;
  /**
   * The client's clock offset the write runs at, when the request itself moved the clock (the
   * sandbox clock advance: its answer and key record are dated after it, however long its timers
   * ran); absent: the request's own offset.
   */
  clockOffsetMs?: number;
  /**
   * How the write's own transactions take its client's fence (client-fence.ts) before anything
   * else: shared (absent), as every writer of the client; exclusive for a sandbox reset or
   * restore, which replaces the client's data. A write in `group` takes none: the card messages
   * lock their card, then the ledger accounts, the order a reset or a restore locks them in
   * (lockWritersOut), and a fence's wait would stall their whole group.
   */
  clientFence?: ClientFenceMode;
}

/** The client's fence a write's transaction takes first, when it runs on its own (not in a group). */
interface Fence {
  clientId: string;
  mode: ClientFenceMode;
}

/**
 * Runs a transaction of a write: in `group` when the write has one there, else on its own, taking
 * `fence` first when given (a keyed write takes it in its key's lookup instead).
 */
function transactionOf<R>(deps: Deps, group: TransactionGroups | undefined, keys: readonly string[], work: (tx: Tx) => Promise<R>, fence?: Fence): Promise<R> {
  if (group) return group.run(keys, work);
  return fence ? withClientTransaction(deps.db, fence.clientId, work, fence.mode) : withTransaction(deps.db, work);
}

/** The fence a write's transactions take, unless they run in a group. */
function fenceOf(write: Pick<PausableWrite<unknown, unknown>, 'group' | 'clientFence'>, context: RequestContext): Fence | undefined {
  return write.group ? undefined : { clientId: context.clientId, mode: write.clientFence ?? 'shared' };
}

/** The status a paused write's idempotency record holds until its answer is known (102 Processing). */
const inProgressStatus = 102;
/** A paused write whose record stayed in progress this long (real time) died between its transactions: a retry runs anew. */
const inProgressAbandonedMs = 60_000;

function isPaused<T, P>(result: WriteResult<T> | Paused<P>): result is Paused<P> {
  return 'paused' in result;
}

/** The second half of a paused write: `wait` outside any transaction, then `finish` and `then` in one transaction. */
async function resumePaused<T, P, R>(
  deps: Deps,
  context: RequestContext,
  write: PausableWrite<T, P>,
  keys: readonly string[],
  paused: P,
  then: (tx: Tx, result: WriteResult<T>) => Promise<R>,
): Promise<R> {
  const { wait, finish } = write;
  if (!wait || !finish) throw new Error('a write paused without wait and finish');
  const waited = await wait(paused, context);
  return transactionOf(deps, write.finishGroup ?? write.group, keys, async (tx) => then(tx, await finish(tx, context, paused, waited)), fenceOf(write, context));
}

/**
 * runWrite for a write in two transactions with a wait between them (a cooperative card
 * authorization: reserve, ask the client, apply its answer). With an Idempotency-Key, the first
 * transaction records the key as in progress (a concurrent retry gets 409
 * IDEMPOTENCY_REQUEST_IN_PROGRESS) and the second replaces that with the response. If the process
 * dies between them, the record stays in progress for a minute and a retry after that runs anew.
 */
export async function runPausableWrite<T, P>(request: FastifyRequest, reply: FastifyReply, deps: Deps, write: PausableWrite<T, P>): Promise<FastifyReply> {
  const context = requestContext(request, deps, write.clockOffsetMs);
  const key = idempotencyKeyOf(request);
  const fence = fenceOf(write, context);
  if (key === undefined) {
    try {
      const first = await transactionOf(deps, write.group, [], (tx) => write.work(tx, context), fence);
      const result = isPaused(first) ? await resumePaused(deps, context, write, [], first.paused, async (_tx, finished) => finished) : first;
      return reply.code(result.statusCode ?? 200).send(envelopeOf(result, context));
    } catch (error) {
      if (isKeptRefusal(error)) throw await withTransaction(deps.db, (tx) => keepRefusal(tx, error));
      throw error;
    }
  }

  const { hash, path } = requestIdentity(request);
  const lockId = advisoryLockId(context.clientId, key);
  const storedRow = (tx: Tx) =>
    tx
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'status_code', 'response_body', 'response_sealed', 'created_at'])
      .where('client_id', '=', context.clientId)
      .where('key', '=', key)
      .executeTakeFirst();
  const stored = async (tx: Tx, withFence?: Fence): Promise<StoredResponse | undefined> => {
    // The client's fence in the same statement as the key's lock: no round trip of its own.
    const fenced = withFence ? sql`, ${clientFenceSql(withFence.clientId, withFence.mode)} AS fenced` : sql``;
    const locked = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${lockId}::bigint) AS locked${fenced}`.execute(tx);
    if (!locked.rows[0]?.locked) {
      // Another request of this key holds the lock: the first one still running, or a replay of
      // an answer already stored, which this request may replay too (an answer never changes once
      // stored). Until 2026-12-07 every replay that met another replay's lock answered 409 (18 of
      // 40 sent four at a time after the answer; found by an audit).
      const done = await storedRow(tx);
      if (done && done.status_code !== inProgressStatus && done.request_hash.equals(hash)) {
        return { statusCode: done.status_code, body: storedBody(deps, context.clientId, key, done) };
      }
      throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry shortly.');
    }
    const row = await storedRow(tx);
    if (!row) return undefined;
    if (!row.request_hash.equals(hash)) {
      throw keyReusedError();
    }
    if (row.status_code === inProgressStatus) {
      if (deps.clock.now().getTime() - row.created_at.getTime() < inProgressAbandonedMs) {
        throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry shortly.');
      }
      await tx.deleteFrom('idempotency_keys').where('client_id', '=', context.clientId).where('key', '=', key).execute();
      return undefined;
    }
    return { statusCode: row.status_code, body: storedBody(deps, context.clientId, key, row) };
  };
  /** Set once the first transaction of a paused write committed its in-progress record. */
  let pausedCommitted = false;
  const record = async (tx: Tx, response: StoredResponse, seal = false) => {
    const text = JSON.stringify(response.body);
    const values = {
      status_code: response.statusCode,
      response_body: seal ? sealedBody(deps, context.clientId, key, text) : text,
      response_sealed: seal,
      created_at: context.now,
    };
    if (pausedCommitted) {
      // The in-progress record of this write's first transaction becomes the answer.
      const replaced = await tx
        .updateTable('idempotency_keys')
        .set(values)
        .where('client_id', '=', context.clientId)
        .where('key', '=', key)
        .where('status_code', '=', inProgressStatus)
        .where('request_hash', '=', hash)
        .executeTakeFirst();
      if (replaced.numUpdatedRows > 0n) return;
    }
    await tx
      .insertInto('idempotency_keys')
      .values({ client_id: context.clientId, key, request_hash: hash, method: request.method, path, ...values })
      .execute();
  };
  const markInProgress = async (tx: Tx) => {
    await tx
      .insertInto('idempotency_keys')
      .values({
        client_id: context.clientId,
        key,
        request_hash: hash,
        method: request.method,
        path,
        status_code: inProgressStatus,
        response_body: 'null',
        response_sealed: false,
        // Real time: whether the request died between its transactions is a matter of the server's clock.
        created_at: deps.clock.now(),
      })
      .execute();
  };

  let outcome: { replay: boolean; response: StoredResponse };
  // Two writes with one key never share a group: each would pass the other's advisory lock.
  const keys = [`${context.clientId}\n${key}`];
  try {
    const first = await transactionOf(deps, write.group, keys, async (tx): Promise<{ replay: boolean; response: StoredResponse } | Paused<P>> => {
      const previous = await stored(tx, fence);
      if (previous) return { replay: true, response: previous };
      const result = await write.work(tx, context);
      if (isPaused(result)) {
        await markInProgress(tx);
        return result;
      }
      const response = { statusCode: result.statusCode ?? 200, body: envelopeOf(result, context) };
      await record(tx, response, result.sealResponse === true);
      return { replay: false, response };
    });
    if ('paused' in first) {
      pausedCommitted = true;
      outcome = await resumePaused(deps, context, write, keys, first.paused, async (tx, result) => {
        const response = { statusCode: result.statusCode ?? 200, body: envelopeOf(result, context) };
        await record(tx, response, result.sealResponse === true);
        return { replay: false, response };
      });
    } else {
      outcome = first;
    }
  } catch (error) {
    if (sqlStateOf(error) === '23505') {
      // Another process recorded this key between our check and our insert: answer with its response.
      outcome = await withTransaction(deps.db, async (tx) => {
        const previous = await stored(tx);
        if (!previous) throw error;
        return { replay: true, response: previous };
      });
    } else if (error instanceof AppError && isStoredUnderKey(error, pausedCommitted)) {
      let answer = error;
      outcome = await withTransaction(deps.db, async (tx) => {
        // A paused write's own in-progress record is replaced, not taken for another request's.
        const previous = pausedCommitted ? undefined : await stored(tx);
        if (previous) return { replay: true, response: previous };
        answer = await keepRefusal(tx, error);
        const response = { statusCode: answer.statusCode, body: errorBody(answer, context.traceId) };
        await record(tx, response);
        return { replay: false, response };
      });
      if (!outcome.replay) throw answer;
    } else if (isKeptRefusal(error)) {
      throw await withTransaction(deps.db, (tx) => keepRefusal(tx, error));
    } else {
      throw error;
    }
  }
  if (outcome.replay) markReplayed(reply, outcome.response);
  return reply.code(outcome.response.statusCode).send(outcome.response.body);
}

/**
 * The trace id of the request that made a stored answer. Every idempotency record is written with
 * its answer's body as built by envelopeOf (a success) or errorBody (a stored 4xx), here, in the
 * write batcher and in answerRefusal, and both put the request's trace id in `traceId`: the body
 * is the record of it (sealed bodies included, once opened by storedBody). A record in progress
 * (102, body null) is never replayed. Undefined for a body without one, which no record holds,
 * or whose id is not of the form genReqId (src/app.ts) accepts, the one checked safe for a header.
 */
export function originalTraceIdOf(response: StoredResponse): string | undefined {
  const body = response.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const traceId = (body as { traceId?: unknown }).traceId;
  return isTraceId(traceId) ? traceId : undefined;
}

/**
 * The headers of a replayed answer (runPausableWrite and the write batcher): `Idempotent-Replayed:
 * true`, and `Original-Trace-Id`, the trace id of the request that did the work (as Stripe's
 * `Original-Request`), while `X-Trace-Id` stays the replay's own (docs/api-design.md, "Trace ids").
 * It used to carry only the replay's own trace id in a header (found by an audit).
 */
export function markReplayed(reply: FastifyReply, response: StoredResponse): void {
  reply.header('Idempotent-Replayed', 'true');
  const original = originalTraceIdOf(response);
  if (original !== undefined) reply.header('Original-Trace-Id', original);
}

/** What a sealed idempotency record is bound to: it opens only under its own client and key. */
const sealedTo = (clientId: string, key: string) => `${clientId}:idempotency:${key}`;

/** The stored form of a sealed record's body (`text` is the body's JSON): a JSON string of ciphertext. */
export function sealedBody(deps: Pick<Deps, 'config' | 'database'>, clientId: string, key: string, text: string): string {
  return JSON.stringify(fieldCipherOf(deps).encrypt(text, sealedTo(clientId, key)));
}

/** The response body an idempotency record replays, decrypted when it was stored sealed. */
export function storedBody(deps: Pick<Deps, 'config' | 'database'>, clientId: string, key: string, row: { response_body: unknown; response_sealed: boolean }): unknown {
  return row.response_sealed ? JSON.parse(fieldCipherOf(deps).decrypt(String(row.response_body), sealedTo(clientId, key))) : row.response_body;
}

/** Whether a response is stored for (client, key): for writes that span several transactions and must not start twice. */
export async function idempotencyRecordExists(db: Tx, clientId: string, key: string): Promise<boolean> {
  const row = await db.selectFrom('idempotency_keys').select('key').where('client_id', '=', clientId).where('key', '=', key).executeTakeFirst();
  return row !== undefined;
}

/**
 * A refusal that keeps a record of itself (a refused chain deposit, kept FAILED for support): its
 * work's transaction rolled back, so runWrite writes the record with `keepRecord` in the
 * transaction that stores the refusal under the Idempotency-Key (or in one of its own, without a
 * key), and the record and the key's answer commit together. `keepRecord` answers another refusal
 * when it finds the record kept first by a request sent at the same moment, and that is then the
 * answer, stored and replayed. Until 2026-12-07 the route kept the record itself after runWrite
 * had stored the first refusal, so a retry with the key could replay a 422 naming a record never
 * kept, while the request had answered 409. Only runWrite and runPausableWrite keep them: the
 * routes of the write batcher (ledger.md, "Batching writes") throw none.
 */
export class KeptRefusal extends AppError {
  keepRecord(_tx: Tx): Promise<AppError | undefined> {
    return Promise.resolve(undefined);
  }
}

function isKeptRefusal(error: unknown): error is KeptRefusal {
  return error instanceof KeptRefusal;
}

/** What a refusal answers once its record is kept (KeptRefusal), in `tx`; any other refusal, itself. */
async function keepRefusal(tx: Tx, error: AppError): Promise<AppError> {
  return (isKeptRefusal(error) ? await error.keepRecord(tx) : undefined) ?? error;
}

/**
 * The refusals never stored under an Idempotency-Key: the key's own errors, and the conflicts
 * that say "retry when the other request has finished" (a stored one would answer every retry
 * for 24 hours, long after the conflict is gone).
 */
export function isNotStoredUnderKey(error: AppError): boolean {
  return ['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS', 'SANDBOX_STATE_BUSY', 'SANDBOX_CLOCK_BUSY'].includes(error.code);
}

/**
 * A 400 refuses the request itself (a transfer to its own source wallet, a blank note, a routing
 * number whose check digit is wrong, an address of another network, an amount past the asset's
 * scale, an unknown event type, a malformed ISO 8583 message…), whether the schema found it or the
 * route's code did, and its transaction wrote nothing: like the schema's refusals it is not stored
 * under the key, so the corrected request can be sent with it (as Stripe saves no result for a
 * request whose parameters fail validation). The other 4xx (404, 409, 422 …) are the key's answer.
 * Until 2026-12-07 the route's own 400s were stored, and the corrected request answered 422
 * IDEMPOTENCY_KEY_REUSED (found by audits). A write in two transactions that refuses in its second
 * keeps the refusal as its answer: its first has committed.
 */
export function isRequestRefusal(error: AppError): boolean {
  return error.statusCode === 400;
}

/**
 * Whether a refusal is the answer its Idempotency-Key replays: a 4xx, except the key's own errors
 * and the retry-later conflicts (isNotStoredUnderKey) and, while nothing has committed, a 400
 * (isRequestRefusal). The one rule of runWrite, runPausableWrite and the write batcher.
 */
export function isStoredUnderKey(error: AppError, somethingCommitted = false): boolean {
  return error.statusCode < 500 && !isNotStoredUnderKey(error) && (somethingCommitted || !isRequestRefusal(error));
}

export function envelopeOf<T>(result: WriteResult<T>, context: RequestContext) {
  return { message: result.message, data: result.data, traceId: context.traceId };
}

/** Deletes idempotency records older than the retention period; run by a worker. */
export async function purgeIdempotencyKeys(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.idempotencyRetentionHours * 3600_000);
  const result = await deps.db.deleteFrom('idempotency_keys').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import { clientNow, requestClockOffset } from '../../platform/client-clock.js';
import { isPoolConnectTimeout, type Db } from '../../platform/db/database.js';
import { sqlStateOf } from '../../platform/db/transaction.js';
import type { Deps } from '../../platform/deps.js';
import type { App } from '../../platform/http/app-type.js';
import { idAt } from '../../platform/ids.js';
import './traces.tables.js';

/**
 * The request log: one row in `api_requests` per authenticated API request, so a trace shows the
 * request that started it (GET /v1/traces/:traceId).
 *
 * Rows are kept in memory and written by one multi-row INSERT every `flushIntervalMs` or as soon
 * as `bufferedRowsMax` are waiting, through the pool and never inside a request's transaction: a
 * request costs no database round trip of its own. Rows still buffered when the process dies are
 * lost, which is accepted: the request log is diagnostic, not a record of money. A write that
 * fails is logged (with the trace ids of its first rows) and its rows dropped, for the same
 * reason; a write that found no free connection waits again first (insertWaitingForConnection). The app's onClose hook writes what
 * is left, and the trace route calls flush() before reading, so a trace read right after the
 * request that made it is complete.
 *
 * Not logged: requests without an accepted API key (401, and the 403 of a refused key), public
 * routes (health, metrics, the OpenAPI document, the docs), admin routes, unknown routes, and
 * GET /v1/traces/:traceId itself (reading a trace does not add to traces).
 */

/** Rows written by one INSERT at most; a flush of more writes several. */
export const bufferedRowsMax = 500;
/** The longest a row waits in memory before it is written. */
export const flushIntervalMs = 100;
/** How many times a write waits for the pool's connection (DB_CONNECT_TIMEOUT_MS each) before its rows are dropped. */
export const connectAttemptsMax = 6;
/** The longest path kept (the column's limit). */
const pathLengthMax = 2048;
/** Error bodies longer than this are not parsed for their code. */
const errorBodyParsedMax = 64 * 1024;
/** The route that reads traces: never logged. */
export const traceRouteUrl = '/v1/traces/:traceId';

export interface ApiRequestRow {
  clientId: string;
  id: string;
  traceId: string;
  method: string;
  path: string;
  operationId: string | null;
  statusCode: number;
  durationMs: number;
  idempotencyKey: string | null;
  errorCode: string | null;
  createdAt: Date;
}

/** The buffer of request rows and its writer. */
export class RequestLog {
  private rows: ApiRequestRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The writes in order: flush() resolves once every row buffered before it is written (or dropped). */
  private written: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
  ) {}

  add(row: ApiRequestRow): void {
    this.rows.push(row);
    if (this.rows.length >= bufferedRowsMax) {
      void this.flush();
      return;
    }
    if (this.timer === undefined) {
      this.timer = setTimeout(() => void this.flush(), flushIntervalMs);
      this.timer.unref();
    }
  }

  /** Writes every buffered row; resolves when they (and every earlier write) are done. Never rejects. */
  flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const rows = this.rows;
    this.rows = [];
    if (rows.length > 0) this.written = this.written.then(() => this.write(rows));
    return this.written;
  }

  private async write(rows: readonly ApiRequestRow[]): Promise<void> {
    for (let start = 0; start < rows.length; start += bufferedRowsMax) {
      const chunk = rows.slice(start, start + bufferedRowsMax);
      try {
        await this.insertWaitingForConnection(chunk);
      } catch (error) {
        // The rows of many clients go together: one row the database refuses (a data or integrity
        // error: SQLSTATE class 22 or 23) must not cost the others theirs, so such a write is tried
        // again row by row. Any other failure (the database unreachable, say) drops the rows.
        const state = sqlStateOf(error) ?? '';
        if (chunk.length === 1 || !(state.startsWith('22') || state.startsWith('23'))) {
          this.log.error({ err: error, rows: chunk.length, traceIds: chunk.slice(0, 20).map((row) => row.traceId) }, 'request log: a write failed; its rows are dropped');
          continue;
        }
        this.log.warn({ err: error, rows: chunk.length }, 'request log: a write failed; writing its rows one by one');
        await this.writeEach(chunk);
      }
    }
  }

  /**
   * One INSERT, waiting for a connection as long as one request may hold it: on the embedded
   * database (one connection) a request that held it past DB_CONNECT_TIMEOUT_MS made the pool give
   * up on the write, and the rows of every request answered meanwhile were dropped (until
   * 2026-12-06; found by an audit). A connection timeout is therefore tried again, up to
   * `connectAttemptsMax` times in all; any other failure is thrown at once.
   */
  private async insertWaitingForConnection(rows: readonly ApiRequestRow[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await insertApiRequestsStatement(rows).execute(this.db);
        return;
      } catch (error) {
        if (attempt >= connectAttemptsMax || !isPoolConnectTimeout(error)) throw error;
      }
    }
  }

  private async writeEach(rows: readonly ApiRequestRow[]): Promise<void> {
    let dropped = 0;
    let lastError: unknown;
    for (const row of rows) {
      try {
        await insertApiRequestsStatement([row]).execute(this.db);
      } catch (error) {
        dropped += 1;
        lastError = error;
      }
    }
    if (dropped > 0) this.log.error({ err: lastError, rows: dropped }, 'request log: rows the database refused are dropped');
  }
}

export function insertApiRequestsStatement(rows: readonly ApiRequestRow[]) {
  const column = <T>(pick: (row: ApiRequestRow) => T) => rows.map(pick);
  return sql`
    INSERT INTO api_requests (client_id, id, trace_id, method, path, operation_id, status_code, duration_ms, idempotency_key, error_code, created_at)
    SELECT * FROM unnest(
      ${column((row) => row.clientId)}::uuid[],
      ${column((row) => row.id)}::uuid[],
      ${column((row) => row.traceId)}::text[],
      ${column((row) => row.method)}::text[],
      ${column((row) => row.path)}::text[],
      ${column((row) => row.operationId)}::text[],
      ${column((row) => row.statusCode)}::int[],
      ${column((row) => row.durationMs.toFixed(3))}::numeric[],
      ${column((row) => row.idempotencyKey)}::text[],
      ${column((row) => row.errorCode)}::text[],
      ${column((row) => row.createdAt)}::timestamptz[]
    )`;
}

/** What the hooks note about a logged request between its start and its response. */
interface Noted {
  clientId: string;
  /** The request's start by its client's clock (the clock its RequestContext reads). */
  startedAt: Date;
  errorCode: string | null;
}

const logs = new WeakMap<object, RequestLog>();

/**
 * Writes the rows the app's request log holds in memory (nothing for an app without one). For
 * readers of api_requests that must see every request answered so far (the trace route), and for
 * the sandbox state routes, so a reset or a snapshot covers the requests made before it.
 */
export async function flushRequestLog(app: App): Promise<void> {
  await logs.get(app)?.flush();
}

function isLoggedRoute(url: string | undefined): boolean {
  if (url === undefined || url === traceRouteUrl) return false;
  return url.startsWith('/v1/') || url === '/internal-transfer';
}

/** The `code` of an error body, or null. */
function errorCodeOf(payload: unknown): string | null {
  const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
  if (text === undefined || text.length > errorBodyParsedMax) return null;
  try {
    const body: unknown = JSON.parse(text);
    if (body === null || typeof body !== 'object') return null;
    const code = (body as { code?: unknown }).code;
    return typeof code === 'string' ? code.slice(0, 100) : null;
  } catch {
    return null;
  }
}

function headerOf(request: FastifyRequest, name: string): string | null {
  const value = request.headers[name];
  if (typeof value !== 'string' || value.length === 0) return null;
  return value.slice(0, 255);
}

/**
 * Adds the request log's hooks to `app` (call it after the authentication hook: it logs the
 * requests that hook accepted) and returns the log. Its onResponse hook only appends to memory.
 */
export function registerRequestLog(app: App, deps: Pick<Deps, 'db' | 'database' | 'clock'>): RequestLog {
  const requestLog = new RequestLog(deps.db, app.log);
  logs.set(app, requestLog);
  const noted = new WeakMap<FastifyRequest, Noted>();

  app.addHook('onRequest', async (request) => {
    const auth = request.auth;
    if (!auth || !isLoggedRoute(request.routeOptions.url)) return;
    const startedAt = clientNow(deps.clock, requestClockOffset(deps, auth.clientId, auth.clockOffsetMs));
    noted.set(request, { clientId: auth.clientId, startedAt, errorCode: null });
  });
  const logAnswered = (request: FastifyRequest, reply: FastifyReply): void => {
    const note = noted.get(request);
    if (!note) return;
    noted.delete(request);
    const schema = request.routeOptions.schema as { operationId?: unknown } | undefined;
    requestLog.add({
      clientId: note.clientId,
      id: idAt(note.startedAt),
      traceId: String(request.id),
      method: request.method,
      path: (request.url.split('?')[0] ?? '/').slice(0, pathLengthMax) || '/',
      operationId: typeof schema?.operationId === 'string' ? schema.operationId : null,
      statusCode: reply.statusCode,
      durationMs: Math.max(0, reply.elapsedTime),
      idempotencyKey: headerOf(request, 'idempotency-key'),
      errorCode: reply.statusCode >= 400 ? note.errorCode : null,
      createdAt: note.startedAt,
    });
  };
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode >= 400) {
      const note = noted.get(request);
      if (note) note.errorCode = errorCodeOf(payload);
    }
    // A client that closed the connection before the answer (it gave up waiting) never sees the
    // response finish, and Fastify runs onResponse only when it does: the request, which did take
    // effect, is logged here instead, with the status it was answered. Until 2026-12-07 it was in
    // neither the request log nor its trace, nor in the server's log (found by an audit).
    if (reply.raw.destroyed || request.raw.socket?.destroyed === true) {
      logAnswered(request, reply);
      request.log.info({ statusCode: reply.statusCode, responseTime: reply.elapsedTime }, 'request answered after the client closed the connection');
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    logAnswered(request, reply);
  });
  app.addHook('onClose', async () => {
    await requestLog.flush();
  });
  return requestLog;
}

/** Deleted by one statement at most, so the purge never holds many locks for long. */
const purgeBatchMax = 5000;

/**
 * Deletes request log rows older than the event retention (EVENT_RETENTION_DAYS), oldest first,
 * in batches. Rows carry their client's clock, so a sandbox client whose clock was moved forward
 * keeps its rows that much longer. Returns the number of rows deleted.
 */
export async function purgeOldApiRequests(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.config.eventRetentionDays * 86_400_000);
  let deleted = 0;
  for (;;) {
    const result = await sql`
      DELETE FROM api_requests a
      USING (SELECT client_id, id FROM api_requests WHERE created_at < ${cutoff} ORDER BY created_at LIMIT ${purgeBatchMax}::int) old
      WHERE a.client_id = old.client_id AND a.id = old.id`.execute(deps.db);
    const count = Number(result.numAffectedRows ?? 0);
    deleted += count;
    if (count < purgeBatchMax) return deleted;
  }
}

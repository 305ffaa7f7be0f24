import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isPoolConnectTimeout } from '../db/database.js';
import { isRetryableDatabaseError } from '../db/transaction.js';
import { AppError } from './errors.js';
import type { ErrorDetail } from './errors.js';
import { detailsFromAjvErrors } from './validation.js';

export function errorBody(error: AppError, traceId: string) {
  return {
    message: error.message,
    code: error.code,
    ...(error.details && error.details.length > 0 ? { details: error.details } : {}),
    traceId,
  };
}

const fastifyCodes: Record<string, (error: FastifyError) => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large (1 MiB at most for JSON).'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new AppError('INVALID_JSON', 'The body is empty but Content-Type is application/json.'),
  FST_ERR_CTP_INVALID_JSON_BODY: (error) => new AppError('INVALID_JSON', `The body is not valid JSON: ${error.message}`),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new AppError('BAD_REQUEST', 'The Content-Length header does not match the body.'),
};

/**
 * The route's `oneOfRequired` groups the body has none of, as details: the schema cannot say "one
 * of these" without a union that would blur its other messages, so the route checks it after the
 * schema, and a body the schema refuses is told here too. Until 2026-12-07 `{}` sent to an
 * internal transfer named three missing fields and not the destination (found by an audit).
 */
function missingOneOf(request: FastifyRequest, body: unknown): ErrorDetail[] {
  const groups = request.routeOptions.config.oneOfRequired;
  if (!groups || typeof body !== 'object' || body === null || Array.isArray(body)) return [];
  return groups
    // null is as good as absent: the schemas take null for the optional fields these name.
    .filter((group) => group.every((field) => (body as Record<string, unknown>)[field] == null))
    .map(([first, ...others]) => ({ field: first, message: others.length === 0 ? 'is required' : `is required (or ${others.join(' or ')})` }));
}

/**
 * A body of a type the route does not take: the document uploads take multipart/form-data, every
 * other route JSON (until 2026-12-07 the uploads too told such a body to be JSON; found by an audit).
 */
function unsupportedMediaType(error: FastifyError, request: FastifyRequest): AppError {
  const consumes = request.routeOptions.schema?.consumes;
  const wanted = consumes?.includes('multipart/form-data') ? "send this route's body as multipart/form-data" : 'send JSON bodies as application/json';
  return new AppError('UNSUPPORTED_MEDIA_TYPE', `Unsupported Content-Type: ${wanted}. (${error.message})`, {
    details: [{ field: 'Content-Type', message: wanted }],
  });
}

function toAppError(error: FastifyError & { validationContext?: string }, request: FastifyRequest): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error.validation) {
    const context = error.validationContext ?? 'body';
    const details = detailsFromAjvErrors(error.validation, context);
    if (context === 'body') for (const detail of missingOneOf(request, request.body)) if (!details.some((known) => known.field === detail.field)) details.push(detail);
    const summary = details.map((detail) => `${detail.field} ${detail.message}`).join('; ');
    const where = context === 'querystring' ? 'query parameters' : context === 'params' ? 'path parameters' : 'request body';
    return new AppError('VALIDATION_ERROR', `Invalid ${where}: ${summary}`, { details });
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return unsupportedMediaType(error, request);
  const mapped = error.code ? fastifyCodes[error.code] : undefined;
  if (mapped) return mapped(error);
  if (error instanceof SyntaxError) return new AppError('INVALID_JSON', `The body is not valid JSON: ${error.message}`);
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    if (error.statusCode === 413) return fastifyCodes.FST_ERR_CTP_BODY_TOO_LARGE?.(error);
    if (error.statusCode === 415) return unsupportedMediaType(error, request);
    return new AppError('BAD_REQUEST', error.message);
  }
  return undefined;
}

/**
 * The socket errors of a connection that failed or was cut. The only connections a request's
 * handler waits on outside its own code are the database's (a cooperative authorization's call to
 * the client handles its own failures), so one of these reaching the error handler is the
 * database's: until 2026-12-07 a connection reset (a failover, a proxy restarting) answered 500
 * (found by an audit).
 */
const connectionFailures = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** PostgreSQL's own: the server shutting down (admin, crash) or starting, and the connection exceptions (class 08). */
const unavailableSqlStates = new Set(['57P01', '57P02', '57P03', '08000', '08003', '08006']);

function isDatabaseUnavailable(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  const code = (error as { code?: unknown } | null)?.code;
  return (
    // "… is not queryable": node-postgres refusing a statement on a connection that failed, such as
    // the COMMIT of a transaction whose connection was reset after its last statement (a reset
    // during a statement is thrown as itself: withTransaction keeps it over the failed ROLLBACK).
    // Until 2026-12-07 it answered 500 (found by a re-audit).
    (typeof message === 'string' && /Connection terminated|ECONNREFUSED|is not queryable/.test(message)) ||
    (typeof code === 'string' && (connectionFailures.has(code) || unavailableSqlStates.has(code)))
  );
}

/** A 503 the client retries after a second: the database busy, unreachable, or conflicting on every attempt. */
function retryShortly(code: 'SERVICE_UNAVAILABLE' | 'WRITE_CONFLICT', message: string): AppError {
  return new AppError(code, message, { headers: { 'retry-after': '1' } });
}

/** Expected outcomes become their 4xx; anything else is a bug: a 500, logged with its stack. */
export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const traceId = String(request.id);
  let appError = toAppError(error, request);
  if (!appError) {
    if (isPoolConnectTimeout(error)) {
      // No connection came free in time: every one busy (on the embedded database, the one
      // connection held by a long request such as seeding 100 customers), or none could be made.
      // Until 2026-12-08 answered and logged at error level as a database that cannot be reached
      // (found by an audit): a busy database is not an outage.
      request.log.warn('no database connection came free within DB_CONNECT_TIMEOUT_MS');
      appError = retryShortly('SERVICE_UNAVAILABLE', 'No database connection came free in time (the database is busy, or cannot be reached); retry shortly.');
    } else if (isDatabaseUnavailable(error)) {
      request.log.error({ err: error }, 'database unavailable');
      appError = retryShortly('SERVICE_UNAVAILABLE', 'The service cannot reach its database right now; retry shortly.');
    } else if (isRetryableDatabaseError(error)) {
      // A transaction that still conflicted on its last attempt (withTransaction runs one up to 8
      // times): contention, not a bug, and rolled back. Until 2026-12-07 a 500.
      request.log.warn({ err: error }, 'write conflicted on every attempt');
      appError = retryShortly('WRITE_CONFLICT', 'This request conflicted with other writes to the same records on every attempt and was rolled back; retry it (with the same Idempotency-Key).');
    } else {
      request.log.error({ err: error }, 'unexpected error');
      appError = new AppError('INTERNAL_ERROR', `Internal error. Please report it with the trace id ${traceId}.`);
    }
  }
  if (appError.headers) reply.headers(appError.headers);
  return reply.code(appError.statusCode).send(errorBody(appError, traceId));
}

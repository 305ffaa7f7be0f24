import type { components } from './generated/openapi.js';

/** The error body of every failed call: `{ message, code, details?, traceId }` (docs/api-design.md). */
export type ErrorBody = components['schemas']['Error'];
/** Every stable error code the API answers with (docs/errors.md), from the OpenAPI document. */
export type ErrorCode = ErrorBody['code'];
/** One offending field of a 400: `kyc.mainAddress.zip`, `items[2].amount`, `Idempotency-Key`. */
export type ErrorDetail = NonNullable<ErrorBody['details']>[number];

/**
 * Thrown by every call of the client that did not succeed. `code` is the API's stable code;
 * `status` the HTTP status; `details` names offending fields; `traceId` finds the request in the
 * server's logs; `idempotencyKey` is the key a write was sent with. An answer that is not the
 * API's error body (a proxy's 502 page, say) gets the code `HTTP_ERROR`.
 */
export class OpenBaaSError extends Error {
  override readonly name = 'OpenBaaSError';
  readonly status: number;
  readonly code: ErrorCode | 'HTTP_ERROR';
  readonly details: ErrorDetail[];
  readonly traceId: string | undefined;
  /** Seconds the server asked to wait (Retry-After of a 429 or 503 that was not retried), if any. */
  readonly retryAfterSeconds: number | undefined;
  /** The parsed body as the server sent it. */
  readonly body: unknown;
  /**
   * The `Idempotency-Key` the write was sent with (the caller's or the one the client made), on
   * every error of a write; undefined for a read. After a 503, a 5xx, a 409
   * IDEMPOTENCY_REQUEST_IN_PROGRESS or a 429 that outlasted the retries, the write may have been
   * done, or may still be running: send it again with this key (`params.header['Idempotency-Key']`)
   * and the server replays its answer rather than doing it twice. Until 2026-12-07 the key was
   * kept only on `OpenBaaSConnectionError`, so calling again after such an answer made a new key
   * and could do a payment twice (found by an audit).
   */
  readonly idempotencyKey: string | undefined;

  constructor(status: number, body: unknown, retryAfterSeconds?: number, idempotencyKey?: string) {
    const errorBody = isErrorBody(body) ? body : undefined;
    super(errorBody?.message ?? `HTTP ${status}${typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : ''}`);
    this.status = status;
    this.code = errorBody?.code ?? 'HTTP_ERROR';
    this.details = errorBody?.details ?? [];
    this.traceId = errorBody?.traceId;
    this.retryAfterSeconds = retryAfterSeconds;
    this.body = body;
    this.idempotencyKey = idempotencyKey;
  }

  /** True when this error carries `code` (narrows nothing, reads well: `if (error.is('NOT_FOUND'))`). */
  is(code: ErrorCode | 'HTTP_ERROR'): boolean {
    return this.code === code;
  }
}

/** True when `error` is an OpenBaaSError, and, when `code` is given, carries that code. */
export function isOpenBaaSError(error: unknown, code?: ErrorCode | 'HTTP_ERROR'): error is OpenBaaSError {
  return error instanceof OpenBaaSError && (code === undefined || error.code === code);
}

function isErrorBody(body: unknown): body is ErrorBody {
  return typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string' && typeof (body as { message?: unknown }).message === 'string';
}

/**
 * The one registry of error codes. Every code a client can receive is here with its HTTP status
 * and a description; docs/errors.md is checked against this list by a test.
 *
 * Modules add their codes to this object (keep the groups sorted by status).
 */
export const errorCodes = {
  // 400
  VALIDATION_ERROR: { status: 400, description: 'The request breaks an input rule; `details` names each offending field.' },
  INVALID_JSON: { status: 400, description: 'The body is not well-formed JSON, is nested too deeply, or holds a NUL character or a lone surrogate.' },
  FIELD_REMOVED: { status: 400, description: 'The body uses a field the API no longer accepts; the message names its replacement.' },
  INVALID_AMOUNT: { status: 400, description: 'An amount is not a positive decimal string within the asset\'s scale and maximum.' },
  UNKNOWN_ASSET: { status: 400, description: 'The asset is not in the asset registry (or not available in this mode).' },
  BAD_REQUEST: { status: 400, description: 'The request itself is malformed (for example a badly encoded URL).' },
  INVALID_IDEMPOTENCY_KEY: { status: 400, description: 'The Idempotency-Key header is empty, too long or holds characters other than visible ASCII.' },
  // 401, 403
  UNAUTHENTICATED: { status: 401, description: 'The Authorization header is missing, malformed, or names no known key.' },
  FORBIDDEN: { status: 403, description: 'The key is valid but may not do this: revoked, read-only on a write, or the caller\'s address is outside its allow-list.' },
  // 404
  NOT_FOUND: { status: 404, description: 'No such resource for this client (another client\'s resource answers the same).' },
  ROUTE_NOT_FOUND: { status: 404, description: 'No such route.' },
  // 409
  CONFLICT: { status: 409, description: 'The request conflicts with the current state of a resource.' },
  IDEMPOTENCY_REQUEST_IN_PROGRESS: { status: 409, description: 'A request with this Idempotency-Key is still being processed; retry later.' },
  // 410
  ENDPOINT_REMOVED: { status: 410, description: 'The endpoint was removed; the message names its replacement.' },
  // 413, 415
  PAYLOAD_TOO_LARGE: { status: 413, description: 'The body exceeds the size limit (1 MiB for JSON, 10 MiB for uploads).' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'The Content-Type is not accepted by this route (JSON bodies need application/json).' },
  // 422
  IDEMPOTENCY_KEY_REUSED: { status: 422, description: 'The Idempotency-Key was already used with a different request.' },
  INSUFFICIENT_FUNDS: { status: 422, description: 'The wallet\'s AVAILABLE balance in the asset is smaller than the amount; nothing was moved.' },
  // 429
  RATE_LIMITED: { status: 429, description: 'Too many requests for this key; wait for the number of seconds in Retry-After.' },
  // 500, 503
  INTERNAL_ERROR: { status: 500, description: 'A bug on our side. It is logged with the trace id; please report it.' },
  SERVICE_UNAVAILABLE: { status: 503, description: 'The service is starting, shutting down or cannot reach its database.' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof errorCodes;

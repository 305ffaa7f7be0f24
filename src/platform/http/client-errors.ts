import crypto from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { errorBody } from './error-handler.js';
import { AppError } from './errors.js';

/**
 * What Node's HTTP parser refuses before there is a request to route (an unknown method, a
 * malformed header line, both Content-Length and Transfer-Encoding, headers over 16 KiB, a
 * request that stops coming) is answered in the API's error envelope with a trace id, as every
 * other error, and the connection closed. Until 2026-12-04 these got Fastify's own
 * `{"error","message","statusCode"}` body (found by an audit). Each is logged at `info` with its
 * trace id, status, code and the parser's reason, as a routed request's completion is (until
 * 2026-12-07 nothing was logged, so an operator could not find the trace id a client quoted).
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex, log?: Pick<FastifyBaseLogger, 'info'>): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // Node leaves the socket to this handler: one that can no longer be written to is closed here.
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const refused =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('REQUEST_HEADERS_TOO_LARGE', 'The request\'s headers are larger than the server reads (16 KiB in all).')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('REQUEST_TIMEOUT', 'The request did not arrive whole in time.')
        : new AppError('BAD_REQUEST', 'The request is not valid HTTP/1.1: its request line or a header could not be read.');
  const traceId = crypto.randomUUID();
  const body = JSON.stringify(errorBody(refused, traceId));
  const head = [
    `HTTP/1.1 ${refused.statusCode} ${STATUS_CODES[refused.statusCode] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Trace-Id: ${traceId}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  log?.info({ traceId, statusCode: refused.statusCode, code: refused.code, reason: error.code ?? error.message }, 'request refused by the HTTP parser');
}

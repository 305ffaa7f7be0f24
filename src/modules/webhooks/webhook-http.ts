import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Mode } from '../../platform/config.js';
import { guardedLookup, guardedLookupFor, guardedLookupWith, parseWebhookUrl, type ResolveAll } from './webhook-url.js';

/**
 * The outgoing HTTP client of webhooks: keep-alive connections, one overall timeout per request
 * (connect, send, response and body), no redirects followed (node:http never follows them, and a
 * 3xx is simply not a 2xx), a cap on the response body read, and in production the address rules
 * of webhook-url.ts enforced on the connection itself. Later synchronous senders (cooperative
 * card authorization) reuse it with their own timeout.
 */

export interface PostOptions {
  timeoutMs: number;
  /** Reads at most this many bytes of the response body; the rest is discarded (the connection is closed). */
  responseBodyMaxBytes?: number;
  /**
   * For a caller that gives up at the timeout but wants to know whether the answer came later (a
   * cooperative decision request): the outcome is a timeout at `timeoutMs` as usual, the request
   * stays open `graceMs` longer, and `onResponse` hears of an answer that arrives meanwhile.
   */
  lateResponse?: { graceMs: number; onResponse: (late: { httpStatus: number; latencyMs: number }) => void };
}

export interface PostOutcome {
  /** The receiver answered 2xx within the timeout. */
  ok: boolean;
  httpStatus: number | null;
  latencyMs: number;
  /** The start of the response body (UTF-8, at most responseBodyMaxBytes), or null when there was none. */
  responseBody: string | null;
  /** Set when the body was longer than responseBodyMaxBytes: responseBody is its first that many bytes. */
  responseBodyTruncatedAtBytes?: number;
  /** Why the request failed without a response (timeout, refused connection, ...), or null. */
  error: string | null;
  /** A 429 or 503 answer's Retry-After, in milliseconds from the answer; absent otherwise. */
  retryAfterMs?: number;
}

export const userAgent = 'OpenBaaS-Webhooks/1';
const responseBodyMaxBytesDefault = 16 * 1024;

/** Retry-After as delay seconds or an HTTP date, in milliseconds from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}


class RequestTimeoutError extends Error {
  override name = 'RequestTimeoutError';
}

function describeError(error: unknown, timeoutMs: number): string {
  if (error instanceof RequestTimeoutError) return `timed out after ${timeoutMs} ms`;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'EADDRNOTALLOWED') return `address not allowed: ${message}`;
  if (code === 'ENOTFOUND') return `host not found: ${message}`;
  if (code === 'ECONNRESET') return 'connection reset by the receiver';
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

export class WebhookHttpClient {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  /** The address check of the mode, given to the agents and to a connection opened outside them. */
  private readonly guard: { lookup?: typeof guardedLookup };

  /** `resolve` replaces the system resolver of the production address check (tests use it to play DNS). */
  constructor(
    private readonly mode: Mode,
    options: { resolve?: ResolveAll } = {},
  ) {
    // Sockets are reused across deliveries (keep-alive); the number in use is bounded by the
    // callers (per-subscription concurrency), not by the agent.
    // Every mode checks the address the connection uses (the sandbox refuses fewer ranges).
    const lookup = options.resolve ? guardedLookupWith(options.resolve, mode) : guardedLookupFor(mode);
    const guard = { lookup };
    this.guard = guard;
    const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 256, scheduling: 'lifo' as const };
    this.httpAgent = new http.Agent({ ...agentOptions, ...guard });
    this.httpsAgent = new https.Agent({ ...agentOptions, ...guard });
  }

  /**
   * POSTs a JSON body. Never throws: every failure becomes an outcome with `error`. A kept-alive
   * connection the receiver closed just as it was reused (ECONNRESET before any answer: the receiver
   * never read the request) is tried once more on a new connection, within the same timeout, as
   * Node's documentation advises; until 2026-12-05 it was a failed attempt, retried 5 s later (a soak
   * test by an audit saw 9 in 44,187 deliveries to a plain Node receiver).
   */
  async post(rawUrl: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostOutcome> {
    const started = performance.now();
    const first = await this.attempt(rawUrl, headers, body, options);
    if (!('staleConnection' in first)) return first;
    const left = Math.max(1, Math.round(options.timeoutMs - (performance.now() - started)));
    const second = await this.attempt(rawUrl, headers, body, { ...options, timeoutMs: left, freshConnection: true });
    if ('staleConnection' in second) return second.outcome;
    return { ...second, latencyMs: Math.max(0, Math.round(performance.now() - started)) };
  }

  private async attempt(
    rawUrl: string,
    headers: Record<string, string>,
    body: string,
    options: PostOptions & { freshConnection?: boolean },
  ): Promise<PostOutcome | { staleConnection: true; outcome: PostOutcome }> {
    const started = performance.now();
    const elapsed = () => Math.max(0, Math.round(performance.now() - started));
    const parsed = parseWebhookUrl(rawUrl, this.mode);
    if ('problem' in parsed) return { ok: false, httpStatus: null, latencyMs: 0, responseBody: null, error: `url ${parsed.problem}` };
    // parseWebhookUrl also refuses non-public IP literals in production: those never go
    // through the lookup below.
    const url = parsed.url;
    const bodyMaxBytes = options.responseBodyMaxBytes ?? responseBodyMaxBytesDefault;
    const payload = Buffer.from(body, 'utf8');
    const transport = url.protocol === 'https:' ? https : http;

    return new Promise<PostOutcome | { staleConnection: true; outcome: PostOutcome }>((resolve) => {
      let settled = false;
      let answered = false;
      const finish = (outcome: PostOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const request = transport.request(
        url,
        {
          method: 'POST',
          // The second attempt after a stale connection opens a new one (no agent: not pooled), with
          // the same address check as the agents'.
          ...(options.freshConnection ? { agent: false, ...this.guard } : { agent: url.protocol === 'https:' ? this.httpsAgent : this.httpAgent }),
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': String(payload.length),
            'user-agent': userAgent,
          },
        },
        (response) => {
          answered = true;
          const status = response.statusCode ?? 0;
          if (settled) {
            // An answer after the timeout (lateResponse only): reported, its body drained so the socket is reused.
            clearTimeout(graceTimer);
            options.lateResponse?.onResponse({ httpStatus: status, latencyMs: elapsed() });
            response.resume();
            return;
          }
          const chunks: Buffer[] = [];
          let received = 0;
          let truncated = false;
          const retryAfterHeader = response.headers['retry-after'];
          const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(retryAfterHeader, Date.now()) : undefined;
          const complete = () => {
            const text = chunks.length === 0 ? null : Buffer.concat(chunks).toString('utf8');
            finish({
              ok: status >= 200 && status < 300,
              httpStatus: status,
              latencyMs: elapsed(),
              responseBody: text,
              error: null,
              ...(truncated ? { responseBodyTruncatedAtBytes: bodyMaxBytes } : {}),
              ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
            });
          };
          response.on('data', (chunk: Buffer) => {
            if (truncated) return;
            const room = bodyMaxBytes - received;
            if (chunk.length > room) {
              chunks.push(chunk.subarray(0, room));
              received = bodyMaxBytes;
              truncated = true;
              // Enough read: do not wait for (or keep the socket of) a body this large.
              complete();
              response.destroy();
              return;
            }
            chunks.push(chunk);
            received += chunk.length;
          });
          response.on('end', complete);
          response.on('error', (error) => finish({ ok: false, httpStatus: status, latencyMs: elapsed(), responseBody: null, error: describeError(error, options.timeoutMs) }));
          response.on('aborted', () => finish({ ok: false, httpStatus: status, latencyMs: elapsed(), responseBody: null, error: 'the receiver closed the connection mid-response' }));
        },
      );
      let graceTimer: NodeJS.Timeout | undefined;
      const timer = setTimeout(() => {
        const late = options.lateResponse;
        if (!late) {
          request.destroy(new RequestTimeoutError());
          return;
        }
        finish({ ok: false, httpStatus: null, latencyMs: elapsed(), responseBody: null, error: describeError(new RequestTimeoutError(), options.timeoutMs) });
        graceTimer = setTimeout(() => request.destroy(new RequestTimeoutError()), late.graceMs);
      }, options.timeoutMs);
      request.on('error', (error) => {
        const outcome: PostOutcome = { ok: false, httpStatus: null, latencyMs: elapsed(), responseBody: null, error: describeError(error, options.timeoutMs) };
        if (!settled && !answered && request.reusedSocket && (error as { code?: unknown }).code === 'ECONNRESET') {
          settled = true;
          clearTimeout(timer);
          resolve({ staleConnection: true, outcome });
          return;
        }
        finish(outcome);
      });
      request.end(payload);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

const clients = new Map<Mode, WebhookHttpClient>();

/** One client (and its connection pool) per process and mode. */
export function webhookHttpClient(mode: Mode): WebhookHttpClient {
  let client = clients.get(mode);
  if (!client) {
    client = new WebhookHttpClient(mode);
    clients.set(mode, client);
  }
  return client;
}

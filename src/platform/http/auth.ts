import type { FastifyReply, FastifyRequest } from 'fastify';
import crypto from 'node:crypto';
import { AppError } from './errors.js';
import type { Authentication } from './context.js';

/** sk_test_ or sk_live_ plus the first 8 random characters: enough to find the key, too little to use it. */
export const apiKeyPrefixLength = 16;

export type KeyLookupResult =
  | { outcome: 'ok'; auth: Authentication; allowedCidrs: string[] }
  | { outcome: 'unknown' }
  | { outcome: 'revoked' }
  /** A well-formed key of the other mode: sk_test_ on a production server, sk_live_ on a sandbox one. */
  | { outcome: 'otherMode'; serverMode: 'sandbox' | 'production' };

export interface AuthOptions {
  resolveKey(key: string): Promise<KeyLookupResult>;
  ipAllowed(ip: string, cidrs: readonly string[]): boolean;
  adminKey: string | undefined;
  /** When set, the metrics route (config `metrics`) answers only this token (Bearer); unset, it is public. */
  metricsToken: string | undefined;
  /** Failed authentications (401) an address may make per minute before it is answered 429 (the API keys' own rate). */
  failuresPerMinute: number;
}

/**
 * Failed authentications per client address, in fixed one-minute windows, in this process. The
 * request rate limit counts requests by API key, so it never sees a caller without a valid key:
 * without this, API keys and the admin key could be guessed at any speed. An address over the
 * limit is answered 429 RATE_LIMITED with Retry-After, before its key is looked at, until its
 * window ends. Bounded: past 10,000 addresses, the 1,000 first noted are dropped.
 */
class FailedAuthentications {
  private readonly windows = new Map<string, { startedAtMs: number; failures: number }>();

  constructor(private readonly perMinute: number) {}

  private nowMs(): number {
    return performance.now();
  }

  /** Seconds until the address may try again, or 0 when it may now. */
  retryAfterSeconds(address: string): number {
    const window = this.windows.get(address);
    if (!window) return 0;
    const elapsedMs = this.nowMs() - window.startedAtMs;
    if (elapsedMs >= 60_000) {
      this.windows.delete(address);
      return 0;
    }
    return window.failures >= this.perMinute ? Math.ceil((60_000 - elapsedMs) / 1000) : 0;
  }

  note(address: string): void {
    const now = this.nowMs();
    const window = this.windows.get(address);
    if (window && now - window.startedAtMs < 60_000) {
      window.failures += 1;
      return;
    }
    if (this.windows.size >= 10_000) {
      for (const key of [...this.windows.keys()].slice(0, 1_000)) this.windows.delete(key);
    }
    this.windows.set(address, { startedAtMs: now, failures: 1 });
  }
}

const writeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** `Authorization: <key>` or `Authorization: Bearer <key>`, any surrounding spaces or tabs. */
const authorizationPattern = /^[ \t]*(?:bearer[ \t]+)?(\S+)[ \t]*$/i;

export function extractKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = authorizationPattern.exec(header);
  // "Bearer" alone is the scheme without its key, not a key (until 2026-12-05 it was looked up as one).
  if (match?.[1] === undefined || /^bearer$/i.test(match[1])) return undefined;
  return match[1];
}

/** Compares a key given with the expected one in constant time (the admin key, the metrics token). */
function keyMatches(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

/** How many Authorization headers the request line's headers hold (rawHeaders: name, value, name, value, …). */
export function authorizationHeadersOf(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index]?.length === 13 && rawHeaders[index]?.toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

/** onRequest hook: runs before the body is read, so an unauthenticated caller cannot make us parse 1 MiB. */
export function authHook(options: AuthOptions) {
  const failures = new FailedAuthentications(options.failuresPerMinute);
  const refuse = (request: FastifyRequest, message: string): AppError => {
    failures.note(request.ip);
    return new AppError('UNAUTHENTICATED', message);
  };
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.auth = undefined;
    const config = request.routeOptions.config;
    const metricsToken = config.metrics ? options.metricsToken : undefined;
    if ((config.public && metricsToken === undefined) || request.is404) return;
    if (config.admin && !options.adminKey) throw new AppError('ROUTE_NOT_FOUND', `Route ${request.method} ${request.url} not found`);
    const retryAfter = failures.retryAfterSeconds(request.ip);
    if (retryAfter > 0) {
      reply.header('Retry-After', String(retryAfter));
      throw new AppError('RATE_LIMITED', `Too many failed authentications from your address: ${options.failuresPerMinute} per minute; retry in ${retryAfter} seconds.`);
    }
    // Node keeps the first of two Authorization headers; a proxy may read the other, so a request
    // with two is nobody's (until 2026-12-04 the first was used; found by an audit).
    if (authorizationHeadersOf(request.raw.rawHeaders) > 1) {
      throw refuse(request, 'The request carries more than one Authorization header: send exactly one.');
    }
    const key = extractKey(request.headers.authorization);
    if (metricsToken !== undefined) {
      if (!key || !keyMatches(key, metricsToken)) throw refuse(request, 'The metrics need Authorization: Bearer <OPENBAAS_METRICS_TOKEN>.');
      return;
    }
    if (config.admin) {
      if (!key || !keyMatches(key, options.adminKey ?? '')) throw refuse(request, 'The admin routes need Authorization: <OPENBAAS_ADMIN_KEY>.');
      return;
    }
    if (!key) {
      // A header that is there but not a key (Basic credentials, two words) is not "missing".
      const said = request.headers.authorization === undefined || request.headers.authorization.trim() === '' ? 'Missing API key' : 'The Authorization header holds no API key (only "<key>" or "Bearer <key>" is read, no other scheme)';
      throw refuse(request, `${said}: send it as "Authorization: <key>" or "Authorization: Bearer <key>".`);
    }
    const lookup = await options.resolveKey(key);
    if (lookup.outcome === 'unknown') throw refuse(request, 'The API key is not valid.');
    if (lookup.outcome === 'revoked') throw new AppError('FORBIDDEN', 'The API key has been revoked.');
    if (lookup.outcome === 'otherMode') {
      const [given, wanted, keyMode] = lookup.serverMode === 'production' ? ['sk_test_', 'sk_live_', 'sandbox'] : ['sk_live_', 'sk_test_', 'production'];
      throw refuse(request, `This server runs in ${lookup.serverMode} mode and takes ${wanted} keys; a ${given} key is for a ${keyMode} server.`);
    }
    if (!options.ipAllowed(request.ip, lookup.allowedCidrs)) {
      throw new AppError('FORBIDDEN', 'Requests with this API key are not allowed from your IP address.');
    }
    if (lookup.auth.readOnly && writeMethods.has(request.method)) {
      throw new AppError('FORBIDDEN', 'This API key is read-only and cannot make changes.');
    }
    request.auth = lookup.auth;
  };
}

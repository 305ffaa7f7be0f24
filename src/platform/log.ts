import { apiKeyPrefixLength } from './http/auth.js';

/**
 * Log redaction: API keys, secrets, card numbers and SSNs never reach the logs. Fastify logs
 * only method, URL and status of requests by default; these paths cover anything that logs a
 * header or an object carrying such a field.
 */
export const logRedactPaths = [
  'req.headers.authorization',
  'req.headers["idempotency-key"]',
  'headers.authorization',
  '*.authorization',
  '*.apiKey',
  '*.key',
  '*.secret',
  '*.secretHash',
  '*.password',
  '*.documentSsn',
  '*.ssn',
  '*.cardNumber',
  '*.pan',
  '*.cvv',
  '*.kyc.documentSsn',
];

/**
 * Paths whose next segment is itself a credential: the sandbox's hosted KYC page is reached by a
 * link whose token is the page's only authentication (its SHA-256 alone is stored), so the token
 * must not be written to the logs either.
 */
const credentialPathPrefixes: readonly string[] = ['/hosted/kyc/'];

/**
 * Pages whose query string is not logged at all: the vault's hosted frame takes its token in the
 * fragment, which never reaches the server, and reads no query; an integrator who puts the token in
 * `?token=` instead (the page then says it has no token) must not leave a working token in the log
 * (found by an audit, 2026-12-02).
 */
const queryHiddenPaths: readonly string[] = ['/vault/frame'];

/** DELETE /v1/admin/keys/:keyPrefix. */
const adminKeysPath = '/v1/admin/keys/';

/**
 * The URL as logged: a credential segment (credentialPathPrefixes) becomes [REDACTED], and so does
 * the query string of a queryHiddenPaths page. The rules read the path as the router does, percent-
 * decoded: `/vault/fram%65?token=…` is the frame too (until 2026-12-05 its query was logged; found
 * by an audit). A URL a rule applies to is logged with its path decoded.
 */
export function loggedUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const rawPath = queryAt >= 0 ? url.slice(0, queryAt) : url;
  const query = queryAt >= 0 ? url.slice(queryAt) : '';
  let path = rawPath;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    // Not valid percent-encoding: the router refuses it (400), and it is logged as sent.
  }
  for (const prefix of credentialPathPrefixes) {
    if (path.startsWith(prefix)) return `${prefix}[REDACTED]${path.slice(prefix.length).replace(/^[^/]*/, '')}${query}`;
  }
  // A key revoked by the whole key rather than its prefix: the prefix alone is logged.
  if (path.startsWith(adminKeysPath)) {
    const segment = /^[^/]*/.exec(path.slice(adminKeysPath.length))?.[0] ?? '';
    if (segment.length > apiKeyPrefixLength) return `${adminKeysPath}${segment.slice(0, apiKeyPrefixLength)}[REDACTED]${path.slice(adminKeysPath.length + segment.length)}${query}`;
  }
  if (query !== '' && queryHiddenPaths.includes(path.replace(/\/+$/, ''))) return `${path}?[REDACTED]`;
  return url;
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number } | null;
}

/** Fastify's request serializer, with the URL through loggedUrl. */
export const logSerializers = {
  req(request: LoggedRequest) {
    return { method: request.method, url: loggedUrl(request.url), host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort };
  },
};

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
 * Paths whose next segment is, or may be, a credential; `kept` is how many of its characters are
 * logged. The sandbox's hosted KYC page is reached by a link whose token is the page's only
 * authentication (its SHA-256 alone is stored). An API key is revoked by its prefix, and a whole key
 * pasted instead is logged by its prefix alone.
 */
const credentialSegments: ReadonlyArray<{ prefix: string; kept: number }> = [
  { prefix: '/hosted/kyc/', kept: 0 },
  { prefix: '/v1/admin/keys/', kept: apiKeyPrefixLength },
];

/**
 * Pages whose query string is not logged at all: the vault's hosted frame takes its token in the
 * fragment, which never reaches the server, and reads no query; an integrator who puts the token in
 * `?token=` instead (the page then says it has no token) must not leave a working token in the log
 * (found by an audit, 2026-12-02).
 */
const queryHiddenPaths: readonly string[] = ['/vault/frame'];

/**
 * Query parameters whose value is, or may be, a credential, by name (no OpenBaaS route reads a
 * credential from the query: a key or token put there by mistake, `?token=…`, `?api_key=…`, is
 * refused, and must not stay in the log in a usable form), or by value: an API key, a JWT (a vault
 * token). Until 2026-12-05 such a query was logged as sent (found by an audit: a vault token logged
 * from `/v1/vault/show?token=…` still revealed the card).
 */
const credentialParameter = /(?:token|key|secret|passw(?:or)?d|pwd|auth|authorization|jwt|signature|credentials?)$/i;
const credentialValue = /sk_(?:test|live)_|eyJ[\w-]*\.eyJ/;
/** A cheap first look, so that most queries are not split (the serializer runs on every request). */
const mayHoldCredential = /token|key|secret|pass|pwd|auth|jwt|signature|credential|sk_|eyJ/i;

function decodedOr(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The query string (with its '?') with every credential's value as [REDACTED]. */
function loggedQuery(query: string): string {
  if (query === '' || !mayHoldCredential.test(query)) return query;
  const pairs = query.slice(1).split('&').map((pair) => {
    const at = pair.indexOf('=');
    const name = at >= 0 ? pair.slice(0, at) : pair;
    if (at < 0) return credentialValue.test(decodedOr(name)) ? '[REDACTED]' : pair;
    return credentialParameter.test(decodedOr(name)) || credentialValue.test(decodedOr(pair.slice(at + 1))) ? `${name}=[REDACTED]` : pair;
  });
  return `?${pairs.join('&')}`;
}

/**
 * The URL as logged: a credential segment (credentialSegments) becomes [REDACTED] past the
 * characters it keeps, and so does the query string of a queryHiddenPaths page, and the value of
 * a credential in any query (loggedQuery). The rules read the
 * path as the router does, percent-decoded: `/vault/fram%65?token=…` is the frame too (until
 * 2026-12-05 its query was logged; found by an audit). A URL a rule applies to is logged with its
 * path decoded.
 */
export function loggedUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const rawPath = queryAt >= 0 ? url.slice(0, queryAt) : url;
  const query = queryAt >= 0 ? loggedQuery(url.slice(queryAt)) : '';
  let path = rawPath;
  if (rawPath.includes('%')) {
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      // Not valid percent-encoding: the router refuses it (400), and it is logged as sent.
    }
  }
  for (const { prefix, kept } of credentialSegments) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    const segment = /^[^/]*/.exec(rest)?.[0] ?? '';
    if (segment.length > kept) return `${prefix}${segment.slice(0, kept)}[REDACTED]${rest.slice(segment.length)}${query}`;
  }
  if (query !== '' && queryHiddenPaths.includes(path.replace(/\/+$/, ''))) return `${path}?[REDACTED]`;
  return queryAt >= 0 && query !== url.slice(queryAt) ? `${rawPath}${query}` : url;
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

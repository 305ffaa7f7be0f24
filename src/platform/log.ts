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

/** The URL as logged: a credential segment (credentialPathPrefixes) becomes [REDACTED]. */
export function loggedUrl(url: string): string {
  for (const prefix of credentialPathPrefixes) {
    if (url.startsWith(prefix)) return `${prefix}[REDACTED]${url.slice(prefix.length).replace(/^[^/?#]*/, '')}`;
  }
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

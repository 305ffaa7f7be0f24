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

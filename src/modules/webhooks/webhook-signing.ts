import crypto from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the signature is "v1," followed by
 * the base64 HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}`, keyed by the bytes of the
 * secret (the base64 text after "whsec_"). Several signatures are separated by spaces; a receiver
 * accepts the message when any of them verifies, which is how a rotated secret overlaps the old.
 *
 * Signing uses node:crypto directly; the tests verify every delivery with the reference
 * implementation (the standardwebhooks npm package), so the two are checked against each other.
 */

export const secretPrefix = 'whsec_';
/** 32 random bytes: the Standard Webhooks range is 24 to 64. */
const secretBytes = 32;

export function generateSecret(): string {
  return `${secretPrefix}${crypto.randomBytes(secretBytes).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(secretPrefix)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(secretPrefix.length), 'base64');
}

export function signature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const digest = crypto.createHmac('sha256', keyOf(secret)).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${digest}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three Standard Webhooks headers, signed with each of `secrets` (newest first). */
export function signedHeaders(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): SignedHeaders {
  if (secrets.length === 0) throw new Error('at least one secret is needed to sign');
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => signature(secret, messageId, timestampSeconds, body)).join(' '),
  };
}

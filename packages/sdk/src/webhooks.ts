import type { components } from './generated/openapi.js';

/** The body of every webhook delivery: a union of one type per event type, told apart by `type`. */
export type WebhookEvent = components['schemas']['WebhookEvent'];
/** Every event type a delivery can carry. */
export type WebhookEventType = WebhookEvent['type'];
/** The event of one type: `WebhookEventOf<'CUSTOMER_CREATED'>['data']['customerId']`. */
export type WebhookEventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;

/** Headers as a fetch `Headers`, or a plain object (Node.js `request.headers`, Express, Fastify). */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far the webhook-timestamp may be from now, either way, in seconds (300 by default). */
  toleranceSeconds?: number;
  /** The current time (Date.now() by default). */
  now?: Date | number;
}

export type WebhookVerificationReason = 'MISSING_HEADERS' | 'INVALID_SECRET' | 'TIMESTAMP_OUT_OF_TOLERANCE' | 'INVALID_SIGNATURE' | 'INVALID_PAYLOAD';

/** Thrown by verifyWebhook: the delivery must be refused (answer 400). */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

const secretPrefix = 'whsec_';
const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() !== name) continue;
    return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(new ArrayBuffer(binary.length));
    for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
    return bytes;
  } catch {
    return undefined;
  }
}

function payloadBytes(payload: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof payload === 'string') return encoder.encode(payload);
  return payload instanceof Uint8Array ? payload : new Uint8Array(payload);
}

/**
 * Checks a webhook delivery's Standard Webhooks signature and returns its event, typed by its
 * `type`. `payload` is the request body exactly as received (the raw text or bytes, not parsed and
 * re-serialised JSON); `secret` the subscription's `whsec_…` secret. The signature must be one of
 * the `v1,<base64>` entries of webhook-signature (there are two while a rotated secret overlaps),
 * the HMAC-SHA256 of `webhook-id.webhook-timestamp.payload`, and webhook-timestamp within five
 * minutes of now. Throws {@link WebhookVerificationError} otherwise. Uses WebCrypto only.
 */
export async function verifyWebhook(payload: string | Uint8Array | ArrayBuffer, headers: WebhookHeaders, secret: string, options: VerifyWebhookOptions = {}): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('MISSING_HEADERS', 'webhook-id, webhook-timestamp and webhook-signature are required');

  const keyBytes = secret.startsWith(secretPrefix) ? base64Bytes(secret.slice(secretPrefix.length)) : undefined;
  if (!keyBytes || keyBytes.length === 0) throw new WebhookVerificationError('INVALID_SECRET', 'the secret is not a whsec_ secret');

  const nowMs = options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime();
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const seconds = /^\d{1,15}$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  if (!(Math.abs(nowMs / 1000 - seconds) <= toleranceSeconds)) {
    throw new WebhookVerificationError('TIMESTAMP_OUT_OF_TOLERANCE', `webhook-timestamp is not within ${toleranceSeconds} s of now`);
  }

  const body = payloadBytes(payload);
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const message = new Uint8Array(new ArrayBuffer(prefix.length + body.length));
  message.set(prefix);
  message.set(body, prefix.length);
  const key = await globalThis.crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  let verified = false;
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',');
    const signature = version === 'v1' && value ? base64Bytes(value) : undefined;
    // crypto.subtle.verify compares in constant time.
    if (signature && (await globalThis.crypto.subtle.verify('HMAC', key, signature, message))) {
      verified = true;
      break;
    }
  }
  if (!verified) throw new WebhookVerificationError('INVALID_SIGNATURE', 'no v1 signature of webhook-signature matches');

  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'the payload is not JSON');
  }
  if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'the payload is not an event');
  }
  return event as WebhookEvent;
}

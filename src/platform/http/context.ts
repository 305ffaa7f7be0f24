import type { FastifyRequest } from 'fastify';
import { AppError } from './errors.js';

export interface Authentication {
  clientId: string;
  keyId: string;
  keyPrefix: string;
  readOnly: boolean;
  /** The client's clock offset when the key was looked up (src/platform/client-clock.ts). */
  clockOffsetMs: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: Authentication | undefined;
  }
  interface FastifyContextConfig {
    /** Route needs no API key (health, metrics, docs, hosted pages). */
    public?: boolean;
    /** Route is authenticated by OPENBAAS_ADMIN_KEY instead of a client key. */
    admin?: boolean;
    /** The metrics route: public, unless OPENBAAS_METRICS_TOKEN is set (then that token only). */
    metrics?: boolean;
    /** Body fields that were removed from the API, each with the text naming its replacement. */
    removedFields?: Record<string, string>;
    /**
     * Groups of body fields of which one is required, the first being the one to name (the schema
     * marks them all optional): a body the schema refuses names the group's first field too when
     * it has none of them, so one answer lists every missing field.
     */
    oneOfRequired?: readonly (readonly [string, ...string[]])[];
  }
}

/**
 * A trace id we accept from the caller (the X-Trace-Id header, GET /v1/traces/:traceId): 1 to
 * traceIdMaxLength characters, printable, no spaces, and not only dots (`.` and `..` are path
 * segments that curl and browsers tidy away, so GET /v1/traces/.. could never read that trace
 * back). The pattern leaves the length to the schema's own keywords, so a long id gets one reason.
 */
export const traceIdCharacters = /^(?!\.+$)[A-Za-z0-9._:-]+$/;
export const traceIdMaxLength = 128;

export function isTraceId(value: unknown): value is string {
  return typeof value === 'string' && value.length <= traceIdMaxLength && traceIdCharacters.test(value);
}

/** What a service needs to know about the request it serves. */
export interface RequestContext {
  clientId: string;
  traceId: string;
  /** The moment of the request by the client's clock (the injected clock plus the client's sandbox offset), read once. */
  now: Date;
}

/**
 * `context` dated no earlier than 1 ms after `lastChange`, the last change of the record it is
 * about to change. The request's moment is read when it arrives, before it waits for the record's
 * row lock; one that waited while another process changed the record would otherwise date its
 * own change (and the ids, postings and events made from its moment) before that one.
 */
export function datedAfter(context: RequestContext, lastChange: Date): RequestContext {
  const next = lastChange.getTime() + 1;
  return context.now.getTime() >= next ? context : { ...context, now: new Date(next) };
}

export function authOf(request: FastifyRequest): Authentication {
  if (!request.auth) throw new AppError('UNAUTHENTICATED', 'An API key is required.');
  return request.auth;
}

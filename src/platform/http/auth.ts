import type { FastifyReply, FastifyRequest } from 'fastify';
import crypto from 'node:crypto';
import { AppError } from './errors.js';
import type { Authentication } from './context.js';

export type KeyLookupResult =
  | { outcome: 'ok'; auth: Authentication; allowedCidrs: string[] }
  | { outcome: 'unknown' }
  | { outcome: 'revoked' };

export interface AuthOptions {
  resolveKey(key: string): Promise<KeyLookupResult>;
  ipAllowed(ip: string, cidrs: readonly string[]): boolean;
  adminKey: string | undefined;
}

const writeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** `Authorization: <key>` or `Authorization: Bearer <key>`, any surrounding spaces or tabs. */
const authorizationPattern = /^[ \t]*(?:bearer[ \t]+)?(\S+)[ \t]*$/i;

export function extractKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = authorizationPattern.exec(header);
  return match?.[1];
}

function adminKeyMatches(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

/** onRequest hook: runs before the body is read, so an unauthenticated caller cannot make us parse 1 MiB. */
export function authHook(options: AuthOptions) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    request.auth = undefined;
    const config = request.routeOptions.config;
    if (config.public || request.is404) return;
    const key = extractKey(request.headers.authorization);
    if (config.admin) {
      if (!options.adminKey) throw new AppError('ROUTE_NOT_FOUND', `Route ${request.method} ${request.url} not found`);
      if (!key || !adminKeyMatches(key, options.adminKey)) {
        throw new AppError('UNAUTHENTICATED', 'The admin routes need Authorization: <OPENBAAS_ADMIN_KEY>.');
      }
      return;
    }
    if (!key) {
      throw new AppError('UNAUTHENTICATED', 'Missing API key: send it as "Authorization: <key>" or "Authorization: Bearer <key>".');
    }
    const lookup = await options.resolveKey(key);
    if (lookup.outcome === 'unknown') throw new AppError('UNAUTHENTICATED', 'The API key is not valid.');
    if (lookup.outcome === 'revoked') throw new AppError('FORBIDDEN', 'The API key has been revoked.');
    if (!options.ipAllowed(request.ip, lookup.allowedCidrs)) {
      throw new AppError('FORBIDDEN', 'Requests with this API key are not allowed from your IP address.');
    }
    if (lookup.auth.readOnly && writeMethods.has(request.method)) {
      throw new AppError('FORBIDDEN', 'This API key is read-only and cannot make changes.');
    }
    request.auth = lookup.auth;
  };
}

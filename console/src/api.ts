import { OpenBaaS } from '../../packages/sdk/src/client.js';
import { isOpenBaaSError } from '../../packages/sdk/src/errors.js';
import type { components } from '../../packages/sdk/src/generated/openapi.js';
import { totalText, type Counted } from './count-text.js';

export type { OpenBaaS };
/** A shared schema of the OpenAPI document, as the SDK types it. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

const storageKey = 'openbaas.console.apiKey';

/** The key is kept in session storage: it lives as long as the tab and is never sent anywhere but this server. */
export function storedKey(): string | null {
  return sessionStorage.getItem(storageKey);
}

export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(storageKey);
  else sessionStorage.setItem(storageKey, key);
}

/** A client of the server that served the console, with the signed-in key; retries are left to the person. */
export function clientFor(apiKey: string): OpenBaaS {
  return new OpenBaaS({ apiKey, baseUrl: window.location.origin, maxRetries: 0 });
}

/** What went wrong, in one line a person can act on: the API's message, its code and the fields it names. */
export function describeError(error: unknown): string {
  if (isOpenBaaSError(error)) {
    const fields = error.details.map((detail) => detail.field).filter(Boolean);
    return `${error.message} (${error.code}${fields.length > 0 ? `; field ${fields.join(', ')}` : ''})`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The failed request's trace id, when the API answered one (every error body carries it). */
export function errorTraceIdOf(error: unknown): string | undefined {
  return isOpenBaaSError(error) ? error.traceId : undefined;
}

/** For a 429 (the key's rate limit): the seconds to wait, its Retry-After (30 without one); otherwise undefined. */
export function rateLimitWaitSeconds(error: unknown): number | undefined {
  return isOpenBaaSError(error) && error.status === 429 ? (error.retryAfterSeconds ?? 30) : undefined;
}

export function isNotFound(error: unknown): boolean {
  return isOpenBaaSError(error) && error.status === 404;
}

/** One page of a newest-first list, as the API answers it. */
export interface ListPage<T> {
  data: T[];
  pagination: Counted & { hasMoreResults: boolean; nextStartAfterId: string | null };
}

/**
 * Rows a list page shows at first, and adds per "Load more" (until 2026-12-04 the customers and
 * wallets pages stopped at 50; found by an audit).
 */
export const listPageSize = 50;

/** The most one page holds (docs/api-design.md: `limit` 1 to 200). */
const pageLimitMax = 200;

/**
 * The first `count` items of a list, fetched in pages of at most 200 by the list's keyset cursor
 * (`startAfterId`), with the list's total in words (totalText) and whether more remain: what a
 * "Load more" shows.
 */
export async function firstItems<T>(count: number, page: (limit: number, startAfterId: string | undefined) => Promise<ListPage<T>>): Promise<{ items: T[]; total: string; hasMore: boolean }> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const answer = await page(Math.min(pageLimitMax, count - items.length), cursor);
    items.push(...answer.data);
    const more = answer.pagination.hasMoreResults && answer.pagination.nextStartAfterId !== null;
    if (!more || items.length >= count) return { items, total: totalText(answer.pagination), hasMore: more };
    cursor = answer.pagination.nextStartAfterId ?? undefined;
  }
}

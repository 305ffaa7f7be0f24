import { sql } from 'kysely';
import type { Clock } from './clock.js';
import type { Db } from './db/database.js';
import type { Tx } from './db/transaction.js';
import type { Deps } from './deps.js';

/**
 * A client's clock: the injected clock plus the client's offset (`clients.clock_offset_ms`). In
 * sandbox mode `POST /v1/sandbox/clock/advance` grows the offset; in production nothing moves it
 * and it stays 0, so the client's clock is the wall clock.
 *
 * Requests learn the offset with their API key (cached per process for AUTH_CACHE_TTL_MS); a
 * change made by this process is recorded here at once, so this process never answers with the
 * older value. Other processes see it within AUTH_CACHE_TTL_MS. Background work (timers, the
 * hosted pages) reads the offset from the database with `readClockOffset`.
 */
export function clientNow(clock: Clock, offsetMs: number): Date {
  return new Date(clock.now().getTime() + offsetMs);
}

interface NotedOffset {
  offsetMs: number;
  expiresAtMs: number;
}

const notedOffsets = new WeakMap<object, Map<string, NotedOffset>>();

function offsetsOf(deps: Pick<Deps, 'database'>): Map<string, NotedOffset> {
  let offsets = notedOffsets.get(deps.database);
  if (!offsets) {
    offsets = new Map();
    notedOffsets.set(deps.database, offsets);
  }
  return offsets;
}

/** Records an offset this process has just written (after its transaction committed). */
export function noteClockOffset(deps: Pick<Deps, 'database' | 'config'>, clientId: string, offsetMs: number): void {
  const offsets = offsetsOf(deps);
  if (offsets.size >= 10_000) offsets.clear();
  // Kept at least as long as an API-key lookup may be cached, so the request path never falls back to an older value.
  offsets.set(clientId, { offsetMs, expiresAtMs: performance.now() + Math.max(deps.config.authCacheTtlMs, 1) });
}

/** The offset of a request's client: the one this process wrote last if recent, else the one read with the API key. */
export function requestClockOffset(deps: Pick<Deps, 'database'>, clientId: string, fromKeyLookup: number): number {
  const noted = notedOffsets.get(deps.database)?.get(clientId);
  if (noted && noted.expiresAtMs > performance.now()) return noted.offsetMs;
  return fromKeyLookup;
}

/** Reads a client's clock offset from the database (0 for an unknown client). */
export async function readClockOffset(db: Db | Tx, clientId: string): Promise<number> {
  const result = await sql<{ offset: string }>`SELECT clock_offset_ms::text AS offset FROM clients WHERE id = ${clientId}`.execute(db);
  return Number(result.rows[0]?.offset ?? 0);
}

/** The client's current time, read from the database: for work outside a request. */
export async function readClientNow(deps: Pick<Deps, 'clock'>, db: Db | Tx, clientId: string): Promise<Date> {
  return clientNow(deps.clock, await readClockOffset(db, clientId));
}

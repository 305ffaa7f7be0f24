import { sql } from 'kysely';
import type { Clock } from './clock.js';
import type { Db } from './db/database.js';
import type { Tx } from './db/transaction.js';
import type { Deps } from './deps.js';
import { withinTime } from './time-limit.js';

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

/**
 * How long a write of a client waits for an advance of that client's clock running in this process
 * (and a second advance for the first) before it is refused with 409 SANDBOX_CLOCK_BUSY.
 */
export const advanceWaitMs = 30_000;

const runningAdvances = new WeakMap<object, Map<string, Set<Promise<void>>>>();

function advancesOf(deps: Pick<Deps, 'database'>): Map<string, Set<Promise<void>>> {
  let advances = runningAdvances.get(deps.database);
  if (!advances) {
    advances = new Map();
    runningAdvances.set(deps.database, advances);
  }
  return advances;
}

/**
 * Marks an advance of the client's clock as running in this process, until the returned function
 * is called. An advance moves the clock first and then runs the timers that came due, one
 * transaction each; a write of the same client answered in between would act at the new time on a
 * state where earlier timers had not run yet (a credit line repaid during a 30-day advance owed
 * none of the interest of those days; found by an audit). The client's writes therefore wait for
 * the advance (`waitForClientAdvance`, a hook of the app in sandbox mode). Marks may nest: the
 * advance route keeps its own until it has released the clock's lease, around the service's.
 */
export function advanceStarted(deps: Pick<Deps, 'database'>, clientId: string): () => void {
  const advances = advancesOf(deps);
  let finish: () => void = () => undefined;
  const running = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const marks = advances.get(clientId) ?? new Set<Promise<void>>();
  marks.add(running);
  advances.set(clientId, marks);
  return () => {
    marks.delete(running);
    if (marks.size === 0 && advances.get(clientId) === marks) advances.delete(clientId);
    finish();
  };
}

/** Whether an advance of the client's clock runs in this process (the writes' check, without a promise). */
export function clientAdvanceRunning(deps: Pick<Deps, 'database'>, clientId: string): boolean {
  return (runningAdvances.get(deps.database)?.get(clientId)?.size ?? 0) > 0;
}

/**
 * Waits while an advance of the client's clock runs in this process: 'none' when none was running,
 * 'ended' once the advances it met have ended, 'timed out' if one still runs after `maxWaitMs`.
 */
export async function waitForClientAdvance(deps: Pick<Deps, 'database'>, clientId: string, maxWaitMs: number): Promise<'none' | 'ended' | 'timed out'> {
  const deadline = performance.now() + maxWaitMs;
  let waited = false;
  for (;;) {
    const marks = runningAdvances.get(deps.database)?.get(clientId);
    if (!marks || marks.size === 0) return waited ? 'ended' : 'none';
    waited = true;
    const remainingMs = deadline - performance.now();
    if (remainingMs <= 0) return 'timed out';
    const outcome = await withinTime(Promise.all(marks).then(() => 'ended' as const), remainingMs, 'timed out' as const);
    if (outcome === 'timed out') return 'timed out';
  }
}

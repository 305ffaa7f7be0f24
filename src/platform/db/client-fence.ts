import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';
import { withTransaction, type Tx } from './transaction.js';

/**
 * The client fence: an advisory lock per client that a sandbox reset or restore takes exclusively
 * before it touches anything of the client, and that the client's other writers take shared as
 * the first thing their transaction does. The writers do not wait for each other (shared locks do
 * not conflict); a reset or a restore waits for the writers already running to commit, and the
 * writers that come after it wait for it (PostgreSQL queues a shared request behind an exclusive
 * one that waits), so the two never hold some of each other's rows and wait for the rest: they
 * cannot deadlock, whatever order each writer locks the client's rows in.
 *
 * Until 2026-12-08 a restore locked the rows its writers lock first (cards, ledger accounts,
 * webhook deliveries: lockWritersOut) and deadlocked with the writers that lock something else
 * first (a timer its row, a card issuance its customer, a crypto confirmation its
 * chain's row): after its eight attempts it answered 409 SANDBOX_STATE_BUSY (found by an audit
 * under mixed load; it had answered 500 until 2026-12-07).
 *
 * The two-integer form of PostgreSQL's advisory locks, whose keys never meet the one-bigint form
 * used for Idempotency-Keys: the first integer names the fence, the second is the client's id
 * hashed (two clients whose ids hash alike only wait for each other's restores).
 */
const fenceSpace = 0x0fe9ce;

/** Whether a transaction writes as one of the client's writers or replaces the client's data (a reset or a restore). */
export type ClientFenceMode = 'shared' | 'exclusive';

/** An SQL expression that takes the fence of `clientId` for the transaction, waiting for it. */
export function clientFenceSql(clientId: string, mode: ClientFenceMode): RawBuilder<unknown> {
  // Through uuid, so every writer hashes the one spelling PostgreSQL gives the id (lower case).
  const id = sql`${clientId}::uuid::text`;
  return mode === 'shared'
    ? sql`pg_advisory_xact_lock_shared(${sql.lit(fenceSpace)}, hashtext(${id}))`
    : sql`pg_advisory_xact_lock(${sql.lit(fenceSpace)}, hashtext(${id}))`;
}

/**
 * An SQL condition that takes the shared fence of the client in `clientIdColumn` if nobody
 * replaces that client's data, without waiting: false while a reset or a restore of the client
 * runs or waits to run (PostgreSQL refuses a shared request behind a waiting exclusive one).
 */
export function tryClientFenceSql(clientIdColumn: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`pg_try_advisory_xact_lock_shared(${sql.lit(fenceSpace)}, hashtext(${clientIdColumn}::uuid::text))`;
}

/** Takes the fence of `clientId` for the transaction, waiting for a reset or a restore of the client (shared) or for its writers (exclusive). */
export async function takeClientFence(tx: Tx, clientId: string, mode: ClientFenceMode = 'shared'): Promise<void> {
  await sql`SELECT ${clientFenceSql(clientId, mode)}`.execute(tx);
}

/** withTransaction for one of the client's writers (shared) or for a reset or restore (exclusive): takes the client's fence first. */
export function withClientTransaction<T>(db: Db, clientId: string, work: (tx: Tx) => Promise<T>, mode: ClientFenceMode = 'shared'): Promise<T> {
  return withTransaction(db, async (tx) => {
    await takeClientFence(tx, clientId, mode);
    return work(tx);
  });
}

/**
 * Takes the shared fence of several clients at once, for a transaction that writes for all of
 * them (the webhook worker's outcomes), in one order every such transaction follows (by the lock's
 * key), so two of them never wait for each other behind a reset or a restore.
 */
export async function takeClientFences(tx: Tx, clientIds: readonly string[]): Promise<void> {
  const distinct = [...new Set(clientIds)];
  if (distinct.length === 0) return;
  await sql`
    SELECT count(pg_advisory_xact_lock_shared(${sql.lit(fenceSpace)}, k.key))
    FROM (SELECT DISTINCT hashtext(c::text) AS key FROM unnest(${distinct}::uuid[]) AS c ORDER BY 1) AS k`.execute(tx);
}

import type { Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { Db } from './database.js';

export type Tx = Transaction<Database>;

/** PostgreSQL errors that mean "run the whole transaction again": serialization failure, deadlock. */
const retryableSqlStates = new Set(['40001', '40P01']);
export const transactionAttemptsMax = 8;

/**
 * Unique constraints that two transactions writing the same row at once can trip, where the one
 * run again finds the other's row and takes the path made for it. The ledger's, although the
 * statement says ON CONFLICT: PostgreSQL resolves a conflict on the arbiter index only, and a
 * second unique index of the table raises instead when the other transaction's row reached it
 * first. The ledger's accounts are upserted on their key (client_id, id) and also carry
 * UNIQUE (client_id, id, asset) for the holds' foreign key and one account per wallet and asset,
 * or per system kind, asset and shard (migration 0003). Run again, the transaction finds the row
 * committed and takes the ON CONFLICT path.
 */
const racedUniqueConstraints = new Set([
  'ledger_accounts_client_id_id_asset_key',
  'ledger_accounts_wallet_key',
  'ledger_accounts_system_key',
  // Two sandbox deposits of one chain transaction at once (migration 0027): both find no earlier
  // one, and the unique index refuses the second's insert. Run again, it finds the first and
  // answers 409 as a later repeat does (until 2026-12-07 it answered 500; found by an audit).
  'crypto_transfers_tx_hash',
]);

export function isRetryableDatabaseError(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  if (typeof code !== 'string') return false;
  return retryableSqlStates.has(code) || (code === '23505' && typeof constraint === 'string' && racedUniqueConstraints.has(constraint));
}

export function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Whether the error is PostgreSQL's answer to a statement (an error response, with its severity
 * and SQLSTATE), as opposed to a failure of the connection or of our own code. After such an
 * answer the transaction cannot commit; after a lost connection nobody knows whether it did.
 */
export function isDatabaseAnswer(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/**
 * Runs `work` in one database transaction and runs it again, a bounded number of times, when
 * PostgreSQL reports a serialization failure or a deadlock. `work` must therefore have no effect
 * outside the transaction. Never use the pool from inside `work`: on PGlite that deadlocks.
 */
export function withTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  return retryingTransaction(() => transactionOnce(db, work));
}

/**
 * One attempt, throwing what made `work` fail. Kysely rolls back when `work` throws and, when the
 * ROLLBACK fails too, throws the ROLLBACK's error in place of the first: on a connection that was
 * reset that is node-postgres's "… is not queryable", which hid the reset from the log and from
 * the checks made on the error (until 2026-12-07).
 */
async function transactionOnce<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  let failure: { error: unknown } | undefined;
  try {
    return await db.transaction().execute(async (tx) => {
      try {
        return await work(tx);
      } catch (error) {
        failure = { error };
        throw error;
      }
    });
  } catch (error) {
    throw failure !== undefined ? failure.error : error;
  }
}

/** Runs one attempt of a transaction again, after a short random pause, while it fails retryably. */
export async function retryingTransaction<T>(attempt: () => Promise<T>): Promise<T> {
  for (let attemptNumber = 1; ; attemptNumber++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isRetryableDatabaseError(error) || attemptNumber >= transactionAttemptsMax) throw error;
      const backoffMs = Math.min(200, 2 ** attemptNumber) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, backoffMs));
    }
  }
}

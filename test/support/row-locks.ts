import type pg from 'pg';

/**
 * Another transaction, on a connection of its own, that locks rows as a concurrent writer would:
 * the lock-order tests (PostgreSQL; the embedded database has one connection) hold a row with it,
 * start the code under test, then check with `tryLock` that the code holds no row it should only
 * take after the held one.
 */
export interface OtherTransaction {
  /** Locks the row of `table` with this client id and id (FOR NO KEY UPDATE unless told), waiting for it. */
  lock(table: string, clientId: string, id: string, strength?: RowLockStrength): Promise<void>;
  /** The same with NOWAIT: rejects with 55P03 ("could not obtain lock on row") while another transaction holds the row. */
  tryLock(table: string, clientId: string, id: string, strength?: RowLockStrength): Promise<void>;
  /** Commits, releasing every lock it holds. */
  commit(): Promise<void>;
}

export type RowLockStrength = 'FOR UPDATE' | 'FOR NO KEY UPDATE';

const tableName = /^[a-z_]+$/;

/** Runs `body` with another transaction open on a connection of `pool`'s; rolled back at the end unless committed. */
export async function withOtherTransaction<T>(pool: pg.Pool, body: (other: OtherTransaction) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let open = false;
  const lockRow = async (table: string, clientId: string, id: string, strength: RowLockStrength, nowait: boolean) => {
    if (!tableName.test(table)) throw new Error(`not a table name: ${table}`);
    const result = await client.query(`SELECT 1 FROM ${table} WHERE client_id = $1 AND id = $2 ${strength}${nowait ? ' NOWAIT' : ''}`, [clientId, id]);
    if (result.rowCount !== 1) throw new Error(`no row ${clientId}/${id} in ${table}`);
  };
  try {
    await client.query('BEGIN');
    open = true;
    return await body({
      lock: (table, clientId, id, strength = 'FOR NO KEY UPDATE') => lockRow(table, clientId, id, strength, false),
      tryLock: (table, clientId, id, strength = 'FOR NO KEY UPDATE') => lockRow(table, clientId, id, strength, true),
      commit: async () => {
        await client.query('COMMIT');
        open = false;
      },
    });
  } finally {
    if (open) await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

import { sql } from 'kysely';
import type { Db } from './database.js';

/**
 * Takes the next value of the PostgreSQL sequence `sequence` (nextval: outside the transaction's
 * rollback, so a value is never given twice). `description` names it in the error ("the virtual
 * account sequence"). Works inside a transaction too (Tx is a Db).
 */
export async function nextSequenceValue(db: Db, sequence: string, description: string): Promise<bigint> {
  const result = await sql<{ value: string }>`SELECT nextval(${sequence}::regclass)::text AS value`.execute(db);
  const value = result.rows[0]?.value;
  if (value === undefined) throw new Error(`${description} returned no value`);
  return BigInt(value);
}

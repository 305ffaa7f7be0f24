import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../src/platform/db/database.js';
import { withTransaction, type Tx } from '../src/platform/db/transaction.js';
import { arrayLiteral } from '../src/platform/db/parameters.js';

/** A node of EXPLAIN (FORMAT JSON)'s plan. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** The nodes that read a table (not the one that writes the statement's target). */
export const scansOf = (node: PlanNode): PlanNode[] => [...(node['Relation Name'] && node['Node Type'] !== 'ModifyTable' ? [node] : []), ...(node.Plans ?? []).flatMap(scansOf)];

/** A parameter as an SQL literal, for EXECUTE (a PREPAREd statement's types come from its casts). */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  let text: string | undefined;
  if (Array.isArray(value)) text = arrayLiteral(value);
  else if (value instanceof Date) text = value.toISOString();
  else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') text = String(value);
  if (text === undefined) throw new Error('a parameter without a literal');
  return `'${text.replace(/'/g, "''")}'`;
}

/** What planOf explains: a Kysely raw statement, or a statement written as text (text-statements.ts). */
export interface PlannableStatement {
  compile(tx: Tx): { sql: string; parameters: readonly unknown[] };
}

/**
 * The generic plan PostgreSQL keeps for the statement on a connection, as the batched writes run it
 * (prepared, plan_cache_mode force_generic_plan); with `custom`, the plan made for these values.
 * With `emptyTables`, the plan made while those tables were empty.
 */

export async function planOf(db: Db, statement: PlannableStatement, mode: 'generic' | 'custom' = 'generic', options: { emptyTables?: readonly string[] } = {}): Promise<PlanNode> {
  return withTransaction(db, async (tx) => {
    // An empty, never analysed copy of each table (indexes included), which the statement reads
    // instead (temporary tables come first in the search path): the plan of a new database.
    for (const table of options.emptyTables ?? []) await sql.raw(`CREATE TEMPORARY TABLE ${table} (LIKE ${table} INCLUDING ALL) ON COMMIT DROP`).execute(tx);
    const compiled = statement.compile(tx);
    const name = `plan_test_${crypto.randomBytes(4).toString('hex')}`;
    await sql.raw(`SET LOCAL plan_cache_mode = force_${mode}_plan`).execute(tx);
    await sql.raw(`PREPARE ${name} AS ${compiled.sql}`).execute(tx);
    const explained = await sql.raw<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${compiled.parameters.map(literal).join(', ')})`).execute(tx);
    await sql.raw(`DEALLOCATE ${name}`).execute(tx);
    const plan = explained.rows[0]?.['QUERY PLAN'][0].Plan;
    if (!plan) throw new Error('no plan');
    return plan;
  });
}

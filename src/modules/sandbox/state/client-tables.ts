import { sql } from 'kysely';
import type { Tx } from '../../../platform/db/transaction.js';

/**
 * The tables that hold a client's state, found in the database catalogue at run time (every table
 * of the current schema with a `client_id` column), so the tables of modules added later are reset,
 * saved and restored without this module knowing them.
 */

/**
 * Tables a client's state never includes: the client itself and its API keys (a reset or a restore
 * must not lock the caller out), the migration log, the snapshots themselves, and the vault's
 * settings and audit log. The vault's `vaultId`, `routeId` and signing secrets are fixed per client
 * (contract §12.6): a restore must not bring back a secret rotated away (and with it the tokens it
 * signed) nor give the client new ids; the audit log is a security record that only grows.
 */
export const stateExcludedTables: readonly string[] = [
  'clients',
  'api_keys',
  'schema_migrations',
  'sandbox_snapshots',
  'sandbox_snapshot_tables',
  'vault_settings',
  'vault_audit',
];

/**
 * The client's configuration, which POST /v1/sandbox/reset keeps (a snapshot saves and restores it
 * like the rest). Modules that add client configuration tables (card programs, for example) add
 * them here.
 */
export const resetKeptTables: readonly string[] = ['membership_programs', 'compliance_settings', 'webhook_faults', 'card_programs', 'credit_settings'];

/**
 * References the database checks with triggers instead of foreign keys (migration 0014), as
 * [referencing table, referenced table]: they order the inserts of a restore like foreign keys do.
 */
export const triggerCheckedReferences: ReadonlyArray<readonly [string, string]> = [
  ['ledger_entries', 'ledger_transfers'],
  ['ledger_entries', 'ledger_accounts'],
  ['wallet_transactions', 'ledger_transfers'],
];

export interface ClientTable {
  name: string;
  /** The schema it lives in (current_schema()), for qualified names. */
  schema: string;
  /** The columns a row is written with: every column but dropped and generated ones, in table order. */
  columns: string[];
  /**
   * Its jsonb columns that are NOT NULL. A snapshot holds rows as to_jsonb(row), where a JSON null
   * and an SQL NULL are both `null`, and restoring reads `null` back as SQL NULL: in these columns
   * it was the JSON null (an in-progress idempotency record's body, for one).
   */
  jsonNotNull: string[];
}

/**
 * The client-owned tables, ordered so that a table comes after every table it references (insert
 * in this order, delete in the reverse one). Ties are broken by name, so the order is stable.
 */
export async function clientTables(tx: Tx): Promise<ClientTable[]> {
  const tables = await sql<{ schema: string; name: string; columns: string[]; json_not_null: string[] }>`
    SELECT n.nspname AS schema, c.relname AS name,
      array_agg(a.attname::text ORDER BY a.attnum) FILTER (WHERE a.attgenerated = '') AS columns,
      coalesce(array_agg(a.attname::text) FILTER (WHERE a.attgenerated = '' AND a.attnotnull AND a.atttypid = 'jsonb'::regtype), '{}') AS json_not_null
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    GROUP BY n.nspname, c.relname
    HAVING bool_or(a.attname = 'client_id')`.execute(tx);
  const references = await sql<{ child: string; parent: string }>`
    SELECT child.relname AS child, parent.relname AS parent
    FROM pg_constraint k
    JOIN pg_class child ON child.oid = k.conrelid
    JOIN pg_class parent ON parent.oid = k.confrelid
    JOIN pg_namespace n ON n.oid = child.relnamespace
    WHERE k.contype = 'f' AND n.nspname = current_schema()`.execute(tx);
  const owned = tables.rows.filter((table) => !stateExcludedTables.includes(table.name));
  const order = referenceOrder(
    owned.map((table) => table.name),
    [...references.rows.map((row) => [row.child, row.parent] as const), ...triggerCheckedReferences],
  );
  const byName = new Map(owned.map((table) => [table.name, table]));
  return order.map((name) => {
    const table = byName.get(name);
    if (!table) throw new Error(`table ${name} vanished`);
    return { name, schema: table.schema, columns: table.columns, jsonNotNull: table.json_not_null };
  });
}

/**
 * Orders `names` so that every referenced table comes before the tables referencing it
 * (Kahn's algorithm, smallest name first among the ready ones). References to tables outside
 * `names` and a table's references to itself are ignored; a cycle is a bug in the schema.
 */
export function referenceOrder(names: readonly string[], references: ReadonlyArray<readonly [string, string]>): string[] {
  const known = new Set(names);
  const parents = new Map<string, Set<string>>(names.map((name) => [name, new Set()]));
  for (const [child, parent] of references) {
    if (child !== parent && known.has(child) && known.has(parent)) parents.get(child)?.add(parent);
  }
  const order: string[] = [];
  const placed = new Set<string>();
  while (order.length < names.length) {
    const ready = names.filter((name) => !placed.has(name) && [...(parents.get(name) ?? [])].every((parent) => placed.has(parent))).sort();
    const next = ready[0];
    if (next === undefined) {
      const left = names.filter((name) => !placed.has(name)).sort();
      throw new Error(`the client tables reference each other in a cycle: ${left.join(', ')}`);
    }
    order.push(next);
    placed.add(next);
  }
  return order;
}

/** The table's qualified, quoted name. */
export function tableRef(table: ClientTable) {
  return sql.id(table.schema, table.name);
}

/**
 * Lets this transaction delete and rewrite the ledger's rows, which the ledger's triggers otherwise
 * refuse (migration 0019). Transaction-local: it ends with the transaction.
 */
export async function allowStateRewrite(tx: Tx): Promise<void> {
  await sql`SELECT set_config('openbaas.sandbox_rewrite', 'on', true)`.execute(tx);
}

/**
 * Rows of a state table that a reset and a restore leave in place, as a condition on the row: the
 * Idempotency-Keys of the snapshot routes (create, delete, restore). Snapshots are neither reset
 * nor restored, so neither are the keys that made, removed or restored them: a retry of any of
 * them replays its answer instead of making a second snapshot or restoring again.
 */
export function keptRowsOf(table: ClientTable) {
  return table.name === 'idempotency_keys' ? sql<boolean>`path LIKE '/v1/sandbox/snapshots%'` : undefined;
}

/**
 * The tables whose rows the client's writers that do not take the client's fence (client-fence.ts:
 * the card messages and the batched transfers and trades, whose wait at the fence would stall
 * the other requests of their transaction; the webhook worker's outcomes) lock before anything
 * else of the client's, in the order they lock them: a card message its card, then the ledger
 * accounts it moves; a batched transfer or trade the ledger accounts it changes; the webhook
 * worker the deliveries whose outcome it records (its attempt's foreign key holds the delivery's
 * row). A reset or a restore locks all of the client's rows of these tables,
 * in this order, before it deletes anything (lockWritersOut), and its client's row only after
 * them. Until 2026-12-07 the deliveries were not locked: an attempt recorded between the restore's
 * delete of the attempts and its delete of the deliveries made the second fail on the attempt's
 * foreign key, and the restore answered 500 (found by a re-audit with the worker delivering).
 */
export const writerLockedTables: readonly string[] = ['cards', 'ledger_accounts', 'webhook_deliveries'];

/**
 * Makes the client's writers wait for this transaction, a reset or a restore that is about to
 * delete the client's rows table by table: locks every row of writerLockedTables that the client
 * has, in that order, waiting for the writers that hold one to commit first. Until 2026-12-07 a
 * restore or a reset locked only the client's row, which an internal transfer never touches: a
 * transfer that committed after the restore had deleted the ledger's entries and before it
 * deleted the transfers left entries without their transfer (`ledger verify` failed), and card
 * messages, which lock their card first and then the client's row (through the foreign keys of
 * the rows they insert), deadlocked with a restore that held the client's row and deleted their
 * cards (found by an audit). A writer that comes meanwhile waits for the commit and then finds
 * the rows replaced: it is refused or acts on the restored state, as docs/sandbox.md says.
 */
export async function lockWritersOut(tx: Tx, clientId: string, tables: readonly ClientTable[]): Promise<void> {
  for (const name of writerLockedTables) {
    const table = tables.find((candidate) => candidate.name === name);
    if (table) await sql`SELECT count(*) FROM (SELECT 1 FROM ${tableRef(table)} WHERE client_id = ${clientId} ORDER BY id FOR UPDATE) AS locked`.execute(tx);
  }
}

/**
 * Deletes every row of `clientId` from `tables` (given in reference order; deleted in the
 * reverse), except the rows keptRowsOf keeps, returning the number of rows deleted per table.
 */
export async function deleteClientRows(tx: Tx, clientId: string, tables: readonly ClientTable[]): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const table of [...tables].reverse()) {
    const result = await sql`DELETE FROM ${tableRef(table)} WHERE client_id = ${clientId} AND NOT (${keptRowsOf(table) ?? sql`false`})`.execute(tx);
    deleted[table.name] = Number(result.numAffectedRows ?? 0);
  }
  return Object.fromEntries(Object.entries(deleted).sort(([a], [b]) => a.localeCompare(b)));
}

import { sql, type Selectable } from 'kysely';
import { clientNow } from '../../../platform/client-clock.js';
import type { Db } from '../../../platform/db/database.js';
import { sqlStateOf, type Tx } from '../../../platform/db/transaction.js';
import type { Deps } from '../../../platform/deps.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { AppError, notFound, validationError } from '../../../platform/http/errors.js';
import { idAt, isUuid } from '../../../platform/ids.js';
import { assertPlainText, isBlank } from '../../../platform/text.js';
import { readMigrationFiles } from '../../../platform/db/migrate.js';
import {
  allowStateRewrite,
  clientTables,
  deleteClientRows,
  keptRowsOf,
  lockWritersOut,
  resetKeptTables,
  tableRef,
  type ClientTable,
} from './client-tables.js';
import type { SandboxSnapshotsTable } from './state.tables.js';
import { rebaseSecretOverlap } from '../../vault/index.js';

type SnapshotRow = Selectable<SandboxSnapshotsTable>;

let shipped: ReturnType<typeof readMigrationFiles> | undefined;
/** The migrations this program ships (read once). */
function shippedMigrations(): ReturnType<typeof readMigrationFiles> {
  shipped ??= readMigrationFiles();
  return shipped;
}

/** The version of the last migration this program ships: the schema it runs on. */
function schemaVersion(): string {
  return shippedMigrations().at(-1)?.version ?? '0000';
}

/**
 * The migrations that changed records (a statement at the top level that updates, inserts or
 * deletes rows, as 0044 linking card reversals to what they reversed and 0045 computing credit
 * lines' excess paid out), by version: a snapshot taken before one of them holds records it never
 * saw, which the code now reads as if it had (a restored reversal without its link let a second
 * reversal credit a purchase back again; found by an audit, 2026-12-05). A migration whose text
 * says `-- Snapshots taken before it restore:` with its reason is left out (0051 schedules timers
 * for marks it found; a restored mark without one is decided only when its request is repeated,
 * as before 0051, and no money moves twice).
 */
function recordChangingMigrations(): ReturnType<typeof readMigrationFiles> {
  return shippedMigrations().filter((migration) => /^(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s/im.test(migration.sql) && !/^-- Snapshots taken before it restore:/m.test(migration.sql));
}

/** 422 SANDBOX_SNAPSHOT_INCOMPATIBLE for a snapshot taken before a migration that changed records (recordChangingMigrations). */
function refuseSnapshotBeforeDataMigration(snapshot: SnapshotRow): void {
  const taken = snapshot.schema_version;
  const missed = recordChangingMigrations().filter((migration) => taken === null || migration.version > taken);
  const last = missed.at(-1);
  if (last === undefined) return;
  throw new AppError(
    'SANDBOX_SNAPSHOT_INCOMPATIBLE',
    `This snapshot was taken with an older database schema (${taken ?? '0031 or older'}; now ${schemaVersion()}), before migration ` +
      `${last.version}_${last.name}, which completed the records it found: restored, its records would lack what that migration ` +
      'gave them, and money could move twice. Take a new snapshot.',
  );
}

/** How many snapshots a client may keep; one more is refused with 422 SANDBOX_SNAPSHOT_LIMIT_REACHED. */
export const snapshotsPerClientMax = 20;
/** The confirmation POST /v1/sandbox/reset needs in `confirm`. */
export const resetConfirmation = 'RESET';
/** A table's saved rows are split into chunks of about this many bytes (each chunk is one jsonb value). */
export const snapshotChunkBytes = 16 * 1024 * 1024;

export interface ResetView {
  deleted: Record<string, number>;
  kept: string[];
}

export interface SnapshotView {
  id: string;
  name: string;
  createdAt: string;
  clockOffsetSeconds: number;
  rowCounts: Record<string, number>;
  sizeBytes: number;
}

export interface RestoreView {
  snapshot: SnapshotView;
  deleted: Record<string, number>;
  restored: Record<string, number>;
  cancelledDeliveries: number;
  clockOffsetSeconds: number;
}

export function snapshotView(row: SnapshotRow): SnapshotView {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at.toISOString(),
    clockOffsetSeconds: Number(row.clock_offset_ms) / 1000,
    rowCounts: row.row_counts,
    sizeBytes: Number(row.size_bytes),
  };
}

/**
 * Locks the client's row for the rest of the transaction (a reset, a snapshot or a restore of one
 * client run one at a time, and writes that insert rows referencing the client wait for it; a
 * reset or a restore locks the rows the other writers lock before it, lockWritersOut) and
 * returns its clock offset. Refused while a clock advance of the client is running its timers:
 * they would run against state that is being replaced.
 */
async function lockClientState(tx: Tx, deps: Deps, clientId: string): Promise<number> {
  const result = await sql<{ offset: string; lease_until: Date | null }>`
    SELECT clock_offset_ms::text AS offset, clock_advance_lease_until AS lease_until
    FROM clients WHERE id = ${clientId} FOR UPDATE`.execute(tx);
  const row = result.rows[0];
  if (!row) throw new Error(`client ${clientId} not found`);
  if (row.lease_until !== null && row.lease_until.getTime() > deps.clock.now().getTime()) {
    throw new AppError('SANDBOX_STATE_BUSY', 'An advance of this client\'s clock is still running its timers; retry when it has answered.');
  }
  return Number(row.offset);
}

/** The number of the client's rows in each of `tables`, in one statement. */
async function rowCounts(tx: Tx, clientId: string, tables: readonly ClientTable[]): Promise<Record<string, number>> {
  if (tables.length === 0) return {};
  const counts = sql.join(
    tables.map((table) => sql`(SELECT count(*) FROM ${tableRef(table)} WHERE client_id = ${clientId}) AS ${sql.id(table.name)}`),
  );
  const result = await sql<Record<string, string>>`SELECT ${counts}`.execute(tx);
  const row = result.rows[0] ?? {};
  return Object.fromEntries(tables.map((table) => [table.name, Number(row[table.name] ?? 0)]));
}

/**
 * Runs the client seeders again after a reset, in the reset's transaction, each behind a savepoint.
 * A seeder that meets its rows already there (a unique violation) or adds rows to a kept table
 * (the default membership programs, say) seeds configuration the reset kept: its work is undone.
 * The others seeded tables the reset emptied, and their rows stay. Any other failure is a bug and
 * fails the reset.
 */
async function reseed(tx: Tx, context: RequestContext, deps: Deps, kept: readonly ClientTable[]): Promise<void> {
  for (const seeder of deps.clientSeeders) {
    const before = JSON.stringify(await rowCounts(tx, context.clientId, kept));
    await sql`SAVEPOINT sandbox_reseed`.execute(tx);
    let undo: boolean;
    try {
      await seeder(tx, context.clientId, context.now, deps);
      undo = JSON.stringify(await rowCounts(tx, context.clientId, kept)) !== before;
    } catch (error) {
      if (sqlStateOf(error) !== '23505') throw error;
      undo = true;
    }
    if (undo) await sql`ROLLBACK TO SAVEPOINT sandbox_reseed`.execute(tx);
    await sql`RELEASE SAVEPOINT sandbox_reseed`.execute(tx);
  }
}

/**
 * POST /v1/sandbox/reset: deletes every row the client owns, except its configuration
 * (`resetKeptTables`), its API keys and its snapshots, then runs the client seeders again. The
 * clock offset is not changed. One transaction.
 */
export async function resetClientState(tx: Tx, context: RequestContext, deps: Deps): Promise<ResetView> {
  const tables = await clientTables(tx);
  // The writers' rows first, then the client's row, in the order the writers take them (lockWritersOut).
  await lockWritersOut(tx, context.clientId, tables.filter((table) => !resetKeptTables.includes(table.name)));
  await lockClientState(tx, deps, context.clientId);
  await allowStateRewrite(tx);
  const kept = tables.filter((table) => resetKeptTables.includes(table.name));
  const deleted = await deleteClientRows(tx, context.clientId, tables.filter((table) => !resetKeptTables.includes(table.name)));
  await reseed(tx, context, deps, kept);
  return { deleted, kept: kept.map((table) => table.name).sort() };
}

/** POST /v1/sandbox/snapshots: saves every row of every client-owned table and the clock offset. */
export async function createSnapshot(tx: Tx, context: RequestContext, deps: Deps, name: string): Promise<SnapshotView> {
  assertPlainText(name, 'name');
  if (isBlank(name)) throw validationError('name', 'must hold more than white space (it is how people tell snapshots apart)');
  const { clientId } = context;
  const offsetMs = await lockClientState(tx, deps, clientId);
  const existing = await tx.selectFrom('sandbox_snapshots').select(sql<string>`count(*)`.as('count')).where('client_id', '=', clientId).executeTakeFirst();
  if (Number(existing?.count ?? 0) >= snapshotsPerClientMax) {
    throw new AppError('SANDBOX_SNAPSHOT_LIMIT_REACHED', `This client already keeps ${snapshotsPerClientMax} snapshots, the most allowed; delete one first.`);
  }
  // The id by the wall clock, not the client's: snapshots outlive restores, and a list newest
  // first (by id) must put the one taken last first even when a restore moved the clock back
  // (until 2026-12-02 one taken with the clock ahead stayed on top; found by an audit). createdAt
  // stays the client's time.
  const id = idAt(deps.clock.now());
  const tables = await clientTables(tx);
  await tx
    .insertInto('sandbox_snapshots')
    .values({
      client_id: clientId,
      id,
      name,
      clock_offset_ms: String(offsetMs),
      row_counts: '{}',
      size_bytes: '0',
      created_at: context.now,
      schema_version: schemaVersion(),
    })
    .execute();
  if (tables.length > 0) {
    // One statement, so every table is read from the same database snapshot even when other
    // transactions of the client commit meanwhile. Rows are cut into chunks by their size.
    const branches = tables.map(
      (table) => sql`
        SELECT ${clientId}::uuid, ${id}::uuid, ${table.name}::text, ((s.running - 1) / ${snapshotChunkBytes})::int, jsonb_agg(s.r ORDER BY s.n)
        FROM (
          SELECT to_jsonb(t) AS r, row_number() OVER w AS n, sum(pg_column_size(t.*)) OVER w AS running
          FROM ${tableRef(table)} t WHERE t.client_id = ${clientId}
          WINDOW w AS (ORDER BY t.ctid)
        ) s
        GROUP BY 4`,
    );
    await sql`
      INSERT INTO sandbox_snapshot_tables (client_id, snapshot_id, table_name, chunk, rows)
      ${sql.join(branches, sql` UNION ALL `)}`.execute(tx);
  }
  const saved = await sql<{ table_name: string; count: string; bytes: string }>`
    SELECT table_name, sum(jsonb_array_length(rows))::text AS count, sum(pg_column_size(rows))::text AS bytes
    FROM sandbox_snapshot_tables WHERE client_id = ${clientId} AND snapshot_id = ${id}
    GROUP BY table_name`.execute(tx);
  const counts: Record<string, number> = Object.fromEntries(tables.map((table) => [table.name, 0]));
  let sizeBytes = 0;
  for (const row of saved.rows) {
    counts[row.table_name] = Number(row.count);
    sizeBytes += Number(row.bytes);
  }
  const rowCountsSorted = Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
  const row = await tx
    .updateTable('sandbox_snapshots')
    .set({ row_counts: JSON.stringify(rowCountsSorted), size_bytes: String(sizeBytes) })
    .where('client_id', '=', clientId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return snapshotView(row);
}

/** Per table of the snapshot, the columns its saved rows hold (every row of a table has the same). */
async function savedColumns(tx: Tx, clientId: string, snapshotId: string): Promise<Map<string, Set<string>>> {
  const result = await sql<{ table_name: string; columns: string[] }>`
    SELECT s.table_name, array_agg(DISTINCT k.key) AS columns
    FROM sandbox_snapshot_tables s CROSS JOIN LATERAL jsonb_object_keys(s.rows -> 0) AS k (key)
    WHERE s.client_id = ${clientId} AND s.snapshot_id = ${snapshotId}
    GROUP BY s.table_name`.execute(tx);
  return new Map(result.rows.map((row) => [row.table_name, new Set(row.columns)]));
}

async function findSnapshot(db: Db | Tx, clientId: string, snapshotId: string): Promise<SnapshotRow> {
  // Another client's snapshot answers exactly as a missing one.
  if (!isUuid(snapshotId)) throw notFound('Snapshot');
  const row = await db.selectFrom('sandbox_snapshots').selectAll().where('client_id', '=', clientId).where('id', '=', snapshotId).executeTakeFirst();
  if (!row) throw notFound('Snapshot');
  return row;
}

export async function getSnapshot(db: Db, clientId: string, snapshotId: string): Promise<SnapshotView> {
  return snapshotView(await findSnapshot(db, clientId, snapshotId));
}

export function snapshotsQuery(db: Db, clientId: string) {
  return db.selectFrom('sandbox_snapshots').selectAll().where('client_id', '=', clientId);
}

export async function deleteSnapshot(tx: Tx, context: RequestContext, snapshotId: string): Promise<SnapshotView> {
  const row = await findSnapshot(tx, context.clientId, snapshotId);
  await tx.deleteFrom('sandbox_snapshots').where('client_id', '=', context.clientId).where('id', '=', snapshotId).execute();
  return snapshotView(row);
}

/** The triggers that check the ledger's references (migration 0014): their refusals name these constraints. */
const ledgerReferenceChecks = ['ledger_entries_references', 'wallet_transactions_references'];

/**
 * What a restore's failed INSERT of `tableName` becomes: a snapshot taken with another schema whose
 * rows break a rule of the current table (a data exception, class 22, or a constraint, class 23:
 * say a NOT NULL column added since without a default) is refused with 422
 * SANDBOX_SNAPSHOT_INCOMPATIBLE; the transaction is rolled back, so nothing changed. On the
 * snapshot's own schema the same failure is a bug, and is passed on as it is.
 */
function incompatibleSnapshot(snapshot: SnapshotRow, tableName: string, error: unknown): unknown {
  const state = sqlStateOf(error);
  if (state === undefined || !(state.startsWith('22') || state.startsWith('23'))) return error;
  const constraint = (error as { constraint?: unknown }).constraint;
  if (state === '23503' && typeof constraint === 'string' && ledgerReferenceChecks.includes(constraint)) {
    // Ledger entries or wallet records whose transfer is missing: a snapshot taken while a reset
    // or a restore had left such rows (until 2026-12-07 one run while the client's transfers
    // committed could; found by an audit). Restored, the ledger would not verify.
    return new AppError(
      'SANDBOX_SNAPSHOT_INCOMPATIBLE',
      `This snapshot holds records of ${tableName} whose ledger transfer or account is not in it (left by a reset or a restore that ran ` +
        'while transfers committed, before 2026-12-07): restored, the ledger would not verify. Take a new snapshot after a reset.',
    );
  }
  const current = schemaVersion();
  if (snapshot.schema_version === current) return error;
  const column = (error as { column?: unknown }).column;
  return new AppError(
    'SANDBOX_SNAPSHOT_INCOMPATIBLE',
    `This snapshot was taken with an older database schema (${snapshot.schema_version ?? '0031 or older'}; now ${current}) ` +
      `and its records of ${tableName}${typeof column === 'string' ? ` (column ${column})` : ''} do not fit the current table. Take a new snapshot.`,
  );
}

export interface RestoreOptions {
  /** Leave the restored PENDING webhook deliveries pending, so the worker sends them (again). */
  resendPendingDeliveries: boolean;
  /**
   * The Idempotency-Key of the restore request itself: if the snapshot holds a record of that key
   * (used before the snapshot, then wiped by a reset), it is dropped, so the restore's own record
   * can be written.
   */
  requestIdempotencyKey?: string | undefined;
}

/**
 * POST /v1/sandbox/snapshots/:snapshotId/restore: replaces every row the client owns (its
 * configuration included; its API keys and snapshots excepted) with the snapshot's rows, ids
 * unchanged, and sets its clock offset back to the saved one. The restored PENDING webhook
 * deliveries are CANCELLED unless `resendPendingDeliveries`. One transaction. The caller notes
 * `clockOffsetSeconds` after the commit (noteClockOffset).
 */
export async function restoreSnapshot(tx: Tx, context: RequestContext, deps: Deps, snapshotId: string, options: RestoreOptions): Promise<RestoreView> {
  const { clientId } = context;
  const snapshot = await findSnapshot(tx, clientId, snapshotId);
  refuseSnapshotBeforeDataMigration(snapshot);
  const tables = await clientTables(tx);
  // The writers' rows first, then the client's row, in the order the writers take them (lockWritersOut).
  await lockWritersOut(tx, clientId, tables);
  const previousOffsetMs = await lockClientState(tx, deps, clientId);
  await allowStateRewrite(tx);
  const deleted = await deleteClientRows(tx, clientId, tables);
  const restored: Record<string, number> = {};
  const saved = await savedColumns(tx, clientId, snapshot.id);
  for (const table of tables) {
    const held = saved.get(table.name);
    if ((snapshot.row_counts[table.name] ?? 0) === 0 || !held) {
      restored[table.name] = 0;
      continue;
    }
    // A row the delete kept (keptRowsOf) stays as it is: the snapshot's row of the same key, if any, is older.
    // Only the columns the snapshot holds: a column added to the table since takes its default,
    // as the table's own rows did when it was added; a column dropped since is left out.
    const restoredColumns = table.columns.filter((column) => held.has(column));
    const columns = sql.join(restoredColumns.map((column) => sql.id(column)));
    const values = sql.join(
      restoredColumns.map((column) => (table.jsonNotNull.includes(column) ? sql`coalesce(${sql.id('r', column)}, 'null'::jsonb)` : sql.id('r', column))),
    );
    try {
      const result = await sql`
        INSERT INTO ${tableRef(table)} (${columns}) OVERRIDING SYSTEM VALUE
        SELECT ${values}
        FROM sandbox_snapshot_tables s
        CROSS JOIN LATERAL jsonb_populate_recordset(NULL::${tableRef(table)}, s.rows) r
        WHERE s.client_id = ${clientId} AND s.snapshot_id = ${snapshot.id} AND s.table_name = ${table.name} AND r.client_id = ${clientId}
        ${keptRowsOf(table) === undefined ? sql`` : sql`ON CONFLICT DO NOTHING`}`.execute(tx);
      restored[table.name] = Number(result.numAffectedRows ?? 0);
    } catch (error) {
      throw incompatibleSnapshot(snapshot, table.name, error);
    }
  }
  if (options.requestIdempotencyKey !== undefined) {
    await tx.deleteFrom('idempotency_keys').where('client_id', '=', clientId).where('key', '=', options.requestIdempotencyKey).execute();
  }
  const offsetMs = Number(snapshot.clock_offset_ms);
  await sql`UPDATE clients SET clock_offset_ms = ${offsetMs} WHERE id = ${clientId}`.execute(tx);
  // The vault is not restored; a rotated-away signing secret must stay away on the restored clock.
  await rebaseSecretOverlap(tx, clientId, clientNow(deps.clock, previousOffsetMs), clientNow(deps.clock, offsetMs));

  let cancelledDeliveries = 0;
  if (tables.some((table) => table.name === 'webhook_deliveries')) {
    // A worker's claim saved with the snapshot belongs to no running attempt now: a PENDING
    // delivery's, or a CANCELLED one's that was cancelled while it was being sent (migration 0048).
    await sql`
      UPDATE webhook_deliveries SET lease_token = NULL, lease_expires_at = NULL
      WHERE client_id = ${clientId} AND lease_token IS NOT NULL`.execute(tx);
    if (!options.resendPendingDeliveries) {
      const now = clientNow(deps.clock, offsetMs);
      const result = await sql`
        UPDATE webhook_deliveries SET status = 'CANCELLED', completed_at = ${now}, updated_at = ${now}
        WHERE client_id = ${clientId} AND status = 'PENDING'`.execute(tx);
      cancelledDeliveries = Number(result.numAffectedRows ?? 0);
    }
  }
  const sortByName = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
  return { snapshot: snapshotView(snapshot), deleted, restored: sortByName(restored), cancelledDeliveries, clockOffsetSeconds: offsetMs / 1000 };
}

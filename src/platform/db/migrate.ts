import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { migrationsDir } from '../../paths.js';

export interface MigrationFile {
  version: string;
  name: string;
  sql: string;
}

const migrationFilePattern = /^(\d{4})_([a-z0-9_]+)\.sql$/;
/** Any constant: all processes that migrate one database take this advisory lock first. */
const migrationLockId = 7_300_151_001;

export function readMigrationFiles(folder = migrationsDir): MigrationFile[] {
  const files = fs.readdirSync(folder).filter((file) => file.endsWith('.sql')).sort();
  const seen = new Set<string>();
  return files.map((file) => {
    const match = migrationFilePattern.exec(file);
    if (!match?.[1] || !match[2]) throw new Error(`migration file name must be NNNN_name.sql: ${file}`);
    if (seen.has(match[1])) throw new Error(`two migrations share the version ${match[1]}`);
    seen.add(match[1]);
    return { version: match[1], name: match[2], sql: fs.readFileSync(path.join(folder, file), 'utf8') };
  });
}

/**
 * The database holds migrations this build does not have: a newer OpenBaaS migrated it. Running on
 * it would apply this build's rules to data written under later ones (an older build's card
 * reversals, without the link migration 0044 added, let a second reversal credit a purchase back
 * again; found by an audit, 2026-12-05), so the build refuses to start or migrate.
 */
export class DatabaseNewerError extends Error {
  constructor(unknown: readonly string[], newestKnown: string | undefined) {
    super(
      `this database was migrated by a newer OpenBaaS: it holds migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}, ` +
        `which this build does not know (its newest is ${newestKnown ?? 'none'}). Start the newer build (or a later one) on it; ` +
        'an older build cannot run on data written under later rules. To go back, restore a backup taken before the upgrade.',
    );
    this.name = 'DatabaseNewerError';
  }
}

export interface MigrateOptions {
  /** Told before each pending migration is applied: its place among the pending ones (from 1). */
  onMigration?: (progress: { position: number; total: number; migration: string }) => void;
}

/**
 * Applies every migration not yet recorded, each in its own transaction, under an advisory lock
 * so that several processes starting at once apply each migration exactly once.
 */
export async function migrate(pool: pg.Pool, folder = migrationsDir, options: MigrateOptions = {}): Promise<string[]> {
  const migrations = readMigrationFiles(folder);
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [migrationLockId]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const recorded = (await client.query<{ version: string; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version')).rows;
      const known = new Set(migrations.map((migration) => migration.version));
      const unknown = recorded.filter((row) => !known.has(row.version));
      if (unknown.length > 0) {
        const newest = migrations.at(-1);
        throw new DatabaseNewerError(
          unknown.map((row) => `${row.version}_${row.name}`),
          newest === undefined ? undefined : `${newest.version}_${newest.name}`,
        );
      }
      const applied = new Set(recorded.map((row) => row.version));
      const newlyApplied: string[] = [];
      const pending = migrations.filter((migration) => !applied.has(migration.version));
      for (const [index, migration] of pending.entries()) {
        options.onMigration?.({ position: index + 1, total: pending.length, migration: `${migration.version}_${migration.name}` });
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`, { cause: error });
        }
        newlyApplied.push(`${migration.version}_${migration.name}`);
      }
      return newlyApplied;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [migrationLockId]);
    }
  } finally {
    client.release();
  }
}

/** True when every migration file is recorded as applied (used by /health/ready). */
export async function migrationsAreCurrent(pool: pg.Pool, folder = migrationsDir): Promise<boolean> {
  const expected = readMigrationFiles(folder).map((migration) => migration.version);
  const result = await pool.query<{ version: string }>('SELECT version FROM schema_migrations');
  const applied = new Set(result.rows.map((row) => row.version));
  return expected.every((version) => applied.has(version));
}

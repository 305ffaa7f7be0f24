import crypto from 'node:crypto';
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

/**
 * A migration this database applied has another text in this build: it was edited after it was
 * applied, so the database does not hold what the build's migrations describe (an audit found five
 * migrations edited after they were first committed, 2026-12-05). Refused, naming them: a developer
 * starts from a new data folder; an operator asks what changed.
 */
export class MigrationChangedError extends Error {
  constructor(changed: readonly string[]) {
    super(
      `migration${changed.length === 1 ? '' : 's'} ${changed.join(', ')} of this build differ${changed.length === 1 ? 's' : ''} from the text this database applied ` +
        '(edited after it was applied). Start from a new data folder or database, or run the build this database was migrated with.',
    );
    this.name = 'MigrationChangedError';
  }
}

/** A migration's text, line endings and surrounding white space aside (a Windows checkout is the same migration), as SHA-256 in hex. */
export function checksumOf(text: string): string {
  return crypto.createHash('sha256').update(text.replace(/\r\n?/g, '\n').trim()).digest('hex');
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
      // The text each migration had when it was applied (since 2026-12-05; rows of before take the
      // text this build has, the best that can be known of them).
      await client.query('ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text');
      const recorded = (await client.query<{ version: string; name: string; checksum: string | null }>('SELECT version, name, checksum FROM schema_migrations ORDER BY version')).rows;
      const byVersion = new Map(migrations.map((migration) => [migration.version, migration]));
      const unknown = recorded.filter((row) => !byVersion.has(row.version));
      if (unknown.length > 0) {
        const newest = migrations.at(-1);
        throw new DatabaseNewerError(
          unknown.map((row) => `${row.version}_${row.name}`),
          newest === undefined ? undefined : `${newest.version}_${newest.name}`,
        );
      }
      const checksums = new Map(migrations.map((migration) => [migration.version, checksumOf(migration.sql)]));
      const changed = recorded.filter((row) => row.checksum !== null && row.checksum !== checksums.get(row.version));
      if (changed.length > 0) throw new MigrationChangedError(changed.map((row) => `${row.version}_${row.name}`));
      for (const row of recorded) {
        if (row.checksum === null) await client.query('UPDATE schema_migrations SET checksum = $2 WHERE version = $1', [row.version, checksums.get(row.version)]);
      }
      const applied = new Set(recorded.map((row) => row.version));
      const newlyApplied: string[] = [];
      const pending = migrations.filter((migration) => !applied.has(migration.version));
      for (const [index, migration] of pending.entries()) {
        options.onMigration?.({ position: index + 1, total: pending.length, migration: `${migration.version}_${migration.name}` });
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [migration.version, migration.name, checksums.get(migration.version)]);
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

/** True when some migration was ever applied to this database (it holds OpenBaaS's tables). */
export async function anyMigrationApplied(pool: pg.Pool): Promise<boolean> {
  const result = await pool.query<{ found: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS found");
  return result.rows[0]?.found === true;
}

/** True when every migration file is recorded as applied (used by /health/ready). */
export async function migrationsAreCurrent(pool: pg.Pool, folder = migrationsDir): Promise<boolean> {
  const expected = readMigrationFiles(folder).map((migration) => migration.version);
  const result = await pool.query<{ version: string }>('SELECT version FROM schema_migrations');
  const applied = new Set(result.rows.map((row) => row.version));
  return expected.every((version) => applied.has(version));
}

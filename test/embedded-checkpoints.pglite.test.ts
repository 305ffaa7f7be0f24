import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/database.js';
import { analyzeChangedTables } from '../src/platform/db/embedded-checkpoints.js';
import { migratedDataFolder } from './support/temp-folder.js';

// PGlite has no checkpointer process (single-user mode): without our own checkpoints its
// write-ahead log grows for as long as the server runs. PostgreSQL checkpoints by itself, so this
// file runs only in the pglite project.

const thresholdBytes = 4 * 1024 * 1024;

/** Runs `work` on a database of its own (in memory unless `dataDir`), checked every `intervalMs`, and closes it. */
async function withDatabase(options: { intervalMs: number; dataDir?: string }, work: (database: DatabaseHandle) => Promise<void>): Promise<void> {
  const where = options.dataDir === undefined ? { memory: true } : { dataDir: options.dataDir };
  const database = await openDatabase({ ...where, poolMax: 1, connectTimeoutMs: 30_000, checkpoints: { intervalMs: options.intervalMs, thresholdBytes } });
  try {
    await work(database);
  } finally {
    await database.close();
  }
}

async function walSinceCheckpoint(database: DatabaseHandle): Promise<number> {
  const result = await sql<{ bytes: string }>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), (pg_control_checkpoint()).redo_lsn)::text AS bytes`.execute(database.db);
  return Number(result.rows[0]?.bytes);
}

async function untilCheckpointed(database: DatabaseHandle): Promise<number> {
  const deadline = Date.now() + 15_000;
  let bytes = await walSinceCheckpoint(database);
  while (bytes >= thresholdBytes && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    bytes = await walSinceCheckpoint(database);
  }
  return bytes;
}

function walSegments(folder: string): number {
  return fs.readdirSync(path.join(folder, 'pg_wal')).filter((name) => /^[0-9A-F]{24}$/.test(name)).length;
}

describe('the embedded database checkpoints its write-ahead log', () => {
  it('once the WAL since the last checkpoint passes the threshold, so a data folder keeps at most 64 MB of it', async () => {
    const folder = migratedDataFolder('wal');
    await withDatabase({ intervalMs: 50, dataDir: folder }, async (database) => {
        const settings = await sql<{ max: string; min: string }>`SELECT current_setting('max_wal_size') AS max, current_setting('min_wal_size') AS min`.execute(database.db);
        expect(settings.rows[0]).toEqual({ max: '64MB', min: '32MB' });
        await sql`CREATE TABLE wal_filler (v text)`.execute(database.db);
        // About 40 MB of WAL per round (rows of 960 characters, under the size PostgreSQL compresses),
        // 160 MB in all: ten 16 MB segments if nothing checkpointed.
        for (let round = 0; round < 4; round++) {
          await sql`INSERT INTO wal_filler SELECT repeat(md5(g::text), 30) FROM generate_series(1, 40000) AS g`.execute(database.db);
          expect(await untilCheckpointed(database)).toBeLessThan(thresholdBytes);
        }
        expect(walSegments(folder)).toBeLessThanOrEqual(5);
    });
  });

  it("in memory too (the WAL there is the process's memory)", async () => {
    await withDatabase({ intervalMs: 50 }, async (database) => {
        await sql`CREATE TABLE wal_filler (v text)`.execute(database.db);
        await sql`INSERT INTO wal_filler SELECT repeat(md5(g::text), 30) FROM generate_series(1, 20000) AS g`.execute(database.db);
        expect(await untilCheckpointed(database)).toBeLessThan(thresholdBytes);
    });
  });
});

// Nor has PGlite an autovacuum launcher: until 2026-12-07 no table was ever analyzed, and a list
// narrowed by a filter read every row of the client (an audit measured 39-52 ms for
// `GET /v1/events?createdAfter=…` over 60,000 events, about 0.5 ms once analyzed).
describe('the embedded database analyzes its tables', () => {
  const analyzedAt = async (database: DatabaseHandle, table: string) =>
    (await sql<{ at: Date | null }>`SELECT last_analyze AS at FROM pg_stat_user_tables WHERE relname = ${table}`.execute(database.db)).rows[0]?.at ?? null;

  it('each table changed by more than 50 rows plus 10 % of its rows at its last analysis, as autovacuum would', async () => {
    await withDatabase({ intervalMs: 3_600_000 }, async (database) => {
        await sql`CREATE TABLE analyze_probe (v int)`.execute(database.db);
        // Tables analyzed with the migrations' changes aside: from here, only what this test changes.
        await analyzeChangedTables(database.pool);
        await sql`INSERT INTO analyze_probe SELECT g FROM generate_series(1, 5000) AS g`.execute(database.db);
        expect(await analyzeChangedTables(database.pool)).toEqual(['public.analyze_probe']);
        expect(await analyzedAt(database, 'analyze_probe')).not.toBeNull();
        // 550 is the threshold now (50 + 10 % of 5,000): 500 more rows are not enough, 100 more are.
        await sql`INSERT INTO analyze_probe SELECT g FROM generate_series(1, 500) AS g`.execute(database.db);
        expect(await analyzeChangedTables(database.pool)).toEqual([]);
        await sql`UPDATE analyze_probe SET v = v + 1 WHERE v <= 100`.execute(database.db);
        expect(await analyzeChangedTables(database.pool)).toEqual(['public.analyze_probe']);
    });
  });

  it('on the checkpoints\' schedule, with no call of its own', async () => {
    await withDatabase({ intervalMs: 50 }, async (database) => {
        await sql`CREATE TABLE analyze_probe (v int)`.execute(database.db);
        await sql`INSERT INTO analyze_probe SELECT g FROM generate_series(1, 5000) AS g`.execute(database.db);
        const deadline = Date.now() + 15_000;
        while ((await analyzedAt(database, 'analyze_probe')) === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(await analyzedAt(database, 'analyze_probe')).not.toBeNull();
    });
  });
});

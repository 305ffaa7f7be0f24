import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/database.js';
import { temporaryFolder } from './support/temp-folder.js';

// PGlite has no checkpointer process (single-user mode): without our own checkpoints its
// write-ahead log grows for as long as the server runs. PostgreSQL checkpoints by itself, so this
// file runs only in the pglite project.

const thresholdBytes = 4 * 1024 * 1024;

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
    const folder = temporaryFolder('wal');
    const database = await openDatabase({ dataDir: folder, poolMax: 1, connectTimeoutMs: 30_000, checkpoints: { intervalMs: 50, thresholdBytes } });
    try {
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
    } finally {
      await database.close();
    }
  });

  it("in memory too (the WAL there is the process's memory)", async () => {
    const database = await openDatabase({ memory: true, poolMax: 1, connectTimeoutMs: 30_000, checkpoints: { intervalMs: 50, thresholdBytes } });
    try {
      await sql`CREATE TABLE wal_filler (v text)`.execute(database.db);
      await sql`INSERT INTO wal_filler SELECT repeat(md5(g::text), 30) FROM generate_series(1, 20000) AS g`.execute(database.db);
      expect(await untilCheckpointed(database)).toBeLessThan(thresholdBytes);
    } finally {
      await database.close();
    }
  });
});

import type pg from 'pg';

/**
 * PGlite runs PostgreSQL in single-user mode, which has no checkpointer process: nothing ever
 * checkpoints on its own, so the write-ahead log only grows (about 6 MB per 1,000 API requests in a
 * soak; in the data folder, or in the process's memory with `--memory`), a sandbox snapshot
 * carries all of it, and a start after a crash replays all of it. The embedded database therefore
 * starts with a small WAL budget (`embeddedWalStartParams`: a checkpoint keeps at most 64 MB of
 * old segments for reuse, where PostgreSQL's default keeps 1 GB) and this task does what the
 * checkpointer does on a server when WAL passes `max_wal_size`: every `intervalMs` it reads how
 * much WAL was written since the last checkpoint (one query) and runs CHECKPOINT once that passes
 * `thresholdBytes`. A checkpoint holds the one connection for as long as it writes the pages
 * changed since the last (about 0.1 s for 32 MB of WAL on the machines we measured).
 *
 * Nor is there an autovacuum launcher, so no table was ever analyzed and the planner chose blind:
 * a list narrowed by a filter (`GET /v1/events?createdAfter=…` matching one event of 60,000) read
 * every row of the client in id order, 10–50 ms on the one connection, where with statistics it
 * takes an index and about 0.5 ms (an audit, 2026-12-07). The same check therefore analyzes each
 * table changed by more rows than autovacuum's default rule (50 + 10 % of the rows it had when last
 * analyzed, `autovacuumAnalyzeNeeded`), one ANALYZE per table (it samples at most 30,000 rows:
 * milliseconds on the one connection). Rows a table lost are left to PostgreSQL's own reuse, as
 * before (no VACUUM: the tables here mostly grow).
 */
export const embeddedWalStartParams = ['-c', 'max_wal_size=64MB', '-c', 'min_wal_size=32MB'];

export interface EmbeddedCheckpointOptions {
  /** How often the WAL written since the last checkpoint is read. */
  intervalMs: number;
  /** A checkpoint runs once that much WAL was written since the last one. */
  thresholdBytes: number;
}

export const defaultEmbeddedCheckpoints: EmbeddedCheckpointOptions = { intervalMs: 30_000, thresholdBytes: 32 * 1024 * 1024 };

export interface EmbeddedCheckpoints {
  /** Stops checking and waits for a check or checkpoint in progress. */
  stop(): Promise<void>;
}

export function startEmbeddedCheckpoints(pool: pg.Pool, options: EmbeddedCheckpointOptions): EmbeddedCheckpoints {
  let stopped = false;
  let running: Promise<void> | undefined;
  const check = async (): Promise<void> => {
    const result = await pool.query<{ bytes: string }>(
      'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), (pg_control_checkpoint()).redo_lsn)::text AS bytes',
    );
    if (!stopped && Number(result.rows[0]?.bytes ?? 0) >= options.thresholdBytes) await pool.query('CHECKPOINT');
    if (!stopped) await analyzeChangedTables(pool);
  };
  const timer = setInterval(() => {
    if (running || stopped) return;
    // A failed check (the database closing, a connection timeout behind a long request) is tried
    // again at the next interval: a checkpoint later is harmless.
    running = check()
      .catch(() => {})
      .finally(() => {
        running = undefined;
      });
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/** Autovacuum's default rule for ANALYZE: `autovacuum_analyze_threshold` 50 + `autovacuum_analyze_scale_factor` 0.1 of the rows. */
export const autovacuumAnalyzeNeeded = 'n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)';

/** Analyzes the tables that changed enough since they were last analyzed (autovacuumAnalyzeNeeded); returns their names. */
export async function analyzeChangedTables(pool: pg.Pool): Promise<string[]> {
  // The counters of this connection's last transactions reach the shared statistics when it goes
  // idle, at most once a second unless forced: forced, the next statement reads them.
  await pool.query('SELECT pg_stat_force_next_flush()');
  const changed = await pool.query<{ name: string }>(
    `SELECT format('%I.%I', s.schemaname, s.relname) AS name FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE ${autovacuumAnalyzeNeeded} ORDER BY s.relname`,
  );
  for (const { name } of changed.rows) await pool.query(`ANALYZE ${name}`);
  return changed.rows.map(({ name }) => name);
}

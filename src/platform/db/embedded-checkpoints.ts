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

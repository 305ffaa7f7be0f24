import { isPoolConnectTimeout } from './db/database.js';

/**
 * Background work in a process: each task runs, then waits its interval, until stopped. The
 * interval is a polling cadence, not a business decision; tasks read time from the injected
 * clock. Several processes may run the same tasks: each task must be safe to run concurrently
 * (claims with FOR UPDATE SKIP LOCKED, idempotent deletes).
 */
export interface WorkerTask {
  name: string;
  intervalMs: number;
  run(): Promise<unknown>;
  /**
   * For a task whose run() keeps going while it has work (or that starts work it does not await):
   * asks it to wrap up. Called when the runner stops, before the runner waits for the current run;
   * resolves when the task's own work in flight is finished.
   */
  stop?(): Promise<void>;
}

export interface WorkerLogger {
  error(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export class WorkerRunner {
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly tasks: readonly WorkerTask[],
    private readonly logger: WorkerLogger,
  ) {}

  start(): void {
    for (const task of this.tasks) this.schedule(task, 0);
  }

  private schedule(task: WorkerTask, delayMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const execution = (async () => {
        try {
          await task.run();
        } catch (error) {
          // No free connection within DB_CONNECT_TIMEOUT_MS (the embedded database's one connection
          // held by a long request, say): busy, not broken; the task runs again at its interval.
          if (isPoolConnectTimeout(error)) this.logger.warn({ task: task.name }, `worker task found no free database connection in time; it runs again in ${task.intervalMs} ms`);
          else this.logger.error({ err: error, task: task.name }, 'worker task failed');
        }
      })();
      this.running.add(execution);
      void execution.finally(() => {
        this.running.delete(execution);
        this.schedule(task, task.intervalMs);
      });
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** Stops scheduling and waits for the tasks that are running to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const stopping = this.tasks.map((task) => task.stop?.());
    await Promise.allSettled([...this.running, ...stopping]);
  }
}

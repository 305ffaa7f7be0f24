import { onceOnNextTurn } from '../next-turn.js';

/**
 * Reads many keys in one query when requests arrive together (the DataLoader idea, without a
 * timer): the first request runs at once; requests that arrive while queries are in flight wait
 * and share the next query. A request never reads older data than the moment it arrived, because
 * its query starts after it arrived.
 */
export class ReadBatcher<K, V> {
  private readonly queue: { key: K; resolve: (value: V) => void; reject: (error: unknown) => void }[] = [];
  private running = 0;
  /** Lets the requests that arrived in the same turn of the event loop join one query. */
  private readonly scheduleStart = onceOnNextTurn(() => this.start());

  constructor(
    private readonly options: {
      /** Answers one value per key, in the same order. */
      fetch: (keys: K[]) => Promise<V[]>;
      /** Most keys in one query. */
      sizeMax: number;
      /** Most queries in flight at once. */
      concurrency: number;
    },
  ) {}

  load(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      this.queue.push({ key, resolve, reject });
      this.scheduleStart();
    });
  }

  private start(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.sizeMax);
      this.running++;
      void this.options
        .fetch(batch.map((entry) => entry.key))
        .then(
          (values) => {
            if (values.length !== batch.length) throw new Error(`read batch answered ${values.length} values for ${batch.length} keys`);
            batch.forEach((entry, index) => entry.resolve(values[index] as V));
          },
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .catch((error: unknown) => batch.forEach((entry) => entry.reject(error)))
        .finally(() => {
          this.running--;
          this.start();
        });
    }
  }
}

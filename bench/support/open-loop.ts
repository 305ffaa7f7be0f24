import { cpuPerUnit, cpuSnapshot, type CpuPerUnit } from './cpu.js';

/**
 * Open-loop (fixed arrival rate) load: request i is due at start + i / rate whatever happened to
 * the earlier ones, and its latency is counted from that due time, not from when it was actually
 * sent, so time a request spent waiting behind a slow server (or a busy load generator) counts
 * (no coordinated omission). The closed loops of http-rounds.ts and load.ts measure throughput;
 * this measures latency at a given offered load.
 */

export interface OpenLoopOptions<T> {
  /** Requests per second offered. */
  rate: number;
  seconds: number;
  /** The server's process id, so its CPU is told apart from PostgreSQL's and the load's. */
  serverPid?: number;
  /** Sends request `index`; resolves with what the caller wants kept, or rejects (counted under the error's message). */
  send: (index: number) => Promise<T>;
}

export interface OpenLoopSample<T> {
  /** From the request's due time to its answer, in ms. */
  latencyMs: number;
  /** When the request was due, in seconds from the start of the run. */
  dueS: number;
  value: T;
}

export interface OpenLoopResult<T> {
  offeredRate: number;
  /** Requests due (and sent) over the run. */
  sent: number;
  /** Requests that resolved (whatever they answered); sent - answered - failed is what never came back. */
  answered: number;
  failures: Record<string, number>;
  samples: OpenLoopSample<T>[];
  /** Answers per second from the first due time to the last answer. */
  achievedRate: number;
  elapsedS: number;
  /** How late the load generator itself sent requests behind their due time (ms): p99 and max. */
  sendLagP99Ms: number;
  sendLagMaxMs: number;
  /** CPU per answered request over the run (undefined without /proc). */
  cpu: CpuPerUnit | undefined;
}

export function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN;
}

/** Sorted copy of the values, for percentile(). */
export function sortedOf(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function openLoop<T>(options: OpenLoopOptions<T>): Promise<OpenLoopResult<T>> {
  const { rate, seconds, send } = options;
  const total = Math.round(rate * seconds);
  const intervalMs = 1000 / rate;
  const samples: OpenLoopSample<T>[] = [];
  const failures: Record<string, number> = {};
  const lags: number[] = [];
  const inflight = new Set<Promise<void>>();
  let answered = 0;
  let lastAnswerAt = 0;
  const before = cpuSnapshot(options.serverPid);
  const start = performance.now() + 5;
  const fire = (index: number) => {
    const due = start + index * intervalMs;
    lags.push(performance.now() - due);
    const request = send(index).then(
      (value) => {
        lastAnswerAt = performance.now();
        answered++;
        samples.push({ latencyMs: lastAnswerAt - due, dueS: (due - start) / 1000, value });
      },
      (error: unknown) => {
        lastAnswerAt = performance.now();
        const what = error instanceof Error ? error.message : String(error);
        failures[what] = (failures[what] ?? 0) + 1;
      },
    );
    inflight.add(request);
    void request.finally(() => inflight.delete(request));
  };
  let next = 0;
  while (next < total) {
    const now = performance.now();
    while (next < total && start + next * intervalMs <= now) fire(next++);
    if (next < total) await sleep(Math.max(0, start + next * intervalMs - performance.now()));
  }
  await Promise.all([...inflight]);
  const after = cpuSnapshot(options.serverPid);
  const elapsedS = (Math.max(lastAnswerAt, start) - start) / 1000;
  const sortedLags = sortedOf(lags);
  return {
    offeredRate: rate,
    sent: total,
    answered,
    failures,
    samples,
    achievedRate: elapsedS > 0 ? answered / elapsedS : Number.NaN,
    elapsedS,
    sendLagP99Ms: percentile(sortedLags, 0.99),
    sendLagMaxMs: sortedLags[sortedLags.length - 1] ?? Number.NaN,
    cpu: cpuPerUnit(before, after, answered),
  };
}

import autocannon, { type RawRequest } from 'autocannon';
import { combineCpu, cpuPerUnit, cpuSnapshot, type CpuPerUnit } from './cpu.js';
import { warmupDefaultS } from './settings.js';

export interface LoadResult {
  /** Successful (2xx) responses per second over the whole run. */
  okPerSecond: number;
  ok: number;
  non2xx: number;
  errors: number;
  statusCounts: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  durationS: number;
  /** What the warm-up before the measured run answered (not counted in the figures above). */
  warmup: { requests: number; non2xx: number; errors: number };
  /** CPU per successful response over the measured run (undefined without /proc). */
  cpu: CpuPerUnit | undefined;
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  /** Seconds of the same load before the measured run (default BENCH_WARMUP_S), not counted. */
  warmupS?: number;
  headers?: Record<string, string>;
  /** Called for every request: returns the path, method, body and extra headers to send. */
  next: () => { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> };
  /** The server's process id, so its CPU is told apart from PostgreSQL's and the load's. */
  serverPid?: number;
}

/**
 * Closed-loop HTTP load: each connection sends its next request as soon as the previous answers.
 * A warm-up of the same load runs first and is not counted: the server's JIT compiler is still
 * optimising the request path during its first seconds, and the figures are meant to describe
 * the steady state (the warm-up's responses are still checked: any non-2xx fails the run).
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const warmupS = options.warmupS ?? warmupDefaultS;
  const warmup = warmupS > 0 ? await autocannonRun(options, warmupS) : undefined;
  if (warmup && (warmup.non2xx > 0 || warmup.errors + warmup.timeouts > 0)) {
    const codes = Object.fromEntries(Object.entries(warmup.statusCodeStats).map(([code, stats]) => [code, stats.count]));
    throw new Error(`unexpected responses during the warm-up: ${warmup.non2xx} non-2xx (${JSON.stringify(codes)}), ${warmup.errors + warmup.timeouts} errors`);
  }
  const before = cpuSnapshot(options.serverPid);
  const result = await autocannonRun(options, options.durationS);
  const cpu = cpuPerUnit(before, cpuSnapshot(options.serverPid), result['2xx']);
  const statusCounts = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, stats]) => [code, stats.count]));
  const ok = result['2xx'];
  return {
    okPerSecond: ok / result.duration,
    ok,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCounts,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    durationS: result.duration,
    warmup: { requests: warmup ? warmup['2xx'] + warmup.non2xx : 0, non2xx: warmup?.non2xx ?? 0, errors: warmup ? warmup.errors + warmup.timeouts : 0 },
    cpu,
  };
}

/**
 * Several measured runs as one: counts and seconds add up, the rate is over all of them, p50 is
 * the median of the runs' p50s and p99 the highest of their p99s (autocannon reports percentiles,
 * not histograms, so the runs' latencies cannot be merged exactly), CPU is weighted by responses.
 */
export function combineLoads(runs: readonly LoadResult[]): LoadResult {
  const [first] = runs;
  if (!first) throw new Error('combineLoads needs at least one run');
  const sum = (read: (run: LoadResult) => number) => runs.reduce((total, run) => total + read(run), 0);
  const statusCounts: Record<string, number> = {};
  for (const run of runs) {
    for (const [code, count] of Object.entries(run.statusCounts)) statusCounts[code] = (statusCounts[code] ?? 0) + count;
  }
  const p50s = runs.map((run) => run.p50Ms).sort((a, b) => a - b);
  const ok = sum((run) => run.ok);
  const durationS = sum((run) => run.durationS);
  return {
    okPerSecond: ok / durationS,
    ok,
    non2xx: sum((run) => run.non2xx),
    errors: sum((run) => run.errors),
    statusCounts,
    p50Ms: p50s[Math.floor((p50s.length - 1) / 2)] ?? Number.NaN,
    p99Ms: Math.max(...runs.map((run) => run.p99Ms)),
    durationS,
    warmup: first.warmup,
    cpu: combineCpu(runs.map((run) => ({ cpu: run.cpu, units: run.ok, seconds: run.durationS }))),
  };
}

function autocannonRun(options: LoadOptions, durationS: number) {
  return autocannon({
    url: options.url,
    connections: options.connections,
    duration: durationS,
    timeout: 30,
    requests: [
      {
        setupRequest: (request: RawRequest) => {
          const next = options.next();
          request.method = next.method;
          request.path = next.path;
          request.headers = { ...options.headers, ...(next.body === undefined ? {} : { 'content-type': 'application/json' }), ...next.headers };
          request.body = next.body;
          return request;
        },
      },
    ],
  });
}

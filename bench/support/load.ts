import autocannon, { type RawRequest } from 'autocannon';

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
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  headers?: Record<string, string>;
  /** Called for every request: returns the path, method, body and extra headers to send. */
  next: () => { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> };
}

/** Closed-loop HTTP load: each connection sends its next request as soon as the previous answers. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationS,
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
  };
}

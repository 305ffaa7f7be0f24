import http from 'node:http';
import autocannon, { type RawRequest } from 'autocannon';
import type { CpuPerUnit } from './cpu.js';
import { combineCpu, cpuFigures, cpuSnapshot, cpuPerUnit } from './cpu.js';
import { checkpoint, runPgbench } from './postgres.js';
import { withServerLog, type RunningServer } from './server.js';
import { verify, type Target } from './setup.js';
import { durationS, roundsDefault, warmupDefaultS } from './settings.js';

/**
 * What the scenarios that drive the HTTP API share: a JSON POST on a keep-alive agent; and for
 * those measured against the pgbench anchor (trades, card-auth), a closed-loop load that counts
 * units and the rounds of anchor then load with the ledger verified after the run.
 */

export function postJson(agent: http.Agent, url: URL, path: string, apiKey: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return sendJson(agent, url, 'POST', path, apiKey, body, headers);
}

/** A JSON request with the API key on a keep-alive agent; resolves with the status and the raw body. */
export function sendJson(agent: http.Agent, url: URL, method: 'POST' | 'PUT', path: string, apiKey: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { authorization: apiKey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

export interface Load {
  units: number;
  seconds: number;
  failures: Record<string, number>;
  latenciesMs: number[];
  cpu: CpuPerUnit | undefined;
}

/** What a turn's answers report: units done, their latencies, and failures by name. */
export interface LoadTally {
  done(latencyMs: number): void;
  fail(what: string): void;
}

/** One request of a worker's turn: built from the turn's own state, its answer read back into it. */
export interface Step<Turn extends object> {
  /** The JSON POST to send. */
  send(turn: Partial<Turn>): { path: string; body: unknown; headers?: Record<string, string> };
  /** Reads the answer (counting units and failures on `tally`); false ends the turn before its next step. */
  read(status: number, body: string, turn: Partial<Turn>, tally: LoadTally): boolean;
}

/**
 * Closed-loop load for `seconds`: each of `connections` keep-alive connections runs turns of
 * `steps` one request after the other, each turn with a fresh state, and the server's CPU is
 * measured per unit. The transport is autocannon's client (a socket and an HTTP parser per
 * connection, requests built as buffers), which costs the shared machine far less per request
 * than Node's own HTTP client: the load generator runs beside the server and PostgreSQL, so what
 * it spends is taken from them (docs/benchmarks.md, card-auth, twelfth session). Requests still
 * in flight when the time is up are not counted.
 */
export async function closedLoop<Turn extends object>(
  serverUrl: string,
  apiKey: string,
  connections: number,
  seconds: number,
  serverPid: number,
  steps: readonly Step<Turn>[],
): Promise<Load> {
  const failures: Record<string, number> = {};
  const latenciesMs: number[] = [];
  let units = 0;
  const tally: LoadTally = {
    done: (latencyMs) => {
      units++;
      latenciesMs.push(latencyMs);
    },
    fail: (what) => (failures[what] = (failures[what] ?? 0) + 1),
  };
  // autocannon keeps one state object per connection and turn; a turn whose answer ended it is
  // marked here, so its later steps are not sent (a null request: autocannon then starts the next
  // turn, with a new state, so the first step always sends).
  const ended = new WeakSet<object>();
  const requests = steps.map((step) => ({
    method: 'POST',
    setupRequest: (request: RawRequest, context: object) => {
      if (ended.has(context)) return null;
      const built = step.send(context);
      return { ...request, path: built.path, body: JSON.stringify(built.body), headers: { ...request.headers, ...built.headers } };
    },
    onResponse: (status: number, body: string, context: object) => {
      if (!step.read(status, body, context, tally)) ended.add(context);
    },
  }));
  const before = cpuSnapshot(serverPid);
  const started = performance.now();
  const result = await autocannon({
    url: serverUrl,
    connections,
    duration: seconds,
    // Seconds; a guard against a hung server, far above any latency the scenarios see.
    timeout: 120,
    headers: { authorization: apiKey, 'content-type': 'application/json' },
    requests,
  });
  const elapsedS = (performance.now() - started) / 1000;
  const cpu = cpuPerUnit(before, cpuSnapshot(serverPid), units);
  if (result.errors + result.timeouts > 0) failures['connection errors or timeouts'] = result.errors + result.timeouts;
  return { units, seconds: elapsedS, failures, latenciesMs, cpu };
}

function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN;
}

/**
 * A warm-up, then rounds of the pgbench anchor and our load in turn; stops the server, verifies
 * the ledger, refuses any failure, and returns the ratio with the usual figures.
 */
export async function anchoredRounds(options: {
  target: Target;
  url: string;
  server: RunningServer;
  anchorScript: string;
  connections: number;
  load: (seconds: number) => Promise<Load>;
}): Promise<{ ratio: number; ours: number; anchor: number; figures: Record<string, number | string>; anchorCommand: string; rounds: { ours: number; anchor: number }[]; ledgerTotals: unknown }> {
  const { target, url, server, anchorScript, connections, load } = options;
  const rounds: { ours: number; anchor: number }[] = [];
  const loads: Load[] = [];
  const anchorRuns: { cpu: CpuPerUnit | undefined; units: number; seconds: number }[] = [];
  let anchorCommand = '';
  let peakRssMiB: number;
  try {
    if (warmupDefaultS > 0) {
      const warmup = await load(warmupDefaultS);
      if (Object.keys(warmup.failures).length > 0) throw new Error(`failures during the warm-up: ${JSON.stringify(warmup.failures)}`);
    }
    for (let round = 0; round < Math.max(1, roundsDefault); round++) {
      await checkpoint(url);
      const anchor = await runPgbench(url, anchorScript, connections, durationS);
      anchorCommand = anchor.command;
      anchorRuns.push({ cpu: anchor.cpu, units: anchor.transactions, seconds: durationS });
      await checkpoint(url);
      const measured = await load(durationS);
      loads.push(measured);
      rounds.push({ ours: measured.units / measured.seconds, anchor: anchor.tps });
    }
  } catch (error) {
    throw withServerLog(error, server);
  } finally {
    peakRssMiB = server.peakRssMiB();
    await server.stop();
  }
  const report = await verify(target);
  if (!report.ok) throw new Error(`ledger verify failed after the run: ${JSON.stringify(report.checks.filter((check) => check.violationCount > 0))}`);
  const failures: Record<string, number> = {};
  for (const measured of loads) for (const [what, count] of Object.entries(measured.failures)) failures[what] = (failures[what] ?? 0) + count;
  if (Object.keys(failures).length > 0) throw new Error(`unexpected answers: ${JSON.stringify(failures)}`);

  const units = loads.reduce((sum, measured) => sum + measured.units, 0);
  const seconds = loads.reduce((sum, measured) => sum + measured.seconds, 0);
  const ours = units / seconds;
  const anchor = rounds.reduce((sum, round) => sum + round.anchor, 0) / rounds.length;
  const latencies = loads.flatMap((measured) => measured.latenciesMs).sort((a, b) => a - b);
  return {
    ratio: ours / anchor,
    ours,
    anchor,
    anchorCommand,
    rounds,
    ledgerTotals: report.totals,
    figures: {
      value: ours,
      anchor,
      p50_ms: percentile(latencies, 0.5),
      p99_ms: percentile(latencies, 0.99),
      ...cpuFigures(combineCpu(anchorRuns), 'anchor_'),
      ...cpuFigures(combineCpu(loads.map((measured) => ({ cpu: measured.cpu, units: measured.units, seconds: measured.seconds })))),
      round_ratios: rounds.map((round) => (round.ours / round.anchor).toFixed(3)).join('/'),
      peak_rss_mib: peakRssMiB,
      units,
      verify: 'clean',
    },
  };
}

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { packageRoot } from '../../src/paths.js';
import { loadConfig } from '../../src/platform/config.js';
import { openDeps } from '../../src/main.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import type { Scenario, ScenarioResult } from '../lib.js';
import { recreateDatabase, runSql } from '../support/postgres.js';
import { buildOnce, startServer, stopChild, type RunningServer } from '../support/server.js';
import { seedWallets, targetEnv, verify, type Target } from '../support/setup.js';
import { benchEnv, describeMachine } from '../support/settings.js';
import { cpuFigures, cpuPerUnit, cpuSnapshot } from '../support/cpu.js';

/**
 * Webhook delivery as most operators run it (issue 27): one `serve` process on PostgreSQL with its
 * workers inside and default settings, one client, ONE subscription to INTERNAL_TRANSACTION_COMPLETED
 * pointing at a local receiver that answers 200 at once, and internal transfers made through the
 * HTTP API at a fixed rate (500/s by default: two events each, so 1,000 events/s) for 20 s.
 *
 * Lines printed:
 * - `webhooks-api`: the transfers and the deliveries both in the one `serve` process. Figures:
 *   offered (transfers answered 2xx per second, and events per second), delivered per second
 *   during the run, the share delivered by the end of the run, lag from the transfer's answer to
 *   the receipt of its event (p50, p99, max), and the drain: a backlog of events made while no
 *   worker ran (`serve --no-workers` under the same load), then delivered by one `worker`
 *   process, first to last receipt. Anchor: a bare Node sender posting the same number of signed
 *   bodies to the same receiver with the same concurrency, in its own process, measured the same
 *   way. ratio = drain / anchor (the target is 0.5 or more).
 * - `webhooks-api-worker`: the same load with `serve --no-workers` plus one separate `worker`.
 *
 * The load is open-loop: requests leave on a fixed schedule whatever the answers, so a slow
 * server shows as lag and a smaller delivered share, not as a lower offered rate.
 */

const transfersPerSecond = Number(process.env.BENCH_WEBHOOKS_API_RATE ?? 500);
const seconds = Number(process.env.BENCH_WEBHOOKS_API_SECONDS ?? 20);
/** How long after the load stops the run waits for the last deliveries. */
const settleS = Number(process.env.BENCH_WEBHOOKS_API_SETTLE_S ?? 30);
const walletCount = 200;
/** Concurrency of the anchor: the default WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION. */
const anchorConcurrency = loadConfig({ OPENBAAS_ENCRYPTION_KEY: '0'.repeat(64) }).webhookConcurrencyPerSubscription;

const percentile = (sorted: readonly number[], fraction: number) =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? Number.NaN);
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
const now = () => performance.timeOrigin + performance.now();

/** The receiver: answers 200 at once; notes the first receipt of each webhook-id, and the wallet transaction it is about. */
class Receiver {
  /** Receipt time by wallet transaction id (data.transactionId of the event). */
  readonly receivedByTransaction = new Map<string, number>();
  readonly webhookIds = new Set<string>();
  /** The first and last receipt of a new webhook-id since the last reset. */
  firstReceipt = Infinity;
  lastReceipt = 0;
  deliveries = 0;
  duplicates = 0;
  url = '';
  private server: http.Server | undefined;

  async start(): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const at = now();
        this.deliveries += 1;
        const id = String(request.headers['webhook-id'] ?? '');
        if (this.webhookIds.has(id)) this.duplicates += 1;
        else {
          this.webhookIds.add(id);
          this.firstReceipt = Math.min(this.firstReceipt, at);
          this.lastReceipt = Math.max(this.lastReceipt, at);
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { transactionId?: string } };
            if (body.data?.transactionId) this.receivedByTransaction.set(body.data.transactionId, at);
          } catch {
            // the anchor's bodies are about no transfer
          }
        }
        response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  reset(): void {
    this.receivedByTransaction.clear();
    this.webhookIds.clear();
    this.firstReceipt = Infinity;
    this.lastReceipt = 0;
    this.deliveries = 0;
    this.duplicates = 0;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

interface Offered {
  /** Answer time by wallet transaction id: both sides of each transfer. */
  answeredAt: Map<string, number>;
  transfers: number;
  failures: number;
  startedAt: number;
  endedAt: number;
}

/** Open-loop load: `rate` internal transfers per second for `durationS`, over keep-alive connections. */
async function offerTransfers(url: string, apiKey: string, wallets: readonly string[], rate: number, durationS: number): Promise<Offered> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const answeredAt = new Map<string, number>();
  let failures = 0;
  let transfers = 0;
  const inflight = new Set<Promise<void>>();
  const send = (index: number) =>
    new Promise<void>((resolve) => {
      const source = wallets[index % wallets.length] ?? '';
      const destination = wallets[(index + 1 + Math.floor(index / wallets.length)) % wallets.length] ?? '';
      const body = JSON.stringify({ sourceWalletId: source, destinationWalletId: destination === source ? wallets[(index + 2) % wallets.length] : destination, amount: '0.01', asset: 'USD' });
      const request = http.request(`${url}/v1/internal-transfer`, {
        method: 'POST',
        agent,
        headers: { authorization: apiKey, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const at = now();
          if (response.statusCode === 201) {
            transfers += 1;
            const data = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { source: { transactionId: string }; destination: { transactionId: string } } }).data;
            answeredAt.set(data.source.transactionId, at);
            answeredAt.set(data.destination.transactionId, at);
          } else failures += 1;
          resolve();
        });
      });
      request.on('error', () => {
        failures += 1;
        resolve();
      });
      request.end(body);
    });
  const startedAt = now();
  const total = Math.round(rate * durationS);
  // Every 10 ms, the requests whose time has come leave.
  for (let sent = 0; sent < total; ) {
    const due = Math.min(total, Math.floor(((now() - startedAt) / 1000) * rate));
    while (sent < due) {
      const request = send(sent++);
      inflight.add(request);
      void request.then(() => inflight.delete(request));
    }
    await sleep(10);
  }
  await Promise.all(inflight);
  const endedAt = now();
  agent.destroy();
  return { answeredAt, transfers, failures, startedAt, endedAt };
}

interface SteadyFigures {
  offered_transfers_per_s: number;
  offered_events_per_s: number;
  delivered_per_s: number;
  delivered_share_in_run: number;
  delivered_share_after_settle: number;
  lag_p50_ms: number;
  lag_p99_ms: number;
  lag_max_ms: number;
  duplicates: number;
  transfer_failures: number;
  /** CPU per event over the load and its settling (cpu_us: the machine; cpu_server_us: the serve process; idle_pct). */
  [cpu: string]: number;
}

/** Runs the load and waits for the deliveries; the figures of one steady run. */
async function steadyRun(server: RunningServer, apiKey: string, wallets: readonly string[], receiver: Receiver, rate = transfersPerSecond): Promise<SteadyFigures> {
  // Warm-up: a few seconds of the same load, not counted (the JIT compiles the paths meanwhile).
  receiver.reset();
  await offerTransfers(server.url, apiKey, wallets, rate, 3);
  const warmDeadline = now() + 60_000;
  while (receiver.webhookIds.size < 2 * Math.round(rate * 3) && now() < warmDeadline) await sleep(50);
  receiver.reset();

  const cpuBefore = cpuSnapshot(server.pid);
  const offered = await offerTransfers(server.url, apiKey, wallets, rate, seconds);
  const events = offered.answeredAt.size;
  const deliveredInRun = [...offered.answeredAt.keys()].filter((id) => (receiver.receivedByTransaction.get(id) ?? Infinity) <= offered.endedAt).length;
  const deadline = now() + settleS * 1000;
  while ([...offered.answeredAt.keys()].some((id) => !receiver.receivedByTransaction.has(id)) && now() < deadline) await sleep(100);
  const lags: number[] = [];
  let lastReceipt = 0;
  for (const [id, answered] of offered.answeredAt) {
    const received = receiver.receivedByTransaction.get(id);
    if (received === undefined) continue;
    lags.push(received - answered);
    lastReceipt = Math.max(lastReceipt, received);
  }
  const cpu = cpuPerUnit(cpuBefore, cpuSnapshot(server.pid), offered.answeredAt.size);
  lags.sort((a, b) => a - b);
  const durationS = (offered.endedAt - offered.startedAt) / 1000;
  return {
    offered_transfers_per_s: offered.transfers / durationS,
    offered_events_per_s: events / durationS,
    delivered_per_s: lags.length / ((lastReceipt - offered.startedAt) / 1000),
    delivered_share_in_run: deliveredInRun / events,
    delivered_share_after_settle: lags.length / events,
    lag_p50_ms: percentile(lags, 0.5),
    lag_p99_ms: percentile(lags, 0.99),
    lag_max_ms: lags[lags.length - 1] ?? Number.NaN,
    duplicates: receiver.duplicates,
    transfer_failures: offered.failures,
    ...cpuFigures(cpu),
  };
}

function startWorker(env: Record<string, string>): ChildProcess {
  // BENCH_NODE_ARGS reaches the worker's node too (a CPU profile, say), as it does the server's.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return spawn(process.execPath, [...nodeArgs, path.join(packageRoot, 'dist', 'cli.js'), 'worker'], {
    cwd: packageRoot,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The bare sender of bench/webhooks-anchor.ts: `count` signed posts to the receiver; first-to-last receipt rate. */
async function anchorRate(receiver: Receiver, secret: string, count: number): Promise<number> {
  receiver.reset();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(packageRoot, 'bench', 'webhooks-anchor.ts'), String(count), String(anchorConcurrency), secret, receiver.url], {
    cwd: packageRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  if (code !== 0) throw new Error(`the anchor sender exited with ${code}`);
  if (receiver.webhookIds.size !== count) throw new Error(`the anchor delivered ${receiver.webhookIds.size} of ${count}`);
  return (count - 1) / ((receiver.lastReceipt - receiver.firstReceipt) / 1000);
}

async function setUp(embeddedDir?: string): Promise<{ target: Target; apiKey: string; wallets: string[]; secret: string; receiver: Receiver }> {
  await buildOnce();
  const url = embeddedDir === undefined ? await recreateDatabase('openbaas_bench_webhooks_api') : undefined;
  const target: Target = url === undefined ? { dataDir: embeddedDir } : { databaseUrl: url };
  const seeded = await seedWallets(target, walletCount, 1_000_000_00n);
  // For experiments: SQL run on the bench database before the server starts (table settings, say).
  if (url !== undefined && process.env.BENCH_WEBHOOKS_API_SQL) await runSql(url, [process.env.BENCH_WEBHOOKS_API_SQL]);
  const receiver = new Receiver();
  await receiver.start();
  const deps = await openDeps(loadConfig({ ...targetEnv(target), LOG_LEVEL: 'silent' }, { runWorkers: false }));
  let secret: string;
  try {
    const created = await withTransaction(deps.db, (tx) =>
      createWebhook(tx, { clientId: seeded.clientId, traceId: 'bench', now: deps.clock.now() }, deps, {
        name: 'bench receiver',
        url: receiver.url,
        eventTypes: ['INTERNAL_TRANSACTION_COMPLETED'],
        active: true,
      }),
    );
    secret = created.secret;
  } finally {
    await deps.database.close();
  }
  return { target, apiKey: seeded.apiKey, wallets: seeded.wallets, secret, receiver };
}

async function runApi(): Promise<ScenarioResult> {
  const { target, apiKey, wallets, secret, receiver } = await setUp();
  const env = { ...benchEnv, ...targetEnv(target) };
  try {
    // 1. One serve process, its workers inside.
    const server = await startServer(env);
    let steady: SteadyFigures;
    try {
      steady = await steadyRun(server, apiKey, wallets, receiver);
    } finally {
      await server.stop();
    }

    // 2. The drain: the same load on `serve --no-workers` leaves a backlog; one worker delivers it.
    const quiet = await startServer(env, path.join('dist', 'cli.js'), ['serve', '--no-workers']);
    let backlog: Offered;
    let backlogCpu: ReturnType<typeof cpuPerUnit>;
    let drainCpu: ReturnType<typeof cpuPerUnit>;
    try {
      receiver.reset();
      const before = cpuSnapshot(quiet.pid);
      backlog = await offerTransfers(quiet.url, apiKey, wallets, transfersPerSecond, seconds);
      backlogCpu = cpuPerUnit(before, cpuSnapshot(quiet.pid), backlog.answeredAt.size);
    } finally {
      await quiet.stop();
    }
    receiver.reset();
    const worker = startWorker(env);
    const drainDeadline = now() + 300_000;
    const drainBefore = cpuSnapshot(worker.pid);
    try {
      while ([...backlog.answeredAt.keys()].some((id) => !receiver.receivedByTransaction.has(id)) && now() < drainDeadline) await sleep(100);
      drainCpu = cpuPerUnit(drainBefore, cpuSnapshot(worker.pid), backlog.answeredAt.size);
    } finally {
      await stopChild(worker);
    }
    const receipts = [...backlog.answeredAt.keys()].map((id) => receiver.receivedByTransaction.get(id)).filter((at): at is number => at !== undefined);
    if (receipts.length !== backlog.answeredAt.size) throw new Error(`the drain delivered ${receipts.length} of ${backlog.answeredAt.size}`);
    const drain = (receipts.length - 1) / ((Math.max(...receipts) - Math.min(...receipts)) / 1000);
    const anchor = await anchorRate(receiver, secret, receipts.length);

    const report = await verify(target);
    return {
      scenario: 'webhooks-api',
      ratio: drain / anchor,
      figures: {
        ...steady,
        drain_per_s: drain,
        anchor_per_s: anchor,
        backlog: receipts.length,
        // CPU per event of the two halves: transfers with no worker running, then the worker alone.
        ...cpuFigures(backlogCpu, 'transfers_only_'),
        transfers_only_cpu_postgres_us: backlogCpu?.postgresUs ?? Number.NaN,
        ...cpuFigures(drainCpu, 'drain_'),
        drain_cpu_postgres_us: drainCpu?.postgresUs ?? Number.NaN,
        verify: report.ok ? 'clean' : 'FAILED',
      },
      extra: {
        ...describeMachine(),
        database: 'PostgreSQL',
        processes: 'one serve (workers inside)',
        transfersPerSecond,
        seconds,
        anchorConcurrency,
        loadAverage: os.loadavg(),
        targetMet: steady.delivered_share_in_run >= 0.98 && steady.lag_p99_ms <= 250 && drain / anchor >= 0.5,
      },
    };
  } finally {
    await receiver.stop();
  }
}

async function runApiWithWorker(): Promise<ScenarioResult> {
  const { target, apiKey, wallets, receiver } = await setUp();
  const env = { ...benchEnv, ...targetEnv(target) };
  try {
    const server = await startServer(env, path.join('dist', 'cli.js'), ['serve', '--no-workers']);
    const worker = startWorker(env);
    let steady: SteadyFigures;
    try {
      steady = await steadyRun(server, apiKey, wallets, receiver);
    } finally {
      await stopChild(worker);
      await server.stop();
    }
    const report = await verify(target);
    return {
      scenario: 'webhooks-api-worker',
      ratio: steady.delivered_share_in_run,
      figures: { ...steady, verify: report.ok ? 'clean' : 'FAILED' },
      extra: { ...describeMachine(), database: 'PostgreSQL', processes: 'serve --no-workers + one worker', transfersPerSecond, seconds, loadAverage: os.loadavg() },
    };
  } finally {
    await receiver.stop();
  }
}

/** Internal transfers per second of the embedded scenario: 300 events/s (the target there). */
const embeddedTransfersPerSecond = Number(process.env.BENCH_WEBHOOKS_API_EMBEDDED_RATE ?? 150);

async function runApiEmbedded(): Promise<ScenarioResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-bench-webhooks-api-'));
  try {
    const { target, apiKey, wallets, receiver } = await setUp(path.join(root, 'data'));
    try {
      const server = await startServer({ ...benchEnv, ...targetEnv(target) });
      let steady: SteadyFigures;
      try {
        steady = await steadyRun(server, apiKey, wallets, receiver, embeddedTransfersPerSecond);
      } finally {
        await server.stop();
      }
      const report = await verify(target);
      return {
        scenario: 'webhooks-api-embedded',
        ratio: steady.delivered_share_in_run,
        figures: { ...steady, verify: report.ok ? 'clean' : 'FAILED' },
        extra: {
          ...describeMachine(),
          database: 'embedded (PGlite)',
          processes: 'one serve (workers inside)',
          transfersPerSecond: embeddedTransfersPerSecond,
          seconds,
          loadAverage: os.loadavg(),
          targetMet: steady.delivered_share_in_run >= 0.98 && steady.lag_p99_ms <= 500,
        },
      };
    } finally {
      await receiver.stop();
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export const webhooksApiEmbedded: Scenario = {
  name: 'webhooks-api-embedded',
  description: `one serve process on the embedded database: ${embeddedTransfersPerSecond} internal transfers/s over HTTP (two events each), one subscription; ratio: share delivered during the run`,
  run: runApiEmbedded,
};

export const webhooksApi: Scenario = {
  name: 'webhooks-api',
  description: `one serve process on PostgreSQL: ${transfersPerSecond} internal transfers/s over HTTP, one subscription, lag answer→receipt; drain of the backlog by one worker; anchor: bare Node sender`,
  run: runApi,
};

export const webhooksApiWorker: Scenario = {
  name: 'webhooks-api-worker',
  description: `the webhooks-api load with serve --no-workers plus one separate worker process; ratio: share delivered during the run`,
  run: runApiWithWorker,
};

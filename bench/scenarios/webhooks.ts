import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { packageRoot } from '../../src/paths.js';
import { systemClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import type { Deps } from '../../src/platform/deps.js';
import { clientSeeders } from '../../src/modules/routes.js';
import { createClient } from '../../src/modules/tenants/tenants.service.js';
import { recordEvent } from '../../src/modules/webhooks/events.store.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import type { Scenario, ScenarioResult } from '../lib.js';
import { stopChild } from '../support/server.js';

/**
 * Webhook delivery on PostgreSQL. Ten clients, each with one subscription served by its own
 * local receiver (all in this process); events are recorded round-robin across the clients, one
 * transaction each, at a steady rate (1,000/s by default) by a recorder process, while one
 * `openbaas worker` process delivers them.
 *
 * - rate, lag_p50_ms, lag_p99_ms: the steady phase; lag runs from the commit of the event's
 *   transaction to its receipt by the receiver. The target is keeping up with 1,000 events/s with
 *   p99 lag at most 250 ms.
 * - drain_rate: a backlog of events delivered by a worker that starts after they were recorded
 *   (deliveries per second, first to last receipt).
 * - anchor_rate: a bare Node sender, in its own process like the worker, posting the same kind of
 *   signed bodies to the same receivers with the same concurrency (10 per receiver) and
 *   keep-alive, without any database; measured the same way.
 * - ratio = drain_rate / anchor_rate: what the database-backed, crash-safe delivery costs against
 *   plain HTTP posting.
 */

const subscriptionCount = 10;
const concurrencyPerSubscription = 10;

function settings() {
  const number = (name: string, fallback: number) => {
    const raw = process.env[name];
    return raw && /^\d+$/.test(raw) ? Number(raw) : fallback;
  };
  return {
    serverUrl: (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, ''),
    databaseName: process.env.BENCH_WEBHOOKS_DATABASE ?? 'openbaas_bench_webhooks',
    ratePerSecond: number('BENCH_WEBHOOKS_RATE', 1000),
    seconds: number('BENCH_WEBHOOKS_SECONDS', 10),
    eventsPerTransaction: Math.max(1, number('BENCH_WEBHOOKS_EVENTS_PER_TRANSACTION', 1)),
    backlog: number('BENCH_WEBHOOKS_BACKLOG', 5000),
  };
}

/** Receivers that answer 200 at once and note when each webhook-id first arrived. */
class Receivers {
  readonly receivedAt = new Map<string, number>();
  total = 0;
  private readonly servers: http.Server[] = [];
  readonly urls: string[] = [];

  async start(count: number): Promise<void> {
    for (let index = 0; index < count; index++) {
      const server = http.createServer((request, response) => {
        request.resume();
        request.on('end', () => {
          const now = performance.timeOrigin + performance.now();
          const id = request.headers['webhook-id'];
          if (typeof id === 'string' && !this.receivedAt.has(id)) this.receivedAt.set(id, now);
          this.total += 1;
          response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        });
      });
      server.keepAliveTimeout = 30_000;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      this.servers.push(server);
      this.urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/${index}`);
    }
  }

  reset(): void {
    this.receivedAt.clear();
    this.total = 0;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.servers.map((server) => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      }),
    );
  }
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** One key for the whole run: the secrets are encrypted here and opened by the worker process. */
const encryptionKey = process.env.OPENBAAS_ENCRYPTION_KEY ?? crypto.randomBytes(32).toString('hex');

function startWorker(databaseUrl: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(packageRoot, 'src', 'cli.ts'), 'worker'], {
    cwd: packageRoot,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: String(concurrencyPerSubscription),
      DB_POOL_MAX: '10',
      // The key the subscriptions' secrets were encrypted with (run() creates them).
      OPENBAAS_ENCRYPTION_KEY: encryptionKey,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function prepareDatabase(serverUrl: string, databaseName: string): Promise<string> {
  const server = new pg.Client({ connectionString: `${serverUrl}/postgres` });
  await server.connect();
  try {
    const exists = await server.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName]);
    if (exists.rowCount === 0) await server.query(`CREATE DATABASE ${databaseName}`);
  } finally {
    await server.end();
  }
  const database = new pg.Client({ connectionString: `${serverUrl}/${databaseName}` });
  await database.connect();
  try {
    await database.query('DROP SCHEMA IF EXISTS bench CASCADE');
    await database.query('CREATE SCHEMA bench');
  } finally {
    await database.end();
  }
  return `${serverUrl}/${databaseName}?options=${encodeURIComponent('-c search_path=bench')}`;
}

async function recordOne(deps: Deps, clientId: string, index: number): Promise<string> {
  const event = await withTransaction(deps.db, (tx) =>
    recordEvent(tx, { clientId, traceId: `bench-${index}`, now: systemClock.now() }, 'CUSTOMER_CREATED', { customerId: `customer-${index}` }),
  );
  return event.id;
}

/** Runs the recorder process; returns commit times by event id and the rate it managed. */
async function recordSteadily(databaseUrl: string, clientIds: readonly string[], ratePerSecond: number, seconds: number, perTransaction: number) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(packageRoot, 'bench', 'webhooks-recorder.ts'),
      databaseUrl,
      String(ratePerSecond),
      String(seconds),
      String(perTransaction),
      ...clientIds,
    ],
    { cwd: packageRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  if (code !== 0) throw new Error(`the recorder exited with ${code}`);
  const committedAt = new Map<string, number>();
  let offeredRate = Number.NaN;
  for (const line of output.split('\n')) {
    const [first, second] = line.split(' ');
    if (!first || !second) continue;
    if (first === 'done') offeredRate = Number(second);
    else committedAt.set(first, Number(second));
  }
  return { committedAt, offeredRate };
}

/**
 * The anchor: the same kind of signed bodies posted by plain Node in a process of its own, with
 * the same concurrency per receiver; measured like the drain, first to last receipt.
 */
async function bareSender(urls: readonly string[], secret: string, count: number, receivers: Receivers): Promise<number> {
  receivers.reset();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(packageRoot, 'bench', 'webhooks-anchor.ts'), String(count), String(concurrencyPerSubscription), secret, ...urls],
    { cwd: packageRoot, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  if (code !== 0) throw new Error(`the anchor sender exited with ${code}`);
  if (receivers.receivedAt.size !== count) throw new Error(`the anchor delivered ${receivers.receivedAt.size} of ${count}`);
  const receipts = [...receivers.receivedAt.values()];
  return (count - 1) / ((Math.max(...receipts) - Math.min(...receipts)) / 1000);
}

async function run(): Promise<ScenarioResult> {
  const options = settings();
  const databaseUrl = await prepareDatabase(options.serverUrl, options.databaseName);
  const database: DatabaseHandle = await openDatabase({ databaseUrl, poolMax: 5, connectTimeoutMs: 30_000 });
  const receivers = new Receivers();
  let worker: ChildProcess | undefined;
  try {
    await migrate(database.pool);
    const deps: Deps = { config: loadConfig({ LOG_LEVEL: 'silent', OPENBAAS_ENCRYPTION_KEY: encryptionKey }), database, db: database.db, clock: systemClock, clientSeeders };
    await receivers.start(subscriptionCount);
    const clientIds: string[] = [];
    let secret = '';
    for (let index = 0; index < subscriptionCount; index++) {
      const client = await createClient(deps, `Bench client ${index}`);
      const created = await withTransaction(deps.db, (tx) =>
        createWebhook(tx, { clientId: client.id, traceId: 'bench', now: systemClock.now() }, deps, {
          name: `bench ${index}`,
          url: receivers.urls[index] ?? '',
          eventTypes: ['CUSTOMER_CREATED'],
          active: true,
        }),
      );
      secret = created.secret;
      clientIds.push(client.id);
    }

    // Steady phase.
    worker = startWorker(databaseUrl);
    await sleep(3000); // let the worker start (tsx compiles on first load)
    const warmupIds = await Promise.all(clientIds.map((clientId, index) => recordOne(deps, clientId, -1 - index)));
    await waitFor(() => warmupIds.every((id) => receivers.receivedAt.has(id)), 60_000, 'the worker to deliver the warm-up events');
    receivers.reset();
    const steady = await recordSteadily(databaseUrl, clientIds, options.ratePerSecond, options.seconds, options.eventsPerTransaction);
    const steadyCount = steady.committedAt.size;
    await waitFor(() => [...steady.committedAt.keys()].every((id) => receivers.receivedAt.has(id)), 120_000, 'steady-phase deliveries');
    const lags: number[] = [];
    let firstCommit = Number.POSITIVE_INFINITY;
    let lastReceipt = 0;
    for (const [id, committed] of steady.committedAt) {
      const received = receivers.receivedAt.get(id) ?? Number.NaN;
      lags.push(received - committed);
      firstCommit = Math.min(firstCommit, committed);
      lastReceipt = Math.max(lastReceipt, received);
    }
    lags.sort((a, b) => a - b);
    const rate = steadyCount / ((lastReceipt - firstCommit) / 1000);

    // Drain phase: a backlog recorded while no worker runs, then delivered as fast as possible.
    await stopChild(worker);
    worker = undefined;
    receivers.reset();
    const backlogIds: string[] = [];
    for (let start = 0; start < options.backlog; start += 100) {
      const ids = await withTransaction(deps.db, async (tx) => {
        const recorded: string[] = [];
        for (let index = start; index < Math.min(options.backlog, start + 100); index++) {
          const clientId = clientIds[index % clientIds.length] ?? '';
          const event = await recordEvent(tx, { clientId, traceId: `backlog-${index}`, now: systemClock.now() }, 'CUSTOMER_CREATED', { customerId: `b-${index}` });
          recorded.push(event.id);
        }
        return recorded;
      });
      backlogIds.push(...ids);
    }
    worker = startWorker(databaseUrl);
    await waitFor(() => backlogIds.every((id) => receivers.receivedAt.has(id)), 300_000, 'the backlog to drain');
    const receipts = backlogIds.map((id) => receivers.receivedAt.get(id) ?? Number.NaN);
    const drainRate = (backlogIds.length - 1) / ((Math.max(...receipts) - Math.min(...receipts)) / 1000);
    await stopChild(worker);
    worker = undefined;

    // Anchor.
    const anchorRate = await bareSender(receivers.urls, secret, options.backlog, receivers);

    return {
      scenario: 'webhooks',
      ratio: drainRate / anchorRate,
      figures: {
        rate,
        lag_p50_ms: percentile(lags, 0.5),
        lag_p99_ms: percentile(lags, 0.99),
        lag_max_ms: lags[lags.length - 1] ?? Number.NaN,
        offered_rate: steady.offeredRate,
        drain_rate: drainRate,
        anchor_rate: anchorRate,
      },
      extra: {
        database: 'PostgreSQL',
        subscriptions: subscriptionCount,
        concurrencyPerSubscription,
        steadyEvents: steadyCount,
        backlogEvents: backlogIds.length,
        workerProcesses: 1,
        targetRatePerSecond: options.ratePerSecond,
        eventsPerTransaction: options.eventsPerTransaction,
        loadAverage: os.loadavg(),
        targetMet: rate >= options.ratePerSecond * 0.95 && percentile(lags, 0.99) <= 250,
        cpus: os.cpus().length,
        node: process.version,
      },
    };
  } finally {
    if (worker) await stopChild(worker);
    await receivers.stop();
    await database.close();
  }
}

export const webhooksScenario: Scenario = {
  name: 'webhooks',
  description: 'webhook delivery from PostgreSQL: 1,000 events/s into 10 subscriptions, lag commit→receipt; anchor: bare Node sender',
  run,
};

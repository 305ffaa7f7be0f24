import crypto from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import type { Scenario, ScenarioResult } from '../lib.js';
import { combineCpu, cpuFigures, cpuPerUnit, cpuSnapshot, type CpuPerUnit } from '../support/cpu.js';
import { checkpoint, recreateDatabase, runPgbench } from '../support/postgres.js';
import { buildOnce, startServer } from '../support/server.js';
import { seedWallets, targetEnv, verify } from '../support/setup.js';
import { benchEnv, describeMachine, durationS, roundsDefault, warmupDefaultS } from '../support/settings.js';
import { connections, createAnchorTables, transferAnchorScript, walletCount } from './transfers.js';

/** The target: two requests and three postings per trade against one pgbench transaction. */
const targetRatio = 0.4;
/** Each trade buys BTC with this much USD (fee in USD); every wallet holds 1,000,000.00 USD. */
const tradeAmount = '10.00';

interface TradeLoad {
  trades: number;
  seconds: number;
  failures: Record<string, number>;
  latenciesMs: number[];
  cpu: CpuPerUnit | undefined;
}

function post(agent: http.Agent, url: URL, path: string, apiKey: string, body: unknown): Promise<{ status: number; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path,
        headers: { authorization: apiKey, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'idempotency-key': crypto.randomUUID() },
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

/**
 * Closed loop: each of `connections` workers quotes a trade for a random funded wallet's customer
 * and executes it at once, then starts the next. A trade counts when its execution answered 201
 * with `success: true`; anything else is recorded as a failure (and fails the run).
 */
async function runTradeLoad(serverUrl: string, apiKey: string, holders: { customerId: string; walletId: string }[], seconds: number, serverPid: number): Promise<TradeLoad> {
  const url = new URL(serverUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const failures: Record<string, number> = {};
  const latenciesMs: number[] = [];
  let trades = 0;
  const fail = (what: string) => (failures[what] = (failures[what] ?? 0) + 1);
  const before = cpuSnapshot(serverPid);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const holder = holders[crypto.randomInt(holders.length)];
      if (!holder) continue;
      const tradeStarted = performance.now();
      const quote = await post(agent, url, '/v1/trades/quotes', apiKey, {
        customerId: holder.customerId,
        fromAssetId: 'USD',
        toAssetId: 'BTC',
        fromAmount: tradeAmount,
        feeAssetId: 'USD',
        side: 'buy',
        direction: 'reverse',
      });
      if (quote.status !== 201) {
        fail(`quote ${quote.status}`);
        continue;
      }
      const quoteId = (JSON.parse(quote.body) as { data: { quoteId: string } }).data.quoteId;
      const executed = await post(agent, url, `/v1/trades/quotes/${quoteId}/execute`, apiKey, { walletId: holder.walletId });
      if (executed.status !== 201 || !(JSON.parse(executed.body) as { data: { success: boolean } }).data.success) {
        fail(`execute ${executed.status}`);
        continue;
      }
      trades++;
      latenciesMs.push(performance.now() - tradeStarted);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsedS = (performance.now() - started) / 1000;
  agent.destroy();
  return { trades, seconds: elapsedS, failures, latenciesMs, cpu: cpuPerUnit(before, cpuSnapshot(serverPid), trades) };
}

function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN;
}

/** Each wallet's customer, read from the seeded database (a quote names the customer, the execution the wallet). */
async function holdersOf(databaseUrl: string, wallets: readonly string[]): Promise<{ customerId: string; walletId: string }[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ id: string; customer_id: string }>('SELECT id, customer_id FROM wallets WHERE id = ANY($1::uuid[])', [wallets]);
    return result.rows.map((row) => ({ customerId: row.customer_id, walletId: row.id }));
  } finally {
    await client.end();
  }
}

async function runTrades(): Promise<ScenarioResult> {
  await buildOnce();
  const url = await recreateDatabase();
  await createAnchorTables(url);
  const target = { databaseUrl: url };
  const seeded = await seedWallets(target, walletCount, 1_000_000_00n);
  const holders = await holdersOf(url, seeded.wallets);
  const server = await startServer({ ...benchEnv, ...targetEnv(target) });
  const rounds: { ours: number; anchor: number }[] = [];
  const loads: TradeLoad[] = [];
  const anchorRuns: { cpu: CpuPerUnit | undefined; units: number; seconds: number }[] = [];
  let anchorCommand = '';
  let peakRssMiB: number;
  try {
    if (warmupDefaultS > 0) {
      const warmup = await runTradeLoad(server.url, seeded.apiKey, holders, warmupDefaultS, server.pid);
      if (Object.keys(warmup.failures).length > 0) throw new Error(`failures during the warm-up: ${JSON.stringify(warmup.failures)}`);
    }
    for (let round = 0; round < Math.max(1, roundsDefault); round++) {
      await checkpoint(url);
      const anchor = await runPgbench(url, transferAnchorScript, connections, durationS);
      anchorCommand = anchor.command;
      anchorRuns.push({ cpu: anchor.cpu, units: anchor.transactions, seconds: durationS });
      await checkpoint(url);
      const load = await runTradeLoad(server.url, seeded.apiKey, holders, durationS, server.pid);
      loads.push(load);
      rounds.push({ ours: load.trades / load.seconds, anchor: anchor.tps });
    }
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nserver log (last lines):\n${server.logTail().split('\n').slice(-20).join('\n')}`, { cause: error });
  } finally {
    peakRssMiB = server.peakRssMiB();
    await server.stop();
  }
  const report = await verify(target);
  if (!report.ok) throw new Error(`ledger verify failed after the run: ${JSON.stringify(report.checks.filter((check) => check.violationCount > 0))}`);
  const failures: Record<string, number> = {};
  for (const load of loads) for (const [what, count] of Object.entries(load.failures)) failures[what] = (failures[what] ?? 0) + count;
  if (Object.keys(failures).length > 0) throw new Error(`unexpected responses: ${JSON.stringify(failures)}`);

  const trades = loads.reduce((sum, load) => sum + load.trades, 0);
  const seconds = loads.reduce((sum, load) => sum + load.seconds, 0);
  const ours = trades / seconds;
  const anchor = rounds.reduce((sum, round) => sum + round.anchor, 0) / rounds.length;
  const latencies = loads.flatMap((load) => load.latenciesMs).sort((a, b) => a - b);
  return {
    scenario: 'trades',
    ratio: ours / anchor,
    figures: {
      value: ours,
      anchor,
      requests_per_s: 2 * ours,
      p50_ms: percentile(latencies, 0.5),
      p99_ms: percentile(latencies, 0.99),
      ...cpuFigures(combineCpu(anchorRuns), 'anchor_'),
      ...cpuFigures(combineCpu(loads.map((load) => ({ cpu: load.cpu, units: load.trades, seconds: load.seconds })))),
      round_ratios: rounds.map((round) => (round.ours / round.anchor).toFixed(3)).join('/'),
      peak_rss_mib: peakRssMiB,
      trades,
      target: targetRatio,
      verify: report.ok ? 'clean' : 'FAILED',
    },
    extra: { machine: describeMachine(), anchorCommand, anchorScript: transferAnchorScript, connections, durationS, rounds, walletCount, tradeAmount, ledgerTotals: report.totals },
  };
}

export const trades: Scenario = {
  name: 'trades',
  description: `POST /v1/trades/quotes then POST /v1/trades/quotes/:id/execute (${tradeAmount} USD → BTC, each with an Idempotency-Key) for random wallets among ${walletCount} funded ones, ${connections} connections, PostgreSQL; anchor: the transfers scenario's pgbench script, ${connections} clients, measured in turn`,
  run: runTrades,
};

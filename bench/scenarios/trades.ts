import crypto from 'node:crypto';
import pg from 'pg';
import type { Scenario, ScenarioResult } from '../lib.js';
import { anchoredRounds, closedLoop, type Load } from '../support/http-rounds.js';
import { recreateDatabase } from '../support/postgres.js';
import { buildOnce, startServer } from '../support/server.js';
import { seedWallets, targetEnv } from '../support/setup.js';
import { benchEnv, describeMachine, durationS } from '../support/settings.js';
import { connections, createAnchorTables, transferAnchorScript, walletCount } from './transfers.js';

/** The target: two requests and three postings per trade against one pgbench transaction. */
const targetRatio = 0.4;
/** Each trade buys BTC with this much USD (fee in USD); every wallet holds 1,000,000.00 USD. */
const tradeAmount = '10.00';

/** What one turn keeps between its quote and its execution. */
interface TradeTurn {
  walletId: string;
  quoteId: string;
  startedAt: number;
}

/**
 * Closed loop: each turn of each of `connections` connections quotes a trade for a random funded
 * wallet's customer and executes it at once. A trade counts when its execution answered 201 with
 * `success: true`, its latency from the quote's sending; anything else is recorded as a failure
 * (and fails the run).
 */
function runTradeLoad(serverUrl: string, apiKey: string, holders: { customerId: string; walletId: string }[], seconds: number, serverPid: number): Promise<Load> {
  return closedLoop<TradeTurn>(serverUrl, apiKey, connections, seconds, serverPid, [
    {
      send: (turn) => {
        const holder = holders[crypto.randomInt(holders.length)];
        if (!holder) throw new Error('no wallets to trade from');
        turn.walletId = holder.walletId;
        turn.startedAt = performance.now();
        return {
          path: '/v1/trades/quotes',
          body: { customerId: holder.customerId, fromAssetId: 'USD', toAssetId: 'BTC', fromAmount: tradeAmount, feeAssetId: 'USD', side: 'buy', direction: 'reverse' },
          headers: { 'idempotency-key': crypto.randomUUID() },
        };
      },
      read: (status, body, turn, tally) => {
        if (status !== 201) {
          tally.fail(`quote ${status}`);
          return false;
        }
        turn.quoteId = (JSON.parse(body) as { data: { quoteId: string } }).data.quoteId;
        return true;
      },
    },
    {
      send: (turn) => ({ path: `/v1/trades/quotes/${turn.quoteId ?? ''}/execute`, body: { walletId: turn.walletId }, headers: { 'idempotency-key': crypto.randomUUID() } }),
      read: (status, body, turn, tally) => {
        if (status !== 201 || !(JSON.parse(body) as { data: { success: boolean } }).data.success) {
          tally.fail(`execute ${status}`);
          return false;
        }
        tally.done(performance.now() - (turn.startedAt ?? Number.NaN));
        return true;
      },
    },
  ]);
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
  const measured = await anchoredRounds({
    target,
    url,
    server,
    anchorScript: transferAnchorScript,
    connections,
    load: (seconds) => runTradeLoad(server.url, seeded.apiKey, holders, seconds, server.pid),
  });
  return {
    scenario: 'trades',
    ratio: measured.ratio,
    figures: { ...measured.figures, requests_per_s: 2 * measured.ours, trades: measured.figures.units ?? 0, target: targetRatio },
    extra: { machine: describeMachine(), anchorCommand: measured.anchorCommand, anchorScript: transferAnchorScript, connections, durationS, rounds: measured.rounds, walletCount, tradeAmount, ledgerTotals: measured.ledgerTotals },
  };
}

export const trades: Scenario = {
  name: 'trades',
  description: `POST /v1/trades/quotes then POST /v1/trades/quotes/:id/execute (${tradeAmount} USD → BTC, each with an Idempotency-Key) for random wallets among ${walletCount} funded ones, ${connections} connections, PostgreSQL; anchor: the transfers scenario's pgbench script, ${connections} clients, measured in turn`,
  run: runTrades,
};

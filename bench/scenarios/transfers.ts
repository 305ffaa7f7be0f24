import crypto from 'node:crypto';
import type { Scenario, ScenarioResult } from '../lib.js';
import { checkpoint, recreateDatabase, runPgbench, runSql } from '../support/postgres.js';
import { buildOnce } from '../support/server.js';
import { describeMachine, durationS } from '../support/settings.js';
import { cpuFigures } from '../support/cpu.js';
import { measureTransferLoad, roundFigures, transferFigures } from '../support/transfer-load.js';

export const walletCount = 10_000;
export const connections = 32;
const anchorRows = 1_000_000;
/** The memory limit for the server during this scenario on PostgreSQL. */
const peakRssLimitMiB = 400;

/** pgbench's side: two UPDATEs and one INSERT per transaction on a 1,000,000-row table. */
export const transferAnchorScript = `\\set a random(1, ${anchorRows})
\\set b random(1, ${anchorRows})
BEGIN;
UPDATE anchor_accounts SET balance = balance - 1 WHERE id = :a;
UPDATE anchor_accounts SET balance = balance + 1 WHERE id = :b;
INSERT INTO anchor_history (from_id, to_id, amount) VALUES (:a, :b, 1);
END;
`;

export async function createAnchorTables(url: string): Promise<void> {
  await runSql(url, [
    'CREATE TABLE anchor_accounts (id int PRIMARY KEY, balance bigint NOT NULL)',
    `INSERT INTO anchor_accounts SELECT g, 1000000 FROM generate_series(1, ${anchorRows}) g`,
    'CREATE TABLE anchor_history (id bigserial PRIMARY KEY, from_id int NOT NULL, to_id int NOT NULL, amount bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
    'VACUUM ANALYZE anchor_accounts',
  ]);
}

/** Random distinct pairs among the wallets (or every transfer into one wallet, for the hot-account scenario). */
export function transferRequests(wallets: string[], hotWallet?: string) {
  return () => {
    const source = wallets[crypto.randomInt(wallets.length)] ?? '';
    let destination = hotWallet ?? wallets[crypto.randomInt(wallets.length)] ?? '';
    while (destination === source) destination = wallets[crypto.randomInt(wallets.length)] ?? '';
    return {
      method: 'POST' as const,
      path: '/internal-transfer',
      body: JSON.stringify({ sourceWalletId: source, destinationWalletId: destination, amount: '0.01', asset: 'USD' }),
      headers: { 'idempotency-key': crypto.randomUUID() },
    };
  };
}

/**
 * The two pgbench-anchored ledger scenarios: seed, then measure the anchor script and our
 * transfers in turn (BENCH_ROUNDS rounds, a checkpoint before each run), and report the ratio of
 * the totals with each round's own ratio beside it.
 */
export async function measureAgainstPgbench(scenario: string, anchorScript: string, options: { hot: boolean; peakRssLimitMiB?: number }): Promise<ScenarioResult> {
  await buildOnce();
  const url = await recreateDatabase();
  await createAnchorTables(url);
  let anchorCommand = '';
  const measured = await measureTransferLoad(
    { databaseUrl: url },
    {
      connections,
      walletCount,
      hot: options.hot,
      beforeEach: () => checkpoint(url),
      anchor: async () => {
        const run = await runPgbench(url, anchorScript, connections, durationS);
        anchorCommand = run.command;
        return { perSecond: run.tps, units: run.transactions, seconds: durationS, cpu: run.cpu };
      },
    },
  );
  if (options.peakRssLimitMiB !== undefined && measured.peakRssMiB > options.peakRssLimitMiB) {
    throw new Error(`the server's peak resident memory was ${measured.peakRssMiB.toFixed(0)} MiB, over the ${options.peakRssLimitMiB} MiB limit`);
  }
  const anchor = measured.anchor;
  if (!anchor) throw new Error('the anchor did not run');
  return {
    scenario,
    ratio: measured.load.okPerSecond / anchor.perSecond,
    figures: { ...transferFigures(measured, anchor.perSecond, cpuFigures(anchor.cpu, 'anchor_')), ...roundFigures(measured) },
    extra: {
      machine: describeMachine(),
      anchorCommand,
      anchorScript,
      connections,
      durationS,
      rounds: measured.rounds,
      walletCount,
      statusCounts: measured.load.statusCounts,
      ledgerTotals: measured.report.totals,
    },
  };
}

export const transfers: Scenario = {
  name: 'transfers',
  description: `POST /internal-transfer with an Idempotency-Key, random pairs among ${walletCount} funded wallets, ${connections} connections, PostgreSQL; anchor: pgbench 2 UPDATEs + 1 INSERT on ${anchorRows} rows, ${connections} clients; measured in turn`,
  run: () => measureAgainstPgbench('transfers', transferAnchorScript, { hot: false, peakRssLimitMiB }),
};

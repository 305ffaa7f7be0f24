import crypto from 'node:crypto';
import type { Scenario, ScenarioResult } from '../lib.js';
import { runLoad } from '../support/load.js';
import { checkpoint, recreateDatabase, runPgbench, runSql } from '../support/postgres.js';
import { buildOnce, startServer } from '../support/server.js';
import { seedWallets, targetEnv, verify } from '../support/setup.js';
import { benchEnv, describeMachine, durationS } from '../support/settings.js';

const walletCount = 10_000;
const connections = 32;
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

export const transfers: Scenario = {
  name: 'transfers',
  description: `POST /internal-transfer with an Idempotency-Key, random pairs among ${walletCount} funded wallets, ${connections} connections, PostgreSQL; anchor: pgbench 2 UPDATEs + 1 INSERT on ${anchorRows} rows, ${connections} clients`,
  async run(): Promise<ScenarioResult> {
    await buildOnce();
    const url = await recreateDatabase();
    await createAnchorTables(url);
    await checkpoint(url);
    const anchor = await runPgbench(url, transferAnchorScript, connections, durationS);

    const target = { databaseUrl: url };
    const seeded = await seedWallets(target, walletCount, 1_000_000_00n);
    await checkpoint(url);
    const server = await startServer({ ...benchEnv, ...targetEnv(target) });
    let load;
    try {
      load = await runLoad({ url: server.url, connections, durationS, headers: { authorization: seeded.apiKey }, next: transferRequests(seeded.wallets) });
    } finally {
      await server.stop();
    }
    const report = await verify(target);
    if (!report.ok) throw new Error(`ledger verify failed after the run: ${JSON.stringify(report.checks.filter((check) => check.violationCount > 0))}`);
    if (load.non2xx > 0 || load.errors > 0) throw new Error(`unexpected responses: ${JSON.stringify(load.statusCounts)}, errors ${load.errors}`);
    const peakRssMiB = server.peakRssMiB();
    if (peakRssMiB > peakRssLimitMiB) throw new Error(`the server's peak resident memory was ${peakRssMiB.toFixed(0)} MiB, over the ${peakRssLimitMiB} MiB limit`);
    return {
      scenario: 'transfers',
      ratio: load.okPerSecond / anchor.tps,
      figures: {
        value: load.okPerSecond,
        anchor: anchor.tps,
        p50_ms: load.p50Ms,
        p99_ms: load.p99Ms,
        peak_rss_mib: peakRssMiB,
        transfers: load.ok,
        non_2xx: load.non2xx,
        verify: report.ok ? 'clean' : 'FAILED',
      },
      extra: { machine: describeMachine(), anchorCommand: anchor.command, anchorScript: transferAnchorScript, connections, durationS, walletCount, statusCounts: load.statusCounts, ledgerTotals: report.totals },
    };
  },
};

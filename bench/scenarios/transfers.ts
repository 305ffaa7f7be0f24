import crypto from 'node:crypto';
import type { Scenario, ScenarioResult } from '../lib.js';
import { checkpoint, recreateDatabase, runPgbench, runSql } from '../support/postgres.js';
import { buildOnce } from '../support/server.js';
import { describeMachine, durationS } from '../support/settings.js';
import { cpuFigures } from '../support/cpu.js';
import { measureTransferLoad, transferFigures } from '../support/transfer-load.js';

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
    const measured = await measureTransferLoad(target, { connections, walletCount, beforeStart: () => checkpoint(url) });
    if (measured.peakRssMiB > peakRssLimitMiB) {
      throw new Error(`the server's peak resident memory was ${measured.peakRssMiB.toFixed(0)} MiB, over the ${peakRssLimitMiB} MiB limit`);
    }
    return {
      scenario: 'transfers',
      ratio: measured.load.okPerSecond / anchor.tps,
      figures: transferFigures(measured, anchor.tps, cpuFigures(anchor.cpu, 'anchor_')),
      extra: {
        machine: describeMachine(),
        anchorCommand: anchor.command,
        anchorScript: transferAnchorScript,
        connections,
        durationS,
        walletCount,
        statusCounts: measured.load.statusCounts,
        ledgerTotals: measured.report.totals,
      },
    };
  },
};

import type { Scenario, ScenarioResult } from '../lib.js';
import { runLoad } from '../support/load.js';
import { checkpoint, recreateDatabase, runPgbench } from '../support/postgres.js';
import { buildOnce, startServer } from '../support/server.js';
import { seedWallets, targetEnv, verify } from '../support/setup.js';
import { benchEnv, describeMachine, durationS } from '../support/settings.js';
import { createAnchorTables, transferRequests } from './transfers.js';

const walletCount = 10_000;
const connections = 32;

/** pgbench's side: every transaction updates the same row and inserts one row. */
export const hotAnchorScript = `\\set a random(2, 1000000)
BEGIN;
UPDATE anchor_accounts SET balance = balance + 1 WHERE id = 1;
INSERT INTO anchor_history (from_id, to_id, amount) VALUES (:a, 1, 1);
END;
`;

export const hotAccount: Scenario = {
  name: 'hot-account',
  description: `POST /internal-transfer where every transfer credits the same wallet, sources random among ${walletCount}, ${connections} connections, PostgreSQL; anchor: pgbench updating one hot row + 1 INSERT, ${connections} clients`,
  async run(): Promise<ScenarioResult> {
    await buildOnce();
    const url = await recreateDatabase();
    await createAnchorTables(url);
    await checkpoint(url);
    const anchor = await runPgbench(url, hotAnchorScript, connections, durationS);

    const target = { databaseUrl: url };
    const seeded = await seedWallets(target, walletCount, 1_000_000_00n);
    const hotWallet = seeded.wallets[0] ?? '';
    await checkpoint(url);
    const server = await startServer({ ...benchEnv, ...targetEnv(target) });
    let load;
    try {
      load = await runLoad({ url: server.url, connections, durationS, headers: { authorization: seeded.apiKey }, next: transferRequests(seeded.wallets, hotWallet) });
    } finally {
      await server.stop();
    }
    const report = await verify(target);
    if (!report.ok) throw new Error(`ledger verify failed after the run: ${JSON.stringify(report.checks.filter((check) => check.violationCount > 0))}`);
    if (load.non2xx > 0 || load.errors > 0) throw new Error(`unexpected responses: ${JSON.stringify(load.statusCounts)}, errors ${load.errors}`);
    return {
      scenario: 'hot-account',
      ratio: load.okPerSecond / anchor.tps,
      figures: {
        value: load.okPerSecond,
        anchor: anchor.tps,
        p50_ms: load.p50Ms,
        p99_ms: load.p99Ms,
        peak_rss_mib: server.peakRssMiB(),
        transfers: load.ok,
        non_2xx: load.non2xx,
        verify: report.ok ? 'clean' : 'FAILED',
      },
      extra: { machine: describeMachine(), anchorCommand: anchor.command, anchorScript: hotAnchorScript, connections, durationS, walletCount, statusCounts: load.statusCounts, ledgerTotals: report.totals },
    };
  },
};

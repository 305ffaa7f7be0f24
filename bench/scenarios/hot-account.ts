import type { Scenario, ScenarioResult } from '../lib.js';
import { checkpoint, recreateDatabase, runPgbench } from '../support/postgres.js';
import { buildOnce } from '../support/server.js';
import { describeMachine, durationS } from '../support/settings.js';
import { cpuFigures } from '../support/cpu.js';
import { measureTransferLoad, transferFigures } from '../support/transfer-load.js';
import { createAnchorTables } from './transfers.js';

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
    const measured = await measureTransferLoad(target, { connections, walletCount, hot: true, beforeStart: () => checkpoint(url) });
    return {
      scenario: 'hot-account',
      ratio: measured.load.okPerSecond / anchor.tps,
      figures: transferFigures(measured, anchor.tps, cpuFigures(anchor.cpu, 'anchor_')),
      extra: {
        machine: describeMachine(),
        anchorCommand: anchor.command,
        anchorScript: hotAnchorScript,
        connections,
        durationS,
        walletCount,
        statusCounts: measured.load.statusCounts,
        ledgerTotals: measured.report.totals,
      },
    };
  },
};

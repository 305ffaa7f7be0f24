import crypto from 'node:crypto';
import path from 'node:path';
import type { Scenario, ScenarioResult } from '../lib.js';
import { cpuFigures } from '../support/cpu.js';
import { runLoad } from '../support/load.js';
import { recreateDatabase } from '../support/postgres.js';
import { buildOnce, startServer } from '../support/server.js';
import { seedWallets, targetEnv, verify } from '../support/setup.js';
import { benchEnv, describeMachine, durationS } from '../support/settings.js';

const walletCount = 10_000;
const connections = 50;

export const balance: Scenario = {
  name: 'balance',
  description: `GET /v1/wallets/:id/balance on random wallets among ${walletCount}, ${connections} connections, PostgreSQL; anchor: a bare Fastify hello-world, same load`,
  async run(): Promise<ScenarioResult> {
    await buildOnce();
    const hello = await startServer({}, path.join('bench', 'support', 'hello-server.ts'), []);
    let anchor;
    try {
      anchor = await runLoad({ url: hello.url, connections, durationS, next: () => ({ method: 'GET', path: '/' }), serverPid: hello.pid });
    } finally {
      await hello.stop();
    }

    const url = await recreateDatabase();
    const target = { databaseUrl: url };
    const seeded = await seedWallets(target, walletCount, 1_000_00n);
    const server = await startServer({ ...benchEnv, ...targetEnv(target) });
    let load;
    try {
      load = await runLoad({
        url: server.url,
        connections,
        durationS,
        headers: { authorization: seeded.apiKey },
        next: () => ({ method: 'GET', path: `/v1/wallets/${seeded.wallets[crypto.randomInt(seeded.wallets.length)] ?? ''}/balance` }),
        serverPid: server.pid,
      });
    } finally {
      await server.stop();
    }
    const report = await verify(target);
    if (!report.ok) throw new Error('ledger verify failed after the run');
    if (load.non2xx > 0 || load.errors > 0) throw new Error(`unexpected responses: ${JSON.stringify(load.statusCounts)}, errors ${load.errors}`);
    return {
      scenario: 'balance',
      ratio: load.okPerSecond / anchor.okPerSecond,
      figures: {
        value: load.okPerSecond,
        anchor: anchor.okPerSecond,
        p50_ms: load.p50Ms,
        p99_ms: load.p99Ms,
        anchor_p99_ms: anchor.p99Ms,
        ...cpuFigures(load.cpu),
        ...cpuFigures(anchor.cpu, 'anchor_'),
        peak_rss_mib: server.peakRssMiB(),
        non_2xx: load.non2xx,
        verify: report.ok ? 'clean' : 'FAILED',
      },
      extra: { machine: describeMachine(), connections, durationS, walletCount, statusCounts: load.statusCounts },
    };
  },
};

import { cpuFigures } from './cpu.js';
import type { LoadResult } from './load.js';
import { runLoad } from './load.js';
import { startServer } from './server.js';
import { seedWallets, targetEnv, verify, type Target } from './setup.js';
import { benchEnv, durationS } from './settings.js';
import { transferRequests } from '../scenarios/transfers.js';

export interface TransferLoadOptions {
  connections: number;
  walletCount: number;
  /** Every transfer credits the first wallet (the hot-account scenario). */
  hot?: boolean;
  /** Runs after seeding, right before the server starts (the PostgreSQL scenarios checkpoint here). */
  beforeStart?: () => Promise<void>;
}

export interface TransferLoad {
  load: LoadResult;
  peakRssMiB: number;
  report: Awaited<ReturnType<typeof verify>>;
}

/**
 * The ledger scenarios' own side: seed funded wallets, start the server on them, run the
 * internal-transfer load, stop the server, and fail unless `ledger verify` is clean and every
 * response was a 2xx.
 */
export async function measureTransferLoad(target: Target, options: TransferLoadOptions): Promise<TransferLoad> {
  const seeded = await seedWallets(target, options.walletCount, 1_000_000_00n);
  await options.beforeStart?.();
  const server = await startServer({ ...benchEnv, ...targetEnv(target) });
  let load: LoadResult;
  try {
    load = await runLoad({
      url: server.url,
      connections: options.connections,
      durationS,
      headers: { authorization: seeded.apiKey },
      next: transferRequests(seeded.wallets, options.hot ? seeded.wallets[0] : undefined),
      serverPid: server.pid,
    });
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nserver log (last lines):\n${server.logTail().split('\n').slice(-20).join('\n')}`, { cause: error });
  } finally {
    await server.stop();
  }
  const report = await verify(target);
  if (!report.ok) throw new Error(`ledger verify failed after the run: ${JSON.stringify(report.checks.filter((check) => check.violationCount > 0))}`);
  if (load.non2xx > 0 || load.errors > 0) {
    throw new Error(`unexpected responses: ${JSON.stringify(load.statusCounts)}, errors ${load.errors}\nserver log (last lines):\n${server.logTail().split('\n').slice(-20).join('\n')}`);
  }
  return { load, peakRssMiB: server.peakRssMiB(), report };
}

/** The figures every ledger scenario prints after its ratio, in order. */
export function transferFigures(measured: TransferLoad, anchor: number, extra: Record<string, number> = {}): Record<string, number | string> {
  return {
    value: measured.load.okPerSecond,
    anchor,
    p50_ms: measured.load.p50Ms,
    p99_ms: measured.load.p99Ms,
    ...extra,
    ...cpuFigures(measured.load.cpu),
    peak_rss_mib: measured.peakRssMiB,
    transfers: measured.load.ok,
    non_2xx: measured.load.non2xx,
    verify: measured.report.ok ? 'clean' : 'FAILED',
  };
}

import { combineCpu, cpuFigures, type CpuPerUnit } from './cpu.js';
import type { LoadResult } from './load.js';
import { combineLoads, runLoad } from './load.js';
import { startServer, withServerLog } from './server.js';
import { seedWallets, targetEnv, verify, type Target } from './setup.js';
import { benchEnv, durationS, roundsDefault } from './settings.js';
import { transferRequests } from '../scenarios/transfers.js';

export interface TransferLoadOptions {
  connections: number;
  walletCount: number;
  /** Every transfer credits the first wallet (the hot-account scenario). */
  hot?: boolean;
  /** Runs before every measurement, the anchor's included (the PostgreSQL scenarios checkpoint here). */
  beforeEach?: () => Promise<void>;
  /**
   * The anchor, measured in turn with our own load: each round runs it (the server idles,
   * started and warm) and then our load, so that both see the machine in the same state.
   */
  anchor?: () => Promise<AnchorRun>;
}

/** One run of an anchor: its rate, and its CPU per unit of work over `units` units. */
export interface AnchorRun {
  perSecond: number;
  units: number;
  seconds: number;
  cpu: CpuPerUnit | undefined;
}

export interface TransferLoad {
  /** Our load, all rounds together. */
  load: LoadResult;
  /** The anchor, all rounds together (its mean rate: every round runs it for the same time). */
  anchor: AnchorRun | undefined;
  /** Each round's own figures, to show how far the machine drifted between them. */
  rounds: { ours: number; anchor: number }[];
  peakRssMiB: number;
  report: Awaited<ReturnType<typeof verify>>;
}

/**
 * The ledger scenarios' own side: seed funded wallets, start the server on them, run the
 * internal-transfer load (in rounds with the anchor, when there is one), stop the server, and
 * fail unless `ledger verify` is clean and every response was a 2xx.
 *
 * Why rounds: this machine's speed drifts by a fifth or more from one minute to the next, for
 * pgbench as much as for us, so an anchor measured once before our load can be measured on a
 * faster or slower machine than ours. Alternating them and comparing the totals cancels most of it.
 */
export async function measureTransferLoad(target: Target, options: TransferLoadOptions): Promise<TransferLoad> {
  const seeded = await seedWallets(target, options.walletCount, 1_000_000_00n);
  // Rounds of anchor-then-ours (BENCH_ROUNDS); without an anchor, one run.
  const roundCount = options.anchor ? Math.max(1, roundsDefault) : 1;
  const server = await startServer({ ...benchEnv, ...targetEnv(target) });
  const loads: LoadResult[] = [];
  const anchors: AnchorRun[] = [];
  let load: LoadResult;
  try {
    for (let round = 0; round < roundCount; round++) {
      if (options.anchor) {
        await options.beforeEach?.();
        anchors.push(await options.anchor());
      }
      await options.beforeEach?.();
      loads.push(
        await runLoad({
          url: server.url,
          connections: options.connections,
          durationS,
          // The server stays up between rounds: only the first needs warming.
          ...(round > 0 ? { warmupS: 0 } : {}),
          headers: { authorization: seeded.apiKey },
          next: transferRequests(seeded.wallets, options.hot ? seeded.wallets[0] : undefined),
          serverPid: server.pid,
        }),
      );
    }
    load = combineLoads(loads);
  } catch (error) {
    throw withServerLog(error, server);
  } finally {
    await server.stop();
  }
  const report = await verify(target);
  if (!report.ok) throw new Error(`ledger verify failed after the run: ${JSON.stringify(report.checks.filter((check) => check.violationCount > 0))}`);
  if (load.non2xx > 0 || load.errors > 0) {
    throw new Error(`unexpected responses: ${JSON.stringify(load.statusCounts)}, errors ${load.errors}\nserver log (last lines):\n${server.logTail().split('\n').slice(-20).join('\n')}`);
  }
  const anchor: AnchorRun | undefined =
    anchors.length === 0
      ? undefined
      : {
          perSecond: anchors.reduce((sum, run) => sum + run.perSecond, 0) / anchors.length,
          units: anchors.reduce((sum, run) => sum + run.units, 0),
          seconds: anchors.reduce((sum, run) => sum + run.seconds, 0),
          cpu: combineCpu(anchors),
        };
  const rounds = loads.map((run, index) => ({ ours: run.okPerSecond, anchor: anchors[index]?.perSecond ?? Number.NaN }));
  return { load, anchor, rounds, peakRssMiB: server.peakRssMiB(), report };
}

/** The figures a scenario with a measured-in-turn anchor prints after the CPU ones: each round's ratio. */
export function roundFigures(measured: TransferLoad): Record<string, string> {
  if (measured.rounds.length < 2) return {};
  return { round_ratios: measured.rounds.map((round) => (round.ours / round.anchor).toFixed(3)).join('/') };
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

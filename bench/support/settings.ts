import os from 'node:os';

/** Seconds each measurement runs (the issue asks for at least 20). */
export const durationS = Number(process.env.BENCH_DURATION_S ?? 20);

/** Seconds of load before each measured HTTP run, not counted (BENCH_WARMUP_S; 0 turns it off). */
export const warmupDefaultS = Number(process.env.BENCH_WARMUP_S ?? 10);

/**
 * Rounds of anchor-then-ours for the scenarios whose anchor is pgbench (BENCH_ROUNDS): the ratio
 * is taken over all rounds together, so that the machine's drift weighs on both sides alike.
 */
export const roundsDefault = Number(process.env.BENCH_ROUNDS ?? 3);

/** Server settings for every scenario: no rate limit in the way, quiet logs, no background workers. */
export const benchEnv: Record<string, string> = {
  RATE_LIMIT_PER_MINUTE: '10000000',
  LOG_LEVEL: 'warn',
  DB_POOL_MAX: process.env.BENCH_DB_POOL_MAX ?? '20',
  ...(process.env.BENCH_SERVER_ENV ? (JSON.parse(process.env.BENCH_SERVER_ENV) as Record<string, string>) : {}),
};

export function describeMachine() {
  const cpus = os.cpus();
  return { cpus: cpus.length, cpuModel: cpus[0]?.model ?? 'unknown', memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}` };
}

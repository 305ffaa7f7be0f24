import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Scenario, ScenarioResult } from '../lib.js';
import { describeMachine } from '../support/settings.js';
import { freePort } from '../../test/support/free-port.js';
import { packageRoot } from '../../src/paths.js';

/** The targets of issue 26: time from `npm start` to /health/ready answering 200. */
const firstStartTargetS = 8;
const restartTargetS = 2;
/** Fresh data folders measured (BENCH_START_RUNS); each gets one first start and two restarts. */
const runs = Number(process.env.BENCH_START_RUNS ?? 3);
const restartsPerRun = 2;
/** The command measured (BENCH_START_COMMAND), run in the package folder by a shell. */
const command = process.env.BENCH_START_COMMAND ?? 'npm start';

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/**
 * Starts the command on a data folder, measures until GET /health/ready answers 200, then sends
 * SIGTERM to the command (as a process manager would) and waits for it and the server to exit.
 */
async function timeOneStart(dataDir: string): Promise<{ readyS: number; reportedS: number | undefined }> {
  const port = await freePort();
  const startedMs = performance.now();
  const child = spawn('sh', ['-c', `exec ${command}`], {
    cwd: packageRoot,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: '', OPENBAAS_API_KEY: '', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} exited before it was ready:\n${output}`);
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then((response) => response.status === 200, () => false);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const readyS = (performance.now() - startedMs) / 1000;
  child.kill('SIGTERM');
  await exited;
  // The server's own figure (from the start of its process), when it prints one.
  const reported = /ready in (\d+\.\d) s/.exec(output)?.[1];
  return { readyS, reportedS: reported === undefined ? undefined : Number(reported) };
}

/**
 * `npm start` on the embedded database: a first start on an empty data folder (creating the
 * database, applying every migration, creating the sandbox client) and restarts on the same
 * folder. No warm-up: a start is a cold process by nature. dist/ should be current before the run
 * (`npm start` once, or `npm run build`); a build is measured only if the sources changed.
 */
export const start: Scenario = {
  name: 'start',
  description: `${command} on the embedded database until /health/ready: ${runs} first starts on fresh data folders, ${runs * restartsPerRun} restarts; anchors: the targets (${firstStartTargetS} s, ${restartTargetS} s)`,
  async run(): Promise<ScenarioResult> {
    const firstStarts: number[] = [];
    const restarts: number[] = [];
    const reported: { first: number[]; restart: number[] } = { first: [], restart: [] };
    for (let run = 0; run < runs; run++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-bench-start-'));
      try {
        const first = await timeOneStart(dataDir);
        firstStarts.push(first.readyS);
        if (first.reportedS !== undefined) reported.first.push(first.reportedS);
        for (let restart = 0; restart < restartsPerRun; restart++) {
          const again = await timeOneStart(dataDir);
          restarts.push(again.readyS);
          if (again.reportedS !== undefined) reported.restart.push(again.reportedS);
        }
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
    const firstMedianS = median(firstStarts);
    const restartMedianS = median(restarts);
    return {
      scenario: 'start',
      // Within both targets when 1 or more: the worse of the two ratios.
      ratio: Math.min(firstStartTargetS / firstMedianS, restartTargetS / restartMedianS),
      figures: {
        first_start_s: firstMedianS,
        first_start_max_s: Math.max(...firstStarts),
        restart_s: restartMedianS,
        restart_max_s: Math.max(...restarts),
        first_start_target_s: firstStartTargetS,
        restart_target_s: restartTargetS,
      },
      extra: { command, firstStarts, restarts, reportedByServer: reported, machine: describeMachine() },
    };
  },
};
